"""Dataset statistics: sizes, type and answer-letter distributions, answer-bias baselines."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from karma.core.records import OPTION_LETTERS, QuestionType
from karma.data.baselines import baseline_accuracies
from karma.data.dataset import Dataset


class DatasetStats(BaseModel):
    """Summary numbers of a loaded dataset."""

    videos: int
    """Videos with at least one valid transition."""
    transitions: int
    """Valid transitions."""
    questions: int
    """Valid questions."""
    questions_per_type: dict[str, int]
    """Question count per normalized type."""
    answer_letters: dict[str, int]
    """How often each letter is the correct answer."""
    baselines: dict[str, float]
    """Accuracy of the answer-bias baselines over all questions."""
    baselines_per_type: dict[str, dict[str, float]]
    """The same per question type."""


def dataset_stats(dataset: Dataset) -> DatasetStats:
    questions = [q for _, q in dataset.iter_questions()]
    per_type = Counter(q.type.value for q in questions)
    letters = Counter(q.answer for q in questions)
    by_type = {
        qtype.value: baseline_accuracies([q for q in questions if q.type == qtype])
        for qtype in QuestionType
        if per_type.get(qtype.value)
    }
    return DatasetStats(
        videos=len({t.video_id for t in dataset.transitions}),
        transitions=len(dataset.transitions),
        questions=len(questions),
        questions_per_type={qtype.value: per_type.get(qtype.value, 0) for qtype in QuestionType},
        answer_letters={letter: letters.get(letter, 0) for letter in OPTION_LETTERS},
        baselines=baseline_accuracies(questions),
        baselines_per_type=by_type,
    )
