"""Answer-bias baselines computed from the questions alone (no model, no video, no graph).

They tell a user how much can be scored without looking: a benchmark whose answers can be guessed
from the letter distribution or the option wording is measuring bias, not reasoning.
Ties are broken by the earliest letter so every baseline is deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from karma.core.records import OPTION_LETTERS, Question

_WORD = re.compile(r"[a-z0-9]+")
# Words too common to say anything about which option matches the question.
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "what",
        "which",
        "how",
        "why",
        "would",
        "will",
        "most",
        "likely",
        "do",
        "does",
        "did",
        "as",
        "at",
        "by",
        "for",
        "from",
        "with",
        "if",
        "than",
        "then",
        "into",
        "when",
        "while",
    ]
)


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` that the word-overlap baseline compares (stop words left out)."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


_words = content_words


def most_frequent_letter(questions: Iterable[Question]) -> str:
    """The answer letter that is correct most often (ties: earliest letter)."""
    counts = Counter(q.answer for q in questions)
    return max(OPTION_LETTERS, key=lambda letter: (counts.get(letter, 0), -OPTION_LETTERS.index(letter)))


def longest_option(question: Question) -> str:
    """The letter of the longest option text (ties: earliest letter)."""
    return max(
        OPTION_LETTERS, key=lambda letter: (len(question.options[letter]), -OPTION_LETTERS.index(letter))
    )


def word_overlap_option(question: Question) -> str:
    """The letter whose option shares most content words with the question (ties: earliest letter)."""
    asked = _words(question.question)
    return max(
        OPTION_LETTERS,
        key=lambda letter: (len(asked & _words(question.options[letter])), -OPTION_LETTERS.index(letter)),
    )


def baseline_predictions(
    questions: list[Question], frequent_letter: str | None = None
) -> dict[str, list[str]]:
    """Predicted letters per baseline, aligned with ``questions``.

    ``frequent_letter`` lets an evaluation fix the letter from training data; by default it is taken
    from ``questions`` themselves (an upper bound on what that bias can give).
    """
    letter = frequent_letter or most_frequent_letter(questions)
    return {
        "most_frequent_letter": [letter] * len(questions),
        "longest_option": [longest_option(q) for q in questions],
        "word_overlap": [word_overlap_option(q) for q in questions],
    }


def baseline_accuracies(questions: list[Question]) -> dict[str, float]:
    """Accuracy of each answer-bias baseline on ``questions`` (plus random chance)."""
    if not questions:
        return {"random": 0.25, "most_frequent_letter": 0.0, "longest_option": 0.0, "word_overlap": 0.0}
    result = {"random": 0.25}
    for name, predictions in baseline_predictions(questions).items():
        result[name] = sum(p == q.answer for p, q in zip(predictions, questions, strict=True)) / len(
            questions
        )
    return result
