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
from karma.eval.hygiene import DEFAULT_MAX_ERROR_RATE
from karma.eval.records import ARMS, Arm
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
"""Where the content is, not what it is: outside the identity (``karma.eval.rundir.CONTENT_PINNED``
drops them from the identity older run folders stored). ``clips`` stays in it: no hash covers the clips."""


class EvalConfig(GenerationSettings):
    """Everything ``karma eval`` needs to answer a set of questions in one or both arms (the generation
    settings -- k, budget_tokens, template, max_tokens, temperature, seed, ... -- come from
    ``pipelines.assembly.GenerationSettings``)."""

    data: str
    """Folder (or single QA file) with ``<video>_qa.json`` and ``<video>_causal_features.json``."""
    lenient: bool = False
    """Keep every valid question of files with problems (reported) instead of refusing the data."""
    out: str
    """The run directory (config.json, samples.jsonl, baselines.jsonl, results.json)."""
    pipeline: Literal["llm", "vlm"] = "llm"
    """llm: scene features as text; vlm: the past and current clips as video."""
    clips: str | None = None
    """VLM only: folder with one sub-folder of ``scene_NNN.mp4`` clips per video."""
    backend: str = "llamacpp"
    """Model backend name (llamacpp, openai, transformers, vllm)."""
    backend_options: dict[str, object] = Field(default_factory=dict)
    """Keyword options for the backend (model path, base_url, max_concurrency, ...)."""
    model: str | None = None
    """``--model``: a registry name (``karma models list``) or a weights path, resolved into the
    backend's model option (llamacpp ``model_path``, transformers ``model``). What it decides is
    compared on resume through the backend's model id (file name and sha256), so a model installed
    under another cache root resumes the same run; config.json records name, path and hash."""
    arms: list[Arm] = Field(default_factory=lambda: list(ARMS))
    """Which arms to run: ``on`` (graph block), ``off`` (no graph block), or both."""
    retriever: str = "hybrid"
    """Retriever name (hybrid, keyword, paths, none)."""
    retriever_options: dict[str, Any] = Field(default_factory=dict)
    """``--retriever-opt``: the retriever's own settings (fields of its config model); part of the
    identity when set."""
    log_prompts: bool = False
    """Also write each request's full prompt to ``prompts.jsonl`` beside samples.jsonl."""
    graph_mode: GraphMode = "folds"
    """folds: a video's graph is built without its fold; whole_corpus: one graph from every video
    (the published setting; retrieves statistics computed from the evaluated video); given: a graph
    file passed with ``graph_path``."""
    folds: int = Field(default=5, ge=2)
    """k of the k-fold split by video."""
    fold_seed: int = 0
    """Seed of the fold split."""
    graph_path: str | None = None
    """A prebuilt graph (graph_mode given)."""
    types: list[str] | None = None
    """Question types to answer (default: all)."""
    videos: list[str] | None = None
    """Video ids to answer (default: all)."""
    limit: int | None = Field(default=None, ge=1)
    """Answer only N of the selected questions, chosen by ``limit_order`` (``karma.eval.selection``)."""
    limit_order: Literal["spread", "first"] | None = None
    """``spread``: a seeded sample over videos and types; ``first``: the first N in the stable order
    (video, transition, question). None: ``spread`` for a new run folder, the folder's own order on
    resume (``first`` for folders from before this option)."""
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
    """Stop the run when more than this share of requests fail in the backend (``karma.eval.hygiene``;
    1 never stops)."""
    allow_empty_graph: bool = False
    """Run the graph-on arm even when its graph has no edges (refused by default)."""
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


def arms_from_ckg(ckg: str) -> list[Arm]:
    """``--ckg on|off|both`` -> the arms to run (both: on first, then off)."""
    table: dict[str, list[Arm]] = {"on": ["on"], "off": ["off"], "both": ["on", "off"]}
    try:
        return table[ckg]
    except KeyError:
        raise InputError(f"--ckg must be on, off or both, got {ckg!r}") from None
