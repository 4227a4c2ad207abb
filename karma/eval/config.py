"""The evaluation run's settings: one pydantic model, defaults in one place.

Fields are grouped by what a change to them means for a run directory:

* identity fields (data, pipeline, backend, retriever, graph setting, prompt and decoding settings)
  decide the answers; resuming a run with a different value is refused;
* selection fields (types, videos, limit) only choose which questions to answer; a rerun may widen
  or narrow them, and results always cover every record in the run directory;
* execution fields (batch size, concurrency, cache, progress) change speed, never answers;
* path fields (the data folder, a given graph file) say where the content is, not what it is: the
  content is compared instead (config.json ``hashes.data`` and each graph's hash), so a run folder
  resumes on a machine where the data sit at another path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from karma.core.errors import InputError
from karma.eval.records import Arm
from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE
from karma.tasks.karma_mv.options import ARMS_OF_CKG, KarmaMvFields, KarmaMvOptions
from pipelines.assembly import GenerationSettings

GraphMode = Literal["folds", "whole_corpus", "given"]

SELECTION_FIELDS: frozenset[str] = frozenset({"types", "videos", "limit", "limit_order", "shard"})
# backend_options is compared through what it produces instead: the backend's ``settings`` (all that
# can change an answer: model, weights hash, context size, choice mode, ...) and ``model_id`` are hashed
# into config.json; a new server port, timeout or concurrency must not block a resume.
EXECUTION_FIELDS: frozenset[str] = frozenset(
    {"batch_size", "concurrency", "cache_path", "use_cache", "out", "backend_options", "log_prompts"}
    | {"max_error_rate", "allow_empty_graph", "model", "embed_device"}
)
PATH_FIELDS: frozenset[str] = frozenset({"data", "graph_path"})
"""Where the content is, not what it is: outside the identity (``karma.run.rundir.CONTENT_PINNED``
drops them from the identity older run folders stored). ``clips`` stays in it: no hash covers the clips."""


_OPTION_DEFAULTS = KarmaMvOptions().eval_fields()
"""The stored fields the default Karma-MV options give (arms from ``ckg``, graph_mode from the graph
options): the defaults of ``arms`` and ``graph_mode`` read from the options model, not written here."""


class EvalConfig(GenerationSettings, KarmaMvFields):
    """Everything ``karma eval`` needs to answer a set of questions in one or both arms.

    The generation settings (k, budget_tokens, template, max_tokens, temperature, seed, ...) come from
    ``pipelines.assembly.GenerationSettings``, Karma-MV's own settings (pipeline, clips, retriever,
    folds, fold_seed, types, videos, limit_order, allow_empty_graph) from
    ``karma.tasks.karma_mv.options.KarmaMvFields``; the command line builds them from
    ``KarmaMvOptions`` (``-T`` or its flag aliases, :meth:`from_options`)."""

    data: str
    """Folder (or single QA file) with ``<video>_qa.json`` and ``<video>_causal_features.json``."""
    lenient: bool = False
    """Keep every valid question of files with problems (reported) instead of refusing the data."""
    out: str
    """The run directory (config.json, samples.jsonl, baselines.jsonl, results.json)."""
    backend: str = "llamacpp"
    """Model backend name (llamacpp, openai, transformers, vllm)."""
    backend_options: dict[str, object] = Field(default_factory=dict)
    """Keyword options for the backend (model path, base_url, max_concurrency, ...)."""
    model: str | None = None
    """``--model``: a registry name (``karma models list``) or a weights path, resolved into the
    backend's model option (llamacpp ``model_path``, transformers ``model``). What it decides is
    compared on resume through the backend's model id (file name and sha256), so a model installed
    under another cache root resumes the same run; config.json records name, path and hash."""
    arms: list[Arm] = Field(default_factory=lambda: list(_OPTION_DEFAULTS["arms"]))
    """Which arms to run: ``on`` (graph block), ``off`` (no graph block), or both."""
    retriever_options: dict[str, Any] = Field(default_factory=dict)
    """``--retriever-opt``: the retriever's own settings (fields of its config model); part of the
    identity when set."""
    log_prompts: bool = False
    """Also write each request's full prompt to ``prompts.jsonl`` beside samples.jsonl."""
    graph_mode: GraphMode = _OPTION_DEFAULTS["graph_mode"]
    """folds: a video's graph is built without its fold; whole_corpus: one graph from every video
    (the published setting; retrieves statistics computed from the evaluated video); given: a graph
    file passed with ``graph_path``."""
    graph_path: str | None = None
    """A prebuilt graph (graph_mode given)."""
    limit: int | None = Field(default=None, ge=1)
    """Answer only N of the selected questions, chosen by ``limit_order`` (``karma.run.selection``).
    A run setting (every task takes it), not one of Karma-MV's options."""
    shard: str | None = None
    """``I/N``: answer only the videos of shard I of N (counted from 0; applied after ``limit``).
    Merge the N run directories with ``karma merge eval``."""
    bootstrap_resamples: int = Field(default=2000, ge=100)
    """Cluster-bootstrap resamples for the intervals."""
    bootstrap_seed: int = 0
    """Seed of the bootstrap."""
    batch_size: int | None = Field(default=None, ge=1)
    """Requests per backend call (default: 16 for vllm/transformers, 1 otherwise)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Backend calls in flight at once (default: the openai backend's max_concurrency, else 1)."""
    use_cache: bool = True
    """Read and write the response cache (temperature-0 requests only)."""
    cache_path: str | None = None
    """The response cache file (default: ``<karma cache dir>/responses.sqlite``)."""
    preset: str | None = None
    """A named settings bundle (``pipelines.presets``, e.g. ``paper``) that fills in backend options
    and generation settings not given explicitly; the stored config holds the resolved values."""
    max_error_rate: float = Field(default=DEFAULT_MAX_ERROR_RATE, ge=0.0, le=1.0)
    """Stop the run when more than this share of requests fail in the backend (``karma.run.hygiene``;
    1 never stops)."""
    embed_device: str | None = None
    """``--device``: the embedding model's device (auto, cpu, cuda, cuda:N); None: ``$KARMA_EMBED_DEVICE``,
    else auto (``retrieval.embed.embed_device``). An execution field: a resume may change it."""

    @model_validator(mode="after")
    def _check(self) -> EvalConfig:
        if not self.arms:
            raise ValueError("at least one arm (on or off) must be run")
        if len(set(self.arms)) != len(self.arms):
            raise ValueError(f"arms repeat: {self.arms}")
        if self.graph_mode == "given" and not self.graph_path:
            raise ValueError("graph_mode 'given' needs graph_path")
        if self.graph_path and self.graph_mode != "given":
            raise ValueError("graph_path is only used with graph_mode 'given'")
        if self.pipeline == "vlm" and not self.clips:
            raise ValueError("the vlm pipeline needs clips (a folder of per-video clip folders)")
        if self.embed_device is not None:
            from retrieval.embed import embed_device

            embed_device(self.embed_device)  # ValueError naming the accepted values
        if self.model:
            from pipelines.model_registry import model_backend_options

            self.backend_options = model_backend_options(self.model, self.backend, dict(self.backend_options))
        if self.preset:
            from pipelines.presets import apply_preset

            options, settings = apply_preset(
                self.preset, self.backend, dict(self.backend_options),
                {"max_tokens": self.max_tokens, "temperature": self.temperature}, set(self.model_fields_set),
            )  # fmt: skip
            self.backend_options = options
            self.max_tokens, self.temperature = settings["max_tokens"], settings["temperature"]
        return self

    def identity(self) -> dict[str, object]:
        """The fields that decide answers (compared on resume)."""
        dumped = self.model_dump(mode="json")
        if not dumped.get("retriever_options"):  # unset: the identity older run folders stored
            dumped.pop("retriever_options", None)
        return {k: v for k, v in dumped.items() if k not in SELECTION_FIELDS | EXECUTION_FIELDS | PATH_FIELDS}

    @property
    def out_dir(self) -> Path:
        return Path(self.out)

    @classmethod
    def from_options(cls, options: KarmaMvOptions, **run: Any) -> EvalConfig:
        """The config of a Karma-MV run: the task's options (``-T`` or their flag aliases) and the
        run's settings (``data``, ``out``, ``backend``, ...). One way in, so ``--k 5`` and ``-T k=5``
        give one config, one config.json and one run identity."""
        return cls(**run, **options.eval_fields())


def arms_from_ckg(ckg: str) -> list[Arm]:
    """``--ckg on|off|both`` -> the arms to run (both: on first, then off)."""
    try:
        return list(ARMS_OF_CKG[ckg])  # type: ignore[index]
    except KeyError:
        raise InputError(f"--ckg must be on, off or both, got {ckg!r}") from None
