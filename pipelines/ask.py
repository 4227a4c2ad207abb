"""Answer one question end to end: load it, retrieve facts, prompt a model, parse the answer.

This is the library behind ``karma ask``. With no settings it runs the embedded default offline:
the first question of ``data/sample``, a causal graph built on the fly from the other sample videos
(so the asked video's own answers cannot leak into the graph), the default retriever, and SmolLM2
through in-process llama.cpp.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from karma.core.errors import InputError, RunError
from karma.core.paths import cache_dir, project_file, project_root
from karma.core.records import Question, SceneRef, Transition, VideoFeatures, normalize_question_type
from pipelines import assembly
from pipelines.answering import AnswerRecord, PreparedPrompt
from pipelines.assembly import GenerationSettings

SAMPLE_DIR = project_file("data", "sample") if project_root() is not None else Path("data/sample")
"""The synthetic sample data shipped with the source checkout (``karma.core.paths.project_file``)."""
SAMPLE_GRAPH_DIR = SAMPLE_DIR / "graph"
"""A prebuilt graph for the sample data, used when present."""
DEFAULT_SAMPLE_QA = "synthVid001_qa.json"


class AskConfig(GenerationSettings):
    """Everything ``karma ask`` can be told; the defaults are the embedded offline setup (the generation
    settings -- k, budget_tokens, template, max_tokens, ... -- come from ``GenerationSettings``)."""

    qa_file: Path | None = None
    """QA file to take the question from (default: data/sample's first video)."""
    transition: int = 0
    """Transition index in the QA file (0-based)."""
    question_index: int = 0
    """Question index within the transition (0-based)."""
    question_text: str | None = None
    """An inline question (then ``options`` are required)."""
    options: dict[str, str] = Field(default_factory=dict)
    """Inline options a-d."""
    question_type: str = "evidential"
    """Inline question type (any published spelling)."""
    video_id: str | None = None
    """Inline: the video id (default: from the features file name, or the clip folder)."""
    past_scene: str = "scene_001"
    """Inline: the past scene."""
    current_scene: str | None = None
    """Inline: the current scene (default: the scene after ``past_scene``)."""
    features_file: Path | None = None
    """Scene features file (default: the QA file's sibling ``<video>_causal_features.json``)."""
    clips_dir: Path | None = None
    """Clip folder ``<clips>/<video_id>/scene_NNN.mp4`` (VLM pipeline)."""
    pipeline: Literal["llm", "vlm"] = "llm"
    """Which pipeline answers."""
    use_graph: bool = True
    """Causal-knowledge block on (default) or off (``--no-ckg``)."""
    graph_dir: Path | None = None
    """Graph to retrieve from; default: data/sample/graph if present, else built on the fly."""
    min_support: int | None = None
    """On-the-fly graphs: the builder's ``min_support``; None = 2 for small data (< 50 transitions,
    where the builder's default of 5 keeps no causal edge), else the builder's default."""
    retriever: str = "hybrid"
    """Retriever name (``hybrid``, ``keyword``, ``paths``, ``none``...)."""
    retriever_options: dict[str, Any] = Field(default_factory=dict)
    """``--retriever-opt``: the retriever's own settings (fields of its config model)."""
    embed_device: str | None = None
    """``--device``: the retrieval embedding model's device (auto, cpu, cuda, cuda:N); None:
    ``$KARMA_EMBED_DEVICE``, else auto (``retrieval.embed.embed_device``)."""
    backend: str = "llamacpp"
    """Backend name."""
    backend_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options for the backend constructor."""
    model: str | None = None
    """``--model``: a registry name or weights path, resolved into ``backend_options``
    (``pipelines.model_registry.model_backend_options``)."""
    predictive_audio: Literal["silence", "remove"] = "silence"
    """VLM: what the current clip's audio becomes for predictive questions."""
    cache_dir: Path | None = None
    """Cache folder for built graphs and derived clips (default: karma's cache root,
    ``karma.core.paths.cache_root``, shared with ``karma eval``)."""


class AskResult(BaseModel):
    """What ``karma ask`` prints."""

    transition: Transition
    """The transition asked about."""
    question: Question
    """The question (its answer is known when it came from a QA file)."""
    answer_known: bool
    """True when the question came from a QA file (so ``question.answer`` is real)."""
    prepared: PreparedPrompt
    """The exact prompt and the facts shown."""
    answer: AnswerRecord
    """The model's answer and parse status."""
    graph_source: str
    """Where the graph came from (path, prebuilt, built on the fly, or none)."""
    timings_s: dict[str, float]
    """Seconds per stage: data, graph, retriever, backend load, generate, total."""
    fact_links: str = "none"
    """``--fact-links``: ``options`` when fact lines were to name the option they speak of."""

    @property
    def fact_lines(self) -> list[Any]:
        """The prompt's fact lines with the facts each stands for (``pipelines.fact_lines``)."""
        from pipelines.fact_lines import fact_lines

        return fact_lines(self.prepared.graph_block, self.prepared.facts)


class AskError(InputError):
    """A user error in the ask settings (missing file, bad option)."""


def _features_for(qa_file: Path, video_id: str) -> Path | None:
    candidate = qa_file.with_name(f"{video_id}_causal_features.json")
    return candidate if candidate.is_file() else None


def load_features(path: Path | None) -> VideoFeatures | None:
    from karma.data import load_features_file

    if path is None:
        return None
    if not path.is_file():
        raise AskError(f"features file not found: {path}")
    result = load_features_file(path)
    if result.features is None:
        detail = "; ".join(str(p) for p in result.problems) or "unreadable"
        raise AskError(f"features file {path}: {detail}")
    return result.features


def question_from_file(config: AskConfig) -> tuple[Transition, Question, VideoFeatures | None]:
    from karma.data import load_qa_file

    qa_file = config.qa_file or SAMPLE_DIR / DEFAULT_SAMPLE_QA
    if not qa_file.is_file():
        raise AskError(f"QA file not found: {qa_file}")
    result = load_qa_file(qa_file)
    by_index = {t.index: t for t in result.transitions}
    transition = by_index.get(config.transition)
    if transition is None:
        relevant = [p for p in result.problems if p.severity == "error"]
        if result.transitions:  # the file is readable: only this transition's problems matter
            relevant = [p for p in relevant if p.transition == config.transition]
        problems = [str(p) for p in relevant[:5]]
        detail = f": {'; '.join(problems)}" if problems else ""
        raise AskError(
            f"{qa_file}: no valid transition {config.transition} "
            f"(valid: {sorted(by_index) or 'none'}){detail}"
        )
    by_q = {q.index: q for q in transition.questions}
    question = by_q.get(config.question_index)
    if question is None:
        raise AskError(
            f"{qa_file}: transition {config.transition} has no valid question {config.question_index} "
            f"(valid: {sorted(by_q)})"
        )
    features_file = config.features_file or _features_for(qa_file, transition.video_id)
    return transition, question, load_features(features_file)


def _next_scene(name: str) -> str:
    stem = name.removesuffix(".mp4")
    number = stem.removeprefix("scene_")
    if not number.isdigit():
        raise AskError(f"scene names look like scene_NNN, got {name!r}")
    return f"scene_{int(number) + 1:0{len(number)}d}"


def inline_question(config: AskConfig) -> tuple[Transition, Question, VideoFeatures | None]:
    if sorted(config.options) != ["a", "b", "c", "d"]:
        raise AskError(
            f"an inline question needs --option a=... b=... c=... d=...; got {sorted(config.options)}"
        )
    qtype = normalize_question_type(config.question_type)
    if qtype is None:
        raise AskError(
            f"unknown question type {config.question_type!r} (evidential, predictive, counterfactual)"
        )
    features = load_features(config.features_file)
    video_id = config.video_id or (features.video_id if features else None)
    if video_id is None and config.clips_dir is not None:
        subdirs = sorted(p.name for p in config.clips_dir.iterdir() if p.is_dir())
        video_id = subdirs[0] if len(subdirs) == 1 else None
    if video_id is None:
        raise AskError(
            "cannot tell the video: pass --video, --features FILE, or --clips DIR with one video folder"
        )
    current = config.current_scene or _next_scene(config.past_scene)
    question = Question(type=qtype, question=config.question_text or "", options=config.options, answer="a")
    transition = Transition(
        video_id=video_id,
        index=0,
        past_scene=SceneRef(name=config.past_scene),
        current_scene=SceneRef(name=current),
        questions=[question],
    )
    return transition, question, features


def _dataset_key(data_dir: Path, exclude: list[str]) -> str:
    """Cache key of an on-the-fly graph: the data files, the left-out videos and the builder's code."""
    import graph.ckg

    digest = hashlib.sha256("|".join(exclude).encode())
    builder_sources = sorted(Path(graph.ckg.__file__).parent.glob("*.py"))
    for path in [*sorted(data_dir.glob("*.json")), *builder_sources]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def resolve_graph(config: AskConfig, transition: Transition, data_dir: Path | None) -> tuple[Any, str]:
    """The graph for retrieval and a description of where it came from.

    Order: ``--graph``; the prebuilt sample graph (sample questions only); a graph built on the fly
    from the QA file's folder without the asked video (cached by content); none.
    """
    from graph import load_graph

    if config.graph_dir is not None:
        if not config.graph_dir.exists():
            raise AskError(f"graph not found: {config.graph_dir}")
        return load_graph(config.graph_dir), str(config.graph_dir)
    if data_dir is None:
        return None, "none (inline question without --graph)"
    if data_dir.resolve() == SAMPLE_DIR.resolve() and SAMPLE_GRAPH_DIR.exists():
        return load_graph(SAMPLE_GRAPH_DIR), str(SAMPLE_GRAPH_DIR)
    return build_graph_cached(data_dir, [transition.video_id], config.cache_dir, config.min_support)


def _graph_cache() -> Path:
    return cache_dir("graphs")


SMALL_DATA_TRANSITIONS = 50
"""Below this many transitions an on-the-fly graph uses ``SMALL_DATA_MIN_SUPPORT``."""
SMALL_DATA_MIN_SUPPORT = 2


def cached_graph_file(
    data_dir: Path, exclude: list[str], cache_dir: Path | None, min_support: int | None
) -> Path:
    """Where :func:`build_graph_cached` keeps the graph built from ``data_dir`` without ``exclude``."""
    key = _dataset_key(data_dir, [*exclude, f"min_support={min_support}"])
    return (cache_dir / "graphs" if cache_dir else _graph_cache()) / key / "graph.json"


def graph_file(config: AskConfig, transition: Transition, data_dir: Path | None) -> Path | None:
    """The graph file or folder :func:`resolve_graph` reads (same order): what ``karma graph push``
    must push before ``--retriever neo4j-hybrid`` can answer from it."""
    if config.graph_dir is not None:
        return config.graph_dir
    if data_dir is None:
        return None
    if data_dir.resolve() == SAMPLE_DIR.resolve() and SAMPLE_GRAPH_DIR.exists():
        return SAMPLE_GRAPH_DIR
    return cached_graph_file(data_dir, [transition.video_id], config.cache_dir, config.min_support)


def build_graph_cached(
    data_dir: Path, exclude: list[str], cache_dir: Path | None, min_support: int | None = None
) -> tuple[Any, str]:
    """Build the CKG from a data folder leaving out ``exclude`` videos; reuse a cached build."""
    from graph import BuildConfig, build_graph, read_json, write_json
    from karma.data import load_dataset

    cached = cached_graph_file(data_dir, exclude, cache_dir, min_support)
    if cached.is_file():
        return read_json(cached), f"built from {data_dir} without {', '.join(exclude)} (cached {cached})"
    dataset = load_dataset(data_dir, lenient=True)
    settings: dict[str, Any] = {"exclude_videos": exclude}
    if min_support is not None:
        settings["min_support"] = min_support
    elif len(dataset.transitions) < SMALL_DATA_TRANSITIONS:
        settings["min_support"] = SMALL_DATA_MIN_SUPPORT
    try:
        graph = build_graph(dataset.transitions, dataset.features, BuildConfig(**settings))
    except ValueError as exc:
        raise AskError(
            f"cannot build a graph from {data_dir} without {', '.join(exclude)} ({exc}); "
            "pass --graph GRAPH_DIR or --no-ckg"
        ) from exc
    write_json(graph, cached)  # atomic (karma.core.atomic)
    return graph, f"built from {data_dir} without {', '.join(exclude)}"


class AskSession:
    """Keeps loaded backends and retrievers between questions (benchmarks, notebooks, services).

    ``ask`` with a fresh session is exactly what one ``karma ask`` does; a second ``ask`` on the same
    session reuses the model and the retriever (the "warm" latency).
    """

    def __init__(self) -> None:
        self._backends: dict[str, Any] = {}
        self._retrievers: dict[str, Any] = {}

    def backend(self, config: AskConfig) -> Any:
        options = dict(config.backend_options)
        if config.model:
            from pipelines.model_registry import model_backend_options

            options = model_backend_options(config.model, config.backend, options)
        key = json.dumps([config.backend, options], sort_keys=True, default=str)
        if key not in self._backends:
            try:
                self._backends[key] = assembly.make_backend(config.backend, options)
            except (ValueError, TypeError, ImportError) as exc:  # unknown name, bad option, missing extra
                raise AskError(f"backend {config.backend!r}: {exc}") from exc
        return self._backends[key]

    def retriever(self, config: AskConfig, graph: Any) -> Any:
        if graph is None or config.retriever == "none":
            return None
        options = json.dumps(config.retriever_options, sort_keys=True, default=str)
        key = f"{config.retriever}|{config.cache_dir}|{graph.content_hash()}|{config.embed_device}|{options}"
        if key not in self._retrievers:
            try:
                self._retrievers[key] = assembly.make_retriever(
                    config.retriever, graph, device=config.embed_device, options=config.retriever_options
                )
            except (ValueError, TypeError) as exc:  # unknown retriever name or setting
                raise AskError(f"retriever {config.retriever!r}: {exc}") from exc
        return self._retrievers[key]

    def close(self) -> None:
        for backend in self._backends.values():
            backend.close()
        self._backends.clear()
        self._retrievers.clear()

    def ask(self, config: AskConfig) -> AskResult:
        """Run one question."""
        if config.pipeline == "vlm" and config.clips_dir is None:
            raise AskError("the VLM pipeline needs --clips DIR (<clips>/<video_id>/scene_NNN.mp4)")
        timings: dict[str, float] = {}
        start = time.perf_counter()
        from_file = config.question_text is None
        transition, question, features = question_from_file(config) if from_file else inline_question(config)
        data_dir = (config.qa_file or SAMPLE_DIR / DEFAULT_SAMPLE_QA).parent if from_file else None
        timings["data"] = time.perf_counter() - start

        tick = time.perf_counter()
        graph, graph_source = (None, "off (--no-ckg)")
        if config.use_graph:
            graph, graph_source = resolve_graph(config, transition, data_dir)
        timings["graph"] = time.perf_counter() - tick

        tick = time.perf_counter()
        try:
            retriever = self.retriever(config, graph) if config.use_graph else None
        except RunError as exc:
            from graph.neo4j.errors import Neo4jGraphMismatchError

            if not isinstance(exc, Neo4jGraphMismatchError):
                raise
            # neo4j-hybrid: the database holds another graph than the one this ask reads (a held-out
            # graph built on the fly, say): name exactly what to push.
            raise Neo4jGraphMismatchError(
                f"Neo4j holds graph {exc.held}, but this ask reads graph {exc.wanted}, {graph_source}: "
                f"push it first with `karma graph push {graph_file(config, transition, data_dir)} --embeddings` "
                "(or pass --graph with the folder you pushed)",
                held=exc.held,
                wanted=exc.wanted,
            ) from exc
        timings["retriever"] = time.perf_counter() - tick

        tick = time.perf_counter()
        backend = self.backend(config)
        timings["backend_load"] = time.perf_counter() - tick

        pipeline = assembly.make_pipeline(
            config,
            kind=config.pipeline,
            backend=backend,
            retriever=retriever,
            use_graph=config.use_graph,
            clips_dir=config.clips_dir,
            predictive_audio=config.predictive_audio,
            cache_dir=config.cache_dir,
        )
        from pipelines.loglik import wrap_backend

        try:
            pipeline.backend = wrap_backend(backend, config.answer_mode, config.score_pick)
        except ValueError as exc:  # a backend that cannot score
            raise AskError(str(exc)) from exc
        pipeline.answer_mode = config.answer_mode
        pipeline.graph.count_tokens = getattr(pipeline.backend, "count_tokens", None)
        tick = time.perf_counter()
        prepared = pipeline.prepare(transition, question, features)
        timings["prepare"] = time.perf_counter() - tick
        tick = time.perf_counter()
        (answer,) = pipeline.answer([prepared])
        timings["generate"] = time.perf_counter() - tick
        timings["total"] = time.perf_counter() - start
        return AskResult(
            transition=transition,
            question=question,
            answer_known=from_file,
            prepared=prepared,
            answer=answer,
            graph_source=graph_source,
            timings_s={k: round(v, 4) for k, v in timings.items()},
            fact_links=config.fact_links,
        )


def ask(config: AskConfig) -> AskResult:
    """Run one question in a fresh session (what one ``karma ask`` does), then release the model."""
    session = AskSession()
    try:
        return session.ask(config)
    finally:
        session.close()


def result_json(result: AskResult) -> str:
    """A compact JSON view (for ``--json``): the answer record plus the facts and timings."""
    payload = {
        "question_id": result.answer.question_id,
        "question_type": str(result.question.type),
        "answer": result.answer.model_dump(mode="json"),
        "expected": result.question.answer if result.answer_known else None,
        "facts": [fact.model_dump(mode="json") for fact in result.prepared.facts],
        "fact_lines": [
            {
                "line": line.prompt_line,
                "relations": line.relations,
                "link": line.link,
                "fact_ids": [fact.id for fact in line.facts],
            }
            for line in result.fact_lines
        ],
        "fact_links": result.fact_links,
        "graph_source": result.graph_source,
        "timings_s": result.timings_s,
    }
    return json.dumps(payload, indent=2)


__all__ = ["AskConfig", "AskError", "AskResult", "AskSession", "ask", "result_json"]
