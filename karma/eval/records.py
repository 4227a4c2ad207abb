"""What an evaluation run writes per answered question (one JSON line of ``samples.jsonl``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Arm = Literal["on", "off"]
"""``on``: the prompt carries the graph block; ``off``: the same prompt without it."""
ARMS: tuple[Arm, ...] = ("on", "off")


class SampleRecord(BaseModel):
    """One model answer to one question in one arm of the ablation."""

    question_id: str
    """``<video>/t<NNN>/q<M>``."""
    video_id: str
    """The video the question is about (the bootstrap's resampling unit)."""
    transition_id: str
    """``<video>/t<NNN>``."""
    question_type: str
    """evidential / predictive / counterfactual / descriptive."""
    arm: Arm
    """Graph block on or off."""
    fold: int | None = None
    """Index of the fold whose graph answered (None for the whole-corpus or a given graph)."""
    graph_hash: str | None = None
    """Content hash of the graph retrieval ran on (None with the graph off and no retrieval)."""
    prompt_hash: str
    """Hash of the full request the model saw (messages and decoding settings)."""
    template_version: str = ""
    """Prompt template version (its sha256 is in config.json)."""
    fact_ids: list[str] = Field(default_factory=list)
    """Ids of the retrieved facts shown in the prompt (empty with the graph off)."""
    answer: str
    """The correct letter."""
    raw_completion: str = ""
    """The model's text, unedited."""
    parsed_letter: str | None = None
    """The letter read from the completion; None when parsing decided nothing."""
    parse_status: Literal["ok", "fallback", "none"]
    """How the letter was read; ``none`` is scored as wrong and reported as a parse failure."""
    parse_rule: str = ""
    """The parsing rule that decided."""
    correct: bool
    """parsed_letter == answer (False when unparsed or on a backend error)."""
    error: str | None = None
    """Backend error for this request, if any."""
    finish_reason: str | None = None
    """stop / length / error, as the backend reported."""
    latency_s: float = 0.0
    """Model wall time for this request (0 for a cache hit)."""
    prompt_tokens: int | None = None
    """Prompt tokens, when the backend reports them."""
    completion_tokens: int | None = None
    """Generated tokens, when the backend reports them."""
    cached: bool = False
    """True when the completion came from the response cache."""

    @property
    def key(self) -> tuple[str, str]:
        """What makes a record unique in a run: (question id, arm)."""
        return (self.question_id, self.arm)


class BaselineRecord(BaseModel):
    """The no-model baselines' picks for one question (one JSON line of ``baselines.jsonl``)."""

    question_id: str
    """``<video>/t<NNN>/q<M>``."""
    video_id: str
    """The video (resampling unit)."""
    question_type: str
    """Question type."""
    answer: str
    """The correct letter."""
    picks: dict[str, list[str]]
    """Baseline name -> the letters it picked; several letters mean a tie, scored 1/len when the
    answer is among them (the expected accuracy of breaking the tie at random)."""

    def credit(self, baseline: str) -> float:
        """Expected accuracy of this baseline on this question."""
        letters = self.picks.get(baseline) or []
        return (1.0 / len(letters)) if self.answer in letters else 0.0
