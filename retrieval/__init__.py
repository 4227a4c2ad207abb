"""Retrieval over the causal knowledge graph: query building, retrievers by name, fact serialization.

``get_retriever(name, graph)`` gives ``hybrid`` (FAISS vector seeds + statistics-weighted graph
expansion), the published ``keyword`` and ``paths`` baselines (rule for rule as the published scripts),
karma's own variants ``karma-keyword`` and ``karma-paths``, or ``none``.
``build_query`` is the one place a question becomes a query (no answer, options or explanation);
``serialize_facts`` turns results into prompt text under a token budget.

Public names are loaded on first use (PEP 562), so importing one submodule (``retrieval.registry`` for the
CLI's choices) does not load numpy, FAISS and the embedding model code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karma.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Fact": "retrieval.base",
    "RetrievalQuery": "retrieval.base",
    "RetrievalResult": "retrieval.base",
    "Retriever": "retrieval.base",
    "Embedder": "retrieval.embed",
    "EmbedderUnavailable": "retrieval.embed",
    "default_model_path": "retrieval.embed",
    "RecallReport": "retrieval.evaluate",
    "load_question_truth": "retrieval.evaluate",
    "recall_at_k": "retrieval.evaluate",
    "retrieval_recall": "retrieval.evaluate",
    "GraphView": "retrieval.graph_view",
    "as_causal_graph": "retrieval.graph_view",
    "HybridConfig": "retrieval.hybrid",
    "HybridRetriever": "retrieval.hybrid",
    "GraphIndex": "retrieval.index",
    "load_or_build_index": "retrieval.index",
    "KeywordConfig": "retrieval.keyword",
    "KeywordRetriever": "retrieval.keyword",
    "KarmaKeywordConfig": "retrieval.keyword_karma",
    "KarmaKeywordRetriever": "retrieval.keyword_karma",
    "SplitGuardedRetriever": "retrieval.leakage",
    "SplitLeakageError": "retrieval.leakage",
    "check_split": "retrieval.leakage",
    "PathsConfig": "retrieval.paths",
    "PathsRetriever": "retrieval.paths",
    "KarmaPathsConfig": "retrieval.paths_karma",
    "KarmaPathsRetriever": "retrieval.paths_karma",
    "build_query": "retrieval.query",
    "graph_thresholds": "retrieval.query",
    "hypothetical_clause": "retrieval.query",
    "observed_visual_events": "retrieval.query",
    "retrieval_text": "retrieval.query",
    "visual_deltas": "retrieval.query",
    "RETRIEVER_NAMES": "retrieval.registry",
    "NoRetriever": "retrieval.registry",
    "get_retriever": "retrieval.registry",
    "estimate_tokens": "retrieval.serialize",
    "serialize_facts": "retrieval.serialize",
}
__all__ = [
    "RETRIEVER_NAMES",
    "Embedder",
    "EmbedderUnavailable",
    "Fact",
    "GraphIndex",
    "GraphView",
    "HybridConfig",
    "HybridRetriever",
    "KarmaKeywordConfig",
    "KarmaKeywordRetriever",
    "KarmaPathsConfig",
    "KarmaPathsRetriever",
    "KeywordConfig",
    "KeywordRetriever",
    "NoRetriever",
    "PathsConfig",
    "PathsRetriever",
    "RecallReport",
    "RetrievalQuery",
    "RetrievalResult",
    "Retriever",
    "SplitGuardedRetriever",
    "SplitLeakageError",
    "as_causal_graph",
    "build_query",
    "check_split",
    "default_model_path",
    "estimate_tokens",
    "get_retriever",
    "graph_thresholds",
    "hypothetical_clause",
    "load_or_build_index",
    "load_question_truth",
    "observed_visual_events",
    "recall_at_k",
    "retrieval_recall",
    "retrieval_text",
    "serialize_facts",
    "visual_deltas",
]

if TYPE_CHECKING:
    from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
    from retrieval.embed import Embedder, EmbedderUnavailable, default_model_path
    from retrieval.evaluate import RecallReport, load_question_truth, recall_at_k, retrieval_recall
    from retrieval.graph_view import GraphView, as_causal_graph
    from retrieval.hybrid import HybridConfig, HybridRetriever
    from retrieval.index import GraphIndex, load_or_build_index
    from retrieval.keyword import KeywordConfig, KeywordRetriever
    from retrieval.keyword_karma import KarmaKeywordConfig, KarmaKeywordRetriever
    from retrieval.leakage import SplitGuardedRetriever, SplitLeakageError, check_split
    from retrieval.paths import PathsConfig, PathsRetriever
    from retrieval.paths_karma import KarmaPathsConfig, KarmaPathsRetriever
    from retrieval.query import (
        build_query,
        graph_thresholds,
        hypothetical_clause,
        observed_visual_events,
        retrieval_text,
        visual_deltas,
    )
    from retrieval.registry import RETRIEVER_NAMES, NoRetriever, get_retriever
    from retrieval.serialize import estimate_tokens, serialize_facts


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
