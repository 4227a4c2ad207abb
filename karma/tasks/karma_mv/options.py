"""Karma-MV's own options (``karma eval -T KEY=VALUE``), declared once.

Two models, both here, so each setting is declared (type, default, docstring) in one place:

* :class:`KarmaMvFields` holds the settings the evaluator's ``EvalConfig`` stores under the same
  name (``EvalConfig`` inherits it, so config.json keeps its keys and a run folder resumes);
* :class:`KarmaMvOptions` is the task's options model (``KarmaMvTask.options_model``): those fields,
  the generation settings Karma-MV varies (defaults read from ``pipelines.settings``, the one place
  ``karma ask`` reads them from too), and the three the command line spells differently from the
  stored config (``ckg`` -> ``arms``, ``whole_corpus_graph`` / ``graph`` -> ``graph_mode`` /
  ``graph_path``). :meth:`KarmaMvOptions.eval_fields` turns it into ``EvalConfig`` keywords.

Each option's ``karma eval`` flag is an alias of it (:data:`FLAG_ALIASES`): ``--k 5`` and ``-T k=5``
build the same ``EvalConfig``; both with different values is refused (:func:`merge_spellings`).

The split: an option here is Karma-MV's (what is retrieved, how the graph is built, which questions
and how they are put to the model). The run's settings, taken by every task, stay ``karma eval``
flags without a ``-T`` spelling: data, out, lenient, backend, backend options, model, device,
retriever options (the retriever's own bag, like ``--backend-opt``), max tokens, temperature,
seed, preset, limit, shard, batch size, concurrency, cache, prompt log, bootstrap, error-rate stop,
executor and progress.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from karma.core.errors import InputError
from karma.tasks.options import TaskOptions, validate_options
from pipelines.settings import GENERATION_DEFAULTS, AnswerMode, GenerationSettings

TASK = "karma-mv"
Ckg = Literal["on", "off", "both"]
"""Which arms run: the graph block on, off, or both (the paired ablation)."""
ARMS_OF_CKG: dict[str, tuple[Literal["on", "off"], ...]] = {
    "on": ("on",),
    "off": ("off",),
    "both": ("on", "off"),
}
"""``ckg`` -> the arms ``EvalConfig.arms`` stores, in the order they run (on first)."""
FactLinks = GenerationSettings.model_fields["fact_links"].annotation
ScorePick = GenerationSettings.model_fields["score_pick"].annotation
AudioParts = GenerationSettings.model_fields["audio_parts"].annotation


def _split_text(value: Any) -> Any:
    """``a,b`` (text from ``-T``) or ``["a,b", "c"]`` (repeated flags) -> ``["a", "b", "c"]``; empty
    text -> None (no filter), as the flags read it."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        return parts or None
    if isinstance(value, list | tuple):
        return [part.strip() for item in value for part in str(item).split(",") if part.strip()]
    return value


class KarmaMvFields(BaseModel):
    """The Karma-MV settings ``EvalConfig`` stores under the option's own name (defaults here only)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    pipeline: Literal["llm", "vlm"] = "llm"
    """llm: scene features as text; vlm: the past and current clips as video."""
    clips: str | None = None
    """VLM only: folder with one sub-folder of ``scene_NNN.mp4`` clips per video."""
    retriever: str = "hybrid"
    """Retriever name (hybrid, keyword, paths, none; `karma retrieve --help`)."""
    folds: int = Field(default=5, ge=2)
    """k of the k-fold split by video: each video's graph is built without its fold."""
    fold_seed: int = 0
    """Seed of the split of the videos into folds."""
    types: list[str] | None = None
    """Question types to answer, comma-separated (default: all)."""
    videos: list[str] | None = None
    """Video ids to answer, comma-separated (default: all)."""
    limit_order: Literal["spread", "first"] | None = None
    """Which N questions ``--limit`` keeps: ``spread`` (a seeded sample over videos and types) or
    ``first`` (the first N in the order video, transition, question). Unset: ``spread`` for a new run
    folder, the folder's own order on resume."""
    allow_empty_graph: bool = False
    """Run the graph-on arm even on a graph without edges (refused by default)."""

    @field_validator("types", "videos", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return _split_text(value)


class KarmaMvOptions(TaskOptions, KarmaMvFields):
    """Karma-MV's options: ``karma eval -T KEY=VALUE`` or the flag of the same name (``--k``)."""

    ckg: Ckg = "both"
    """Graph block: on, off, or both (the paired ablation)."""
    whole_corpus_graph: bool = False
    """One graph from every video (the published, leaky setting) instead of the k-fold graphs."""
    graph: str | None = None
    """Use this prebuilt graph (folder or file) for every video."""
    k: int = Field(default=GENERATION_DEFAULTS.k, ge=1)
    """Facts retrieved per question."""
    budget_tokens: int = Field(default=GENERATION_DEFAULTS.budget_tokens, ge=0)
    """Token budget of the graph block."""
    fact_links: FactLinks = GENERATION_DEFAULTS.fact_links  # type: ignore[valid-type]
    """none (plain fact lines) or options (each fact line names the option it speaks of); graph-on
    arm only."""
    concept_facts: bool = GENERATION_DEFAULTS.concept_facts
    """Show concept links ('tempo decreases is a tempo') as facts; by default they are skipped."""
    template: str | None = GENERATION_DEFAULTS.template
    """Prompt template name or YAML path (unset: the pipeline's packaged template)."""
    constrain_choices: bool = GENERATION_DEFAULTS.constrain_choices
    """Constrain decoding to the letters a-d (both arms)."""
    answer_mode: AnswerMode | None = None
    """generate, letter or loglik (same in both arms); unset: loglik, or generate with
    constrain_choices, a preset or a server backend (``karma.cli.default_model.command_answer_mode``)."""
    score_pick: ScorePick = GENERATION_DEFAULTS.score_pick  # type: ignore[valid-type]
    """Scored modes: which pick answers: acc_norm, acc or mutual_info."""
    audio_parts: AudioParts = GENERATION_DEFAULTS.audio_parts  # type: ignore[valid-type]
    """VLM: audio beside each clip: wav (derived), clip (the mp4 itself) or none."""

    @field_validator("clips", "graph", mode="before")
    @classmethod
    def _path_text(cls, value: Any) -> Any:
        """A path as the flag stores it (``str(Path(...))``: ``dir/`` and ``dir`` are one setting)."""
        return str(Path(value)) if isinstance(value, str | Path) and str(value) else value

    @field_validator("graph", mode="after")
    @classmethod
    def _one_graph_source(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("whole_corpus_graph"):
            raise ValueError(
                "whole_corpus_graph (--whole-corpus-graph) and graph (--graph) exclude each other"
            )
        return value

    def eval_fields(self) -> dict[str, Any]:
        """The ``EvalConfig`` keywords these options set (answer_mode only when given: the command
        resolves an unset one, ``karma.cli.default_model.command_answer_mode``)."""
        fields = self.model_dump(exclude={"ckg", "whole_corpus_graph", "graph", "answer_mode"})
        arms = list(ARMS_OF_CKG[self.ckg])
        mode = "given" if self.graph is not None else "whole_corpus" if self.whole_corpus_graph else "folds"
        fields.update(arms=arms, graph_mode=mode, graph_path=self.graph)
        if self.answer_mode is not None:
            fields["answer_mode"] = self.answer_mode
        return fields


FLAG_ALIASES: dict[str, str] = {name: "--" + name.replace("_", "-") for name in KarmaMvOptions.model_fields}
"""Option -> its ``karma eval`` flag (``budget_tokens`` -> ``--budget-tokens``): one rule, no table."""


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def merge_spellings(flags: dict[str, Any], text: dict[str, str]) -> KarmaMvOptions:
    """The options from the flags given (``{"k": 5}``) and the ``-T`` items (``{"k": "5"}``).

    An unknown ``-T`` key is an InputError naming it and the valid ones; a bad value names the
    option; an option given both ways with different values (compared once typed: ``--k 5 -T k=5``
    agree) is an InputError in one line naming both spellings.
    """
    from_text = validate_options(TASK, KarmaMvOptions, text)
    from_flags = validate_options(TASK, KarmaMvOptions, flags)
    for name in sorted(set(flags) & set(text)):
        if getattr(from_flags, name) != getattr(from_text, name):
            raise InputError(
                f"{FLAG_ALIASES[name]} {_shown(getattr(from_flags, name))} and -T {name}={text[name]} "
                f"give option {name} two values; give it once"
            )
    return validate_options(TASK, KarmaMvOptions, {**text, **flags})
