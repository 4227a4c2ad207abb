"""What an evaluation run writes per answered question (one JSON line of ``samples.jsonl``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from pipelines.answering import ModelAnswer

Arm = Literal["on", "off"]
"""``on``: the prompt carries the graph block; ``off``: the same prompt without it."""
ARMS: tuple[Arm, ...] = ("on", "off")


class SampleRecord(ModelAnswer):
    """One model answer to one question in one arm of the ablation: the answer record every pipeline
    gives (``pipelines.answering.ModelAnswer``) plus what the evaluation adds."""

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
    answer: str
    """The correct letter."""
    parse_status: Literal["ok", "fallback", "content", "scored", "none"]
    """How the letter was read (see ``pipelines.parsing``); ``none`` is scored as wrong and reported as
    a parse failure; ``scored``: the answer mode scored the options instead of parsing a reply."""
    correct: bool
    """parsed_letter == answer (False when unparsed or on a backend error)."""
    finish_reason: str | None = None
    """stop / length / error, as the backend reported."""
    cached: bool = False
    """True when the completion came from the response cache."""
    scoring: dict[str, object] | None = None
    """Scored answer modes only: ``answer_mode``, per-letter ``scores`` (logprob, tokens, chars) and the
    ``pick_acc`` / ``pick_acc_norm`` letters (``parsed_letter`` is the acc_norm pick)."""
    linked_lines: int | None = None
    """Graph-on arm with ``--fact-links options``: how many of the prompt's fact lines name an option
    (0: the links linked nothing, the prompt holds plain lines); None otherwise."""

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
