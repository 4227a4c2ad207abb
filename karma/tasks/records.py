"""Task-level records: one multiple-choice item with 2-k options, and one answer to it in one arm.

These sit beside Karma-MV's :class:`karma.core.records.Question` (fixed a-d, Karma-MV types), which stays
unchanged; every registered task turns its published format into :class:`TaskItem` records.
"""

from __future__ import annotations

import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_OPTIONS = 26


class TaskItem(BaseModel):
    """One multiple-choice item of a registered task (letters are stored lower case)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    """Stable item id, unique within the task's data."""
    task: str
    """The registered task name (``wildscore``, ``harmonyset-mc``, ...)."""
    question: str = Field(min_length=1)
    """The question text as published."""
    options: dict[str, str]
    """Letter (``a``, ``b``, ...) -> option text; 2 to 26 consecutive letters from ``a``."""
    answer: str
    """The correct letter (lower case)."""
    category: str
    """The task's own top-level category (WildScore category, HarmonySet dimension, Karma-MV type)."""
    subcategory: str | None = None
    """Second-level category when the task has one (WildScore's 12 subcategories)."""
    cluster_id: str
    """Resampling unit of the bootstrap (the item itself, a video-music pair, a video)."""
    media: dict[str, str] = Field(default_factory=dict)
    """Media kind (``image``, ``video``) -> local file path."""
    source: str = ""
    """Where the item came from: ``file:row``."""
    meta: dict[str, str] = Field(default_factory=dict)
    """Other published fields kept as text (difficulty, preference, ...)."""

    @field_validator("options")
    @classmethod
    def _letters(cls, value: dict[str, str]) -> dict[str, str]:
        if not 2 <= len(value) <= MAX_OPTIONS:
            raise ValueError(f"need 2 to {MAX_OPTIONS} options, got {len(value)}")
        expected = list(string.ascii_lowercase[: len(value)])
        if sorted(value) != expected:
            raise ValueError(f"option letters must be {', '.join(expected)}; got {', '.join(sorted(value))}")
        empty = [k for k, v in value.items() if not str(v).strip()]
        if empty:
            raise ValueError(f"option text is empty for {', '.join(sorted(empty))}")
        return {k: value[k] for k in expected}

    @model_validator(mode="after")
    def _answer_in_options(self) -> TaskItem:
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options {', '.join(self.options)}")
        return self

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters in order."""
        return tuple(self.options)

    @property
    def k(self) -> int:
        """Number of options (chance = 1/k)."""
        return len(self.options)


class TaskSample(BaseModel):
    """One model answer to one task item in one arm (one line of a task run's ``samples.jsonl``)."""

    item_id: str
    """:attr:`TaskItem.id`."""
    task: str
    """The task name."""
    arm: str
    """The arm (``image`` / ``text_only``, ``av`` ...)."""
    category: str
    """The item's category."""
    subcategory: str | None = None
    """The item's subcategory."""
    cluster_id: str
    """Bootstrap resampling unit."""
    groups: dict[str, str] = Field(default_factory=dict)
    """Extra reporting splits from the item's published fields (WildScore ``preference``, ``difficulty``)."""
    k: int
    """Number of options of the item."""
    answer: str
    """Correct letter (lower case)."""
    prompt_hash: str = ""
    """Hash of the full request."""
    template_version: str = ""
    """Prompt template version."""
    raw_completion: str = ""
    """The model's text, unedited."""
    parsed_letter: str | None = None
    """Letter read from the completion; None when unparsed."""
    parse_status: Literal["ok", "fallback", "content", "none"] = "none"
    """How the letter was read; ``none`` scores as wrong and counts as a parse failure."""
    parse_rule: str = ""
    """The parsing rule that decided."""
    correct: bool
    """parsed_letter == answer."""
    error: str | None = None
    """Backend error, if any."""
    finish_reason: str | None = None
    """stop / length / error."""
    latency_s: float = 0.0
    """Model wall time of the request (0 for an answer from the response cache)."""
    cached: bool = False
    """Answered from the response cache (``karma.run.cache``; records written before it had none)."""

    @property
    def key(self) -> tuple[str, str]:
        """What makes a record unique in a run: (item id, arm)."""
        return (self.item_id, self.arm)
