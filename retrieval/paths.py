"""The published path retriever (``paths``), rule for rule as in the public Karma-MV scripts.

Source: ``gemma_CoT_correct.py``, ``get_causal_path_facts`` (github.com/AMAAI-Lab/Karma-MV at
8101d65). Rules kept (each has a test in tests/retrieval/test_published_baselines.py):

1. The same directed graph as the published keyword retriever (``retrieval.keyword.PublishedGraph``:
   one edge per ordered pair, lower-cased titles).
2. Keywords: every ``\\b\\w{4,}\\b`` word of the lower-cased question; ``scene_NNN`` tokens are
   **not** removed here (the published path function does not remove them).
3. Start nodes: nodes whose title contains ``intensity``, ``brightness`` or ``motion``, in node order,
   the **first 5**. Target nodes: nodes whose title contains a keyword, in node order, the **first 5**.
4. For each (start, target) pair, in that order: one shortest path on the **directed** graph
   (``networkx.shortest_path``, unweighted); pairs without a path are skipped; a path is kept when it
   has at most 3 nodes (2 hops). A start that is also the target gives a one-node path: no fact.
5. Every edge of a kept path is a fact ``LOGIC: [<u>] -> [<v>] (<description>)``; repeated facts
   count once; **3** facts are returned whatever ``k`` asks.

Repaired, not kept: (a) the published code picks its 3 facts as ``list(set(facts))[:3]``, an order
that changes from run to run with Python's string hashing; here the first 3 distinct facts in path
order are kept, so runs agree. (b) The id/title join, as in ``retrieval.keyword`` (the published code
raises ``KeyError: 'title'`` on GraphRAG tables and skips the video). Scores are 1, 1/2, 1/3 by rank
(the published code has none).
"""

from __future__ import annotations

from itertools import pairwise

import networkx as nx
from pydantic import BaseModel, Field

from graph.model import CkgEdge
from retrieval.base import RetrievalQuery, RetrievalResult, Retriever
from retrieval.graph_view import GraphView
from retrieval.keyword import PublishedGraph, published_fact, published_keywords

PUBLISHED_FEATURES: tuple[str, ...] = ("Intensity", "Brightness", "Motion")
"""The published fixed path starts (matched lower-cased, as title substrings)."""


class PathsConfig(BaseModel):
    """Settings of the published path retriever (defaults are the published values)."""

    features: list[str] = Field(default_factory=lambda: list(PUBLISHED_FEATURES))
    """Title substrings of the start nodes (published: Intensity, Brightness, Motion)."""
    max_starts: int = Field(default=5, ge=1)
    """Start nodes used, in node order (published: 5)."""
    max_targets: int = Field(default=5, ge=1)
    """Keyword nodes used, in node order (published: 5)."""
    max_path_nodes: int = Field(default=3, ge=2)
    """Longest kept path in nodes (published: 3, i.e. two hops)."""
    max_facts: int = Field(default=3, ge=1)
    """Facts returned (published: 3)."""
    respect_k: bool = False
    """Cut the list at ``k`` too. Off by default: the published code always returns ``max_facts``."""


class PathsRetriever(Retriever):
    """The published path retriever: directed shortest paths from feature nodes to keyword nodes."""

    name = "paths"
    config_model = PathsConfig

    def __init__(self, view: GraphView, config: PathsConfig | None = None) -> None:
        self.view = view
        self.config = config or PathsConfig()
        self.graph = PublishedGraph.of(view)
        self.start_nodes = self.graph.nodes_matching(tuple(f.lower() for f in self.config.features))[
            : self.config.max_starts
        ]

    def target_nodes(self, question: str) -> list[str]:
        keywords = published_keywords(question, strip_scene_tokens=False)
        return self.graph.nodes_matching(keywords)[: self.config.max_targets]

    def path_facts(self, question: str) -> list[tuple[CkgEdge, str]]:
        """Every fact of every kept path, in (start, target, hop) order, repeats removed."""
        graph = self.graph
        found: dict[str, CkgEdge] = {}
        for start in self.start_nodes:
            for target in self.target_nodes(question):
                try:
                    path = nx.shortest_path(graph.digraph, start, target)
                except nx.NetworkXNoPath:
                    continue
                if len(path) > self.config.max_path_nodes:
                    continue
                for u, v in pairwise(path):
                    edge = graph.edge(u, v)
                    text = f"LOGIC: [{graph.name(u)}] -> [{graph.name(v)}] ({edge.description or ''})"
                    found.setdefault(text, edge)
        return [(edge, text) for text, edge in found.items()]

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        limit = min(k, self.config.max_facts) if self.config.respect_k else self.config.max_facts
        facts = [
            published_fact(edge, text, 1.0 / rank)
            for rank, (edge, text) in enumerate(self.path_facts(query.question)[:limit], start=1)
        ]
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)
