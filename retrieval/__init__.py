"""Retrieval over the causal knowledge graph: query building, retrievers by name, fact serialization.

``get_retriever(name, graph)`` gives ``hybrid`` (FAISS vector seeds + statistics-weighted graph
expansion), the published ``keyword`` and ``paths`` baselines (rule for rule as the published scripts),
karma's own variants ``karma-keyword`` and ``karma-paths``, or ``none``.
``build_query`` is the one place a question becomes a query (no answer, options or explanation);
``serialize_facts`` turns results into prompt text under a token budget.
"""

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
