"""Retrievers chosen by name: ``hybrid``, ``keyword``, ``paths``, ``karma-keyword``, ``karma-paths``, ``none``."""

from __future__ import annotations

from pathlib import Path

from graph.model import CausalGraph, GraphStore
from karma.core.errors import InputError
from karma.core.registry import Registry
from retrieval.base import RetrievalQuery, RetrievalResult, Retriever
from retrieval.graph_view import GraphView

RETRIEVERS = Registry("retriever")
"""Retriever names, their classes (imported on first use) and one line of help each; the CLI reads
its choices and help from here."""
RETRIEVERS.register(
    "hybrid",
    "retrieval.hybrid:HybridRetriever",
    help="FAISS vector seeds + statistics-weighted graph expansion; the default",
)
RETRIEVERS.register(
    "keyword", "retrieval.keyword:KeywordRetriever", help="the published keyword script, rule for rule"
)
RETRIEVERS.register(
    "paths", "retrieval.paths:PathsRetriever", help="the published shortest-paths script, rule for rule"
)
RETRIEVERS.register(
    "karma-keyword", "retrieval.keyword_karma:KarmaKeywordRetriever", help="karma's keyword variant"
)
RETRIEVERS.register("karma-paths", "retrieval.paths_karma:KarmaPathsRetriever", help="karma's paths variant")
RETRIEVERS.register("none", "retrieval.registry:NoRetriever", help="no facts (a graph block that says so)")
RETRIEVERS.register(
    "neo4j-hybrid",
    "retrieval.neo4j_hybrid:make_neo4j_hybrid",
    help="the hybrid algorithm run inside Neo4j (a pushed graph)",
)

RETRIEVER_NAMES: tuple[str, ...] = tuple(RETRIEVERS)
"""Every name ``get_retriever`` accepts."""
RETRIEVER_HELP: dict[str, str] = {e.name: e.help for e in RETRIEVERS.entries()}
"""Name -> one line of help."""


class NoRetriever(Retriever):
    """The graph-off arm of an ablation: always returns no fact."""

    name = "none"

    def __init__(self, view: GraphView | None = None) -> None:
        self.view = view

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        return RetrievalResult(
            retriever=self.name, facts=[], graph_hash=self.view.content_hash if self.view else None
        )


def get_retriever(
    name: str, store_or_graph: CausalGraph | GraphStore | GraphView | str | Path | None, **config: object
) -> Retriever:
    """Build the retriever ``name`` over a graph, a store, or a graph folder.

    Config keys are the fields of the retriever's config model (HybridConfig, KeywordConfig,
    PathsConfig); hybrid also takes ``embedder`` (an Embedder), ``model`` (a sentence-transformers name
    or path), ``device`` (the embedding device setting, ``retrieval.embed.embed_device``), ``index_dir`` (where the vector index is kept; default: cached by graph hash under
    ``cache_dir("index")``, never in the graph folder; ``False``: in memory only) and ``index_config``
    (an IndexConfig). ``neo4j-hybrid`` runs the hybrid algorithm inside Neo4j (retrieval.neo4j_hybrid).
    Every retriever but ``none`` takes ``strict_split=True``: each query's video must have been excluded
    from the graph's build (see retrieval.leakage).
    """
    strict_split = bool(config.pop("strict_split", False))
    if name == "neo4j-hybrid":  # guards the split inside its Cypher query
        config["strict_split"] = strict_split
        strict_split = False
    retriever = _make(name, store_or_graph, config)
    if strict_split and not isinstance(retriever, NoRetriever):
        from retrieval.leakage import SplitGuardedRetriever

        return SplitGuardedRetriever(retriever, retriever.view)  # type: ignore[attr-defined]
    return retriever


def _make(
    name: str,
    store_or_graph: CausalGraph | GraphStore | GraphView | str | Path | None,
    config: dict[str, object],
) -> Retriever:
    if name not in RETRIEVER_NAMES:
        raise InputError(f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVER_NAMES)}")
    if name == "none":
        view = None if store_or_graph is None else _view(store_or_graph)
        if config:
            raise TypeError(f"retriever 'none' takes no settings, got {sorted(config)}")
        return NoRetriever(view)
    if name == "neo4j-hybrid":
        from retrieval.neo4j_hybrid import make_neo4j_hybrid

        return make_neo4j_hybrid(store_or_graph, config)
    if store_or_graph is None:
        raise InputError(f"retriever {name!r} needs a graph")
    view = _view(store_or_graph)
    if name == "keyword":
        from retrieval.keyword import KeywordConfig, KeywordRetriever

        return KeywordRetriever(view, KeywordConfig(**config))
    if name == "paths":
        from retrieval.paths import PathsConfig, PathsRetriever

        return PathsRetriever(view, PathsConfig(**config))
    if name == "karma-keyword":
        from retrieval.keyword_karma import KarmaKeywordConfig, KarmaKeywordRetriever

        return KarmaKeywordRetriever(view, KarmaKeywordConfig(**config))
    if name == "karma-paths":
        from retrieval.paths_karma import KarmaPathsConfig, KarmaPathsRetriever

        return KarmaPathsRetriever(view, KarmaPathsConfig(**config))
    from retrieval.embed import Embedder, embed_device
    from retrieval.hybrid import HybridConfig, HybridRetriever

    embedder = config.pop("embedder", None)
    model = config.pop("model", None)
    device = config.pop("device", None)
    index_dir = config.pop("index_dir", None)
    index_config = config.pop("index_config", None)
    if embedder is None:
        embedder = Embedder(model, device=embed_device(device))  # type: ignore[arg-type]
    elif model is not None or device is not None:
        raise TypeError("pass either embedder or model/device, not both")
    if index_dir is None:  # cached by graph hash under the cache root, never in the graph folder
        from retrieval.index import default_index_dir

        index_dir = default_index_dir(view.content_hash, embedder.model_id, index_config)  # type: ignore[arg-type]
    elif index_dir is False:
        index_dir = None  # in memory only
    return HybridRetriever(
        view,
        embedder=embedder,  # type: ignore[arg-type]
        index_dir=index_dir,  # type: ignore[arg-type]
        config=HybridConfig(**config),
        index_config=index_config,  # type: ignore[arg-type]
    )


def _view(source: CausalGraph | GraphStore | GraphView | str | Path) -> GraphView:
    return source if isinstance(source, GraphView) else GraphView.of(source)
