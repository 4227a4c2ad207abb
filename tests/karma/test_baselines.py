"""Answer-bias baselines on hand-checked questions."""

from __future__ import annotations

from karma.core.records import Question
from karma.data.baselines import (
    baseline_accuracies,
    longest_option,
    most_frequent_letter,
    word_overlap_option,
)


def q(answer: str, options: dict[str, str], text: str = "How will the tempo change?") -> Question:
    return Question(type="predictive", question=text, options=options, answer=answer)


OPTS = {"a": "tempo rises", "b": "loudness falls sharply", "c": "key", "d": "mode flips"}


def test_longest_and_overlap_and_ties() -> None:
    assert longest_option(q("a", OPTS)) == "b"
    assert longest_option(q("a", {"a": "xx", "b": "yy", "c": "z", "d": "w"})) == "a"  # tie -> earliest
    assert word_overlap_option(q("a", OPTS)) == "a"  # shares "tempo"
    assert word_overlap_option(q("a", OPTS, text="Nothing in common?")) == "a"  # all zero -> earliest


def test_accuracies() -> None:
    questions = [q("b", OPTS), q("b", OPTS), q("a", OPTS), q("c", OPTS)]
    assert most_frequent_letter(questions) == "b"
    acc = baseline_accuracies(questions)
    assert acc == {"random": 0.25, "most_frequent_letter": 0.5, "longest_option": 0.5, "word_overlap": 0.25}
