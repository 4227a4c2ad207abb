"""karma's keyword retriever (``karma-keyword``): the published idea with karma's choices.

The published baseline is ``retrieval.keyword`` (``keyword``); docs/retrieval.md lists every
difference. This variant: keywords are runs of at least four letters (digits and ``_`` split words);
a linear scan over every node title keeps the nodes whose title contains a keyword; their 1-hop
out-edges (every edge, several per node pair allowed) are ranked by the degree of the node they lead
to, times 1.5 when the edge text mentions a change word; ties by edge id; ``k`` cuts the list. The
per-question linear scan is kept on purpose: it is the baseline the hybrid retriever's latency is
compared against.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from graph.model import CkgEdge
from retrieval.base import RetrievalQuery, RetrievalResult, Retriever
from retrieval.facts import make_fact, rank
from retrieval.graph_view import GraphView

WORD_RE = re.compile(r"[a-z]+")
CHANGE_WORDS: tuple[str, ...] = ("change", "shift", "increase", "decrease", "transition", "move")


class KarmaKeywordConfig(BaseModel):
    """Settings of karma's keyword retriever."""

    min_keyword_length: int = Field(default=4, ge=1)
    """Words of the question at least this long are keywords."""
    top_n: int = Field(default=25, ge=1)
    """Most facts returned (the published value is 25); ``k`` cuts further."""
    change_boost: float = 1.5
    """Factor for edges whose text mentions a change word."""


def question_keywords(question: str, min_length: int = 4) -> list[str]:
    """Lower-cased words of at least ``min_length`` letters, first occurrence order, no duplicates."""
    seen: dict[str, None] = {}
    for word in WORD_RE.findall(question.lower()):
        if len(word) >= min_length:
            seen.setdefault(word, None)
    return list(seen)


class KarmaKeywordRetriever(Retriever):
    """Keyword substring match over node titles, 1-hop out-edges ranked by the target's degree."""

    name = "karma-keyword"
    config_model = KarmaKeywordConfig

    def __init__(self, view: GraphView, config: KarmaKeywordConfig | None = None) -> None:
        self.view = view
        self.config = config or KarmaKeywordConfig()
        # (node id, lower-cased title) in id order: the list the per-question scan walks.
        self._titles = [(node_id, view.title(node_id).lower()) for node_id in view.node_ids]

    def matched_nodes(self, query: RetrievalQuery) -> list[str]:
        """Nodes whose title contains a keyword of the question (a linear scan, by design)."""
        keywords = question_keywords(query.question, self.config.min_keyword_length)
        if not keywords:
            return []
        return [node_id for node_id, title in self._titles if any(kw in title for kw in keywords)]

    def _edge_score(self, edge: CkgEdge) -> float:
        score = float(self.view.degree.get(edge.target, 0))
        text = (edge.description or self.view.edge_text(edge)).lower()
        if any(word in text for word in CHANGE_WORDS):
            score *= self.config.change_boost
        return score

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        scored: dict[str, float] = {}
        for node_id in self.matched_nodes(query):
            for edge in self.view.out_adj.get(node_id, []):
                scored[edge.id] = self._edge_score(edge)
        limit = min(k, self.config.top_n)
        facts = [
            make_fact(self.view, self.view.graph.edges[edge_id], score)
            for edge_id, score in rank(scored)[:limit]
        ]
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)
