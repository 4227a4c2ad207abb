"""The generation settings every pipeline shares, declared once (defaults here only).

``karma ask``, ``karma eval`` and the CLI read their option defaults from :data:`GENERATION_DEFAULTS`;
the pipelines (``pipelines.llm``, ``pipelines.vlm``) read their keyword defaults from it, so this module
sits below both them and ``pipelines.assembly``, which builds them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

AnswerMode = Literal["generate", "letter", "loglik"]
"""generate: parse the reply; letter / loglik: score each option's letter / text (``pipelines.loglik``)."""


class GenerationSettings(BaseModel):
    """What shapes the request a model sees, identical in both arms of the ablation (defaults here only)."""

    k: int = Field(default=10, ge=0)
    """Facts retrieved per question."""
    budget_tokens: int = Field(default=400, ge=0)
    """Token budget of the graph block."""
    fact_style: str = "lines"
    """How facts are serialized (lines or table)."""
    fact_links: Literal["none", "options"] = "none"
    """options: each fact line names the question option it speaks of, as the graph reader reads the
    options (embedding model); none: plain fact lines. Only the graph-on arm has a block."""
    concept_facts: bool = False
    """Show concept links (``instance_of``: "tempo decreases is a tempo") as facts; off: they are
    skipped and the next-ranked facts take their places (``pipelines.answering.retrieve_without``)."""
    template: str | None = None
    """Prompt template name or YAML path (None: the pipeline's packaged template)."""
    max_tokens: int = Field(default=32, ge=1)
    """Output budget (identical in both arms)."""
    temperature: float = Field(default=0.0, ge=0.0)
    """Decoding temperature; only 0 is cached."""
    seed: int = 0
    """Decoding seed."""
    constrain_choices: bool = False
    """Ask the backend for constrained choice over the letters (identical in both arms)."""
    answer_mode: AnswerMode = "generate"
    """generate: parse the reply; letter / loglik: score each option's letter / text as the reply."""
    score_pick: Literal["acc_norm", "acc", "mutual_info"] = "acc_norm"
    """Scored modes: which pick answers (acc and acc_norm are always recorded): acc_norm (log-likelihood per
    character), acc (sum) or mutual_info (log-likelihood minus the option's log-likelihood without the
    question, lm-eval's acc_mutual_info; ``pipelines.loglik``)."""
    audio_parts: Literal["wav", "clip", "none"] = "wav"
    """VLM: the audio part beside each clip's video part: a derived wav, the clip file, or none."""


GENERATION_DEFAULTS = GenerationSettings()
"""The default generation settings (the CLI's option defaults read from here)."""
