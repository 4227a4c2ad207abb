"""One assembly of the answering parts, used by ``karma ask``, ``karma eval``, the benchmarks and the
Python API: a backend by name, a retriever over a graph, and a pipeline with the generation settings.

Both commands build their parts here, so the same question with the same settings gives the same
request and the same prompt hash whichever command asks it. The defaults of every generation setting
are declared once, in :class:`GenerationSettings`; ``AskConfig`` and ``EvalConfig`` extend it and the
CLI reads its option defaults from it.

Heavy imports (pipelines, retrievers, backends) happen inside the functions, so importing this module
is cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pipelines.settings import GENERATION_DEFAULTS, AnswerMode, GenerationSettings


def make_backend(name: str, options: dict[str, Any] | None = None) -> Any:
    """The backend registered as ``name`` (``pipelines.backends.BACKENDS``) built with ``options``."""
    from pipelines.backends import get_backend

    return get_backend(name, **(options or {}))


def make_retriever(
    name: str,
    graph: Any,
    *,
    embedder: Any = None,
    device: str | None = None,
    options: dict[str, Any] | None = None,
) -> Any:
    """The retriever ``name`` over ``graph``, or None for ``none`` or no graph.

    A retriever that embeds (``Retriever.embeds``: hybrid, neo4j-hybrid) keeps its vector index where
    ``retrieval`` puts it by default (karma's cache root, keyed by the graph's content hash), so ask
    and eval share it; ``embedder`` shares one loaded embedding model between several retrievers (the
    eval's folds). Without one, it loads its model on ``device`` (the embedding device setting,
    ``retrieval.embed.embed_device``: None follows ``$KARMA_EMBED_DEVICE``, else auto). ``options``
    are the retriever's own settings (``--retriever-opt``, checked by
    ``retrieval.registry.retriever_options``).
    """
    if graph is None or name == "none":
        return None
    from retrieval import get_retriever
    from retrieval.registry import retriever_class

    settings: dict[str, Any] = dict(options or {})
    if retriever_class(name).embeds:
        if embedder is not None:
            settings["embedder"] = embedder
        elif device is not None:
            settings["device"] = device
    return get_retriever(name, graph, **settings)


def make_pipeline(
    settings: GenerationSettings,
    *,
    kind: Literal["llm", "vlm"] = "llm",
    backend: Any = None,
    retriever: Any = None,
    use_graph: bool = True,
    clips_dir: str | Path | None = None,
    predictive_audio: str = "silence",
    cache_dir: str | Path | None = None,
) -> Any:
    """The LLM or VLM pipeline with ``settings``; ``backend`` may be None to prepare prompts only.

    ``use_graph`` is the ablation switch (the graph block is the only difference between the arms);
    ``clips_dir``, ``predictive_audio`` and ``cache_dir`` (derived clips) are for the VLM pipeline.
    """
    common: dict[str, Any] = {
        "use_graph": use_graph,
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "constrain_choices": settings.constrain_choices,
        "k": settings.k,
        "budget_tokens": settings.budget_tokens,
        "fact_style": settings.fact_style,
        "fact_links": settings.fact_links,
        "concept_facts": settings.concept_facts,
    }
    if settings.template:
        common["template"] = settings.template
    if kind == "vlm":
        from pipelines.vlm import VlmPipeline

        if clips_dir is None:
            raise ValueError("the VLM pipeline needs a clips folder (<clips>/<video_id>/scene_NNN.mp4)")
        pipeline: Any = VlmPipeline(
            backend,
            retriever,
            clips_dir=clips_dir,
            predictive_audio=predictive_audio,
            cache_dir=cache_dir,
            audio_parts=settings.audio_parts,
            **common,
        )
    else:
        from pipelines.llm import LlmPipeline

        pipeline = LlmPipeline(backend, retriever, **common)
    pipeline.answer_mode = settings.answer_mode
    return pipeline


__all__ = [
    "GENERATION_DEFAULTS",
    "AnswerMode",
    "GenerationSettings",
    "make_backend",
    "make_pipeline",
    "make_retriever",
]
