"""Retrievers chosen by name: ``hybrid``, ``keyword``, ``paths``, ``karma-keyword``, ``karma-paths``, ``none``."""

from __future__ import annotations

from collections.abc import Mapping
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
    "retrieval.neo4j_hybrid:Neo4jHybridRetriever",
    help="the hybrid algorithm run inside Neo4j (a pushed graph)",
)

RETRIEVER_NAMES: tuple[str, ...] = tuple(RETRIEVERS)
"""Every name ``get_retriever`` accepts."""
RETRIEVER_HELP: dict[str, str] = {e.name: e.help for e in RETRIEVERS.entries()}
"""Name -> one line of help."""


class NoRetriever(Retriever):
    """The graph-off arm of an ablation: always returns no fact."""

    name = "none"
    needs_graph = False
    guards_split = True  # no fact, nothing to leak

    @classmethod
    def build(cls, source: object, config: Mapping[str, object]) -> NoRetriever:
        """No settings; the graph (if any) only names the result's graph hash."""
        if config.get("strict_split") is not None:
            config = {k: v for k, v in config.items() if k != "strict_split"}
        if config:
            raise InputError(f"retriever 'none' takes no settings, got {sorted(config)}")
        return cls(None if source is None else _view(source))  # type: ignore[arg-type]

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

    The class registered under ``name`` in :data:`RETRIEVERS` builds itself (``Retriever.build``);
    nothing here knows a retriever by name. Config keys are the fields of the retriever's
    ``config_model`` (HybridConfig, KeywordConfig, PathsConfig, ...); hybrid also takes ``embedder``,
    ``model``, ``device``, ``index_dir`` and ``index_config`` (``HybridRetriever.build``),
    ``neo4j-hybrid`` the connection (``retrieval.neo4j_hybrid.make_neo4j_hybrid``). Every retriever
    takes ``strict_split=True``: each query's video must have been excluded from the graph's build
    (see retrieval.leakage); a retriever that declares ``guards_split`` checks it itself.
    """
    strict_split = bool(config.pop("strict_split", False))
    cls = retriever_class(name)
    if cls.guards_split:
        config["strict_split"] = strict_split
        strict_split = False
    retriever = _make(name, store_or_graph, config)
    if strict_split:
        from retrieval.leakage import SplitGuardedRetriever

        return SplitGuardedRetriever(retriever, retriever.view)  # type: ignore[attr-defined]
    return retriever


def register_retriever(name: str, target: str, *, help: str = "", extra: str | None = None) -> None:
    """Register a retriever class (``"module:Class"``, a :class:`Retriever` subclass) under ``name``:
    the one line a new retriever needs. ``karma retrieve/ask/eval --retriever NAME`` then build it
    with ``Class.build(graph, config)``."""
    RETRIEVERS.register(name, target, help=help, extra=extra)


def retriever_class(name: str) -> type[Retriever]:
    """The class registered under ``name``; an unknown name is an InputError listing the choices."""
    if name not in RETRIEVERS:
        raise InputError(f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}")
    cls = RETRIEVERS.load(name)
    if not (isinstance(cls, type) and issubclass(cls, Retriever)):
        raise TypeError(f"retriever {name!r} is registered as {cls!r}, not a Retriever subclass")
    return cls


def retriever_options(
    name: str, options: dict[str, object], flag: str = "--retriever-opt"
) -> dict[str, object]:
    """``--retriever-opt KEY=VALUE`` items for the retriever ``name``, checked before any model
    loads: an unknown key or a value its config model refuses is an InputError naming the option."""
    from pydantic import ValidationError

    cls = retriever_class(name)
    valid = cls.option_names()
    for key in options:
        if key not in valid:
            choices = ", ".join(valid) if valid else "none (it takes no settings)"
            raise InputError(f"{flag} {key}: unknown option for retriever {name!r}; valid options: {choices}")
    model = cls.config_model
    known = set(model.model_fields) if model is not None else set()
    fields = {k: v for k, v in options.items() if k in known}
    if model is None or not fields:
        return dict(options)
    try:
        checked = model.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        raise InputError(f"{flag} {key}={options.get(key)!r}: {first['msg']} (retriever {name!r})") from None
    return {**options, **{k: getattr(checked, k) for k in fields}}


def _make(
    name: str,
    store_or_graph: CausalGraph | GraphStore | GraphView | str | Path | None,
    config: dict[str, object],
) -> Retriever:
    """The registered class builds itself: no branch per name."""
    cls = retriever_class(name)
    if store_or_graph is None and cls.needs_graph:
        raise InputError(f"retriever {name!r} needs a graph")
    return cls.build(store_or_graph, config)


def _view(source: CausalGraph | GraphStore | GraphView | str | Path) -> GraphView:
    return source if isinstance(source, GraphView) else GraphView.of(source)
