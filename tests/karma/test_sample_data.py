"""data/sample is what scripts/make_sample_data.py writes, and no question can be answered by its form.

The sample is the first data a person runs karma on (``make demo`` asks one of its questions), so two
things must hold: the committed files are exactly the generator's output (a hand edit would leave the
generator's rule set, and what the docs say of it, behind), and no answer-bias baseline (most frequent
letter, longest option, word overlap) scores above 30 % on any question type (issue 28, item 5;
issue 39).
"""

from __future__ import annotations

import importlib
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from karma.data import load_dataset
from karma.data.baselines import baseline_accuracies

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
sys.path.insert(0, str(ROOT / "scripts"))


def test_sample_files_are_the_generators_output(tmp_path: Path) -> None:
    make_sample_data = importlib.import_module("make_sample_data")
    make_sample_data.main(tmp_path)
    written = sorted(path.name for path in tmp_path.iterdir())
    committed = sorted(path.name for path in SAMPLE.glob("*.json"))
    assert written == committed and len(written) == 10
    for name in written:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def _questions_by_type() -> dict[str, list]:  # type: ignore[type-arg]
    by_type: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for _, question in load_dataset(SAMPLE).iter_questions():
        by_type[str(getattr(question.type, "value", question.type))].append(question)
    return by_type


@pytest.mark.parametrize("qtype", ["evidential", "predictive", "counterfactual", "descriptive"])
def test_no_answer_bias_baseline_above_30_percent(qtype: str) -> None:
    questions = _questions_by_type()[qtype]
    assert questions, qtype
    accuracies = baseline_accuracies(questions)
    above = {name: round(acc, 3) for name, acc in accuracies.items() if acc > 0.30}
    assert not above, f"{qtype}: {above}"
    assert set(accuracies) >= {"most_frequent_letter", "longest_option", "word_overlap"}
