"""The published keyword retriever (``keyword``), rule for rule as in the public Karma-MV scripts.

Source: ``VLM_CKG.py``, ``get_graph_context_by_query`` (github.com/AMAAI-Lab/Karma-MV at 8101d65).
Rules kept (each has a test in tests/retrieval/test_published_baselines.py):

1. The graph is a directed graph with **one edge per (source, target) pair**; when the edge table has
   several rows for one pair, the later row wins (karma's tables are in edge-id order). Node titles
   are lower-cased.
2. ``scene_<digits>`` tokens are removed from the question (case-sensitive, before lower-casing), then
   every ``\\b\\w{4,}\\b`` word of the lower-cased text is a keyword (``\\w``: letters, digits, ``_``).
3. A node matches when a keyword is a substring of its title; every node is scanned, in node order.
4. Each matched node's out-edges (successors, in edge order) are candidates, one per pair.
5. Score = the **matched source node's degree** (in + out, after rule 1), times 1.5 when the edge
   description contains change / shift / increase / decrease / transition / move as a substring.
6. Candidates are sorted by score, best first, ties in candidate order (a stable sort); the top
   **25** are returned whatever ``k`` asks (the published code has no ``k``).
7. A fact reads ``Concept [<source>] -> [<target>] via: <description>``.

Repaired, not kept: the published code keys nodes by entity ``id`` but edges by ``source``/``target``,
which GraphRAG tables fill with titles, so on GraphRAG output it retrieves nothing. Here nodes are
karma's graph nodes (the import resolved titles and ids), and facts print node titles, which is what
the published code prints when ids and titles coincide. Node order is sorted node ids (karma's own
GraphRAG export writes rows in that order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx
from pydantic import BaseModel, Field

from graph.model import CkgEdge
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.facts import SCORE_DECIMALS, edge_stats
from retrieval.graph_view import GraphView

KEYWORD_RE = re.compile(r"\b\w{4,}\b")
"""A keyword: a whole word of at least four word characters (the published pattern)."""
SCENE_TOKEN_RE = re.compile(r"scene_\d+")
"""Scene names removed from the question before keywords are taken (case-sensitive, as published)."""
CHANGE_WORDS: tuple[str, ...] = ("change", "shift", "increase", "decrease", "transition", "move")
"""Substrings of an edge description that earn the change boost."""


class KeywordConfig(BaseModel):
    """Settings of the published keyword retriever (defaults are the published values)."""

    top_n: int = Field(default=25, ge=1)
    """Facts returned (published: 25)."""
    change_boost: float = 1.5
    """Factor for edges whose description mentions a change word (published: 1.5)."""
    strip_scene_tokens: bool = True
    """Remove ``scene_<digits>`` before taking keywords (published: yes)."""
    respect_k: bool = False
    """Cut the list at ``k`` too. Off by default: the published code always returns ``top_n``."""


def published_keywords(question: str, *, strip_scene_tokens: bool) -> set[str]:
    """The keyword set of a question as the published scripts take it."""
    text = SCENE_TOKEN_RE.sub("", question) if strip_scene_tokens else question
    return set(KEYWORD_RE.findall(text.lower()))


@dataclass
class PublishedGraph:
    """The published scripts' in-memory graph: a networkx DiGraph with lower-cased titles.

    Built from karma's graph in node-id and edge-id order; a second edge between the same ordered
    pair replaces the first one's data (networkx keeps the pair's position), as re-adding a row does
    in the published code.
    """

    view: GraphView
    digraph: nx.DiGraph
    degree: dict[str, int]

    @classmethod
    def of(cls, view: GraphView) -> PublishedGraph:
        digraph = nx.DiGraph()
        for node_id in view.node_ids:
            digraph.add_node(node_id, title=str(view.title(node_id)).lower())
        for edge_id in view.edge_ids:
            edge = view.graph.edges[edge_id]
            for end in (edge.source, edge.target):
                if end not in digraph:  # an endpoint without a node row has no title
                    digraph.add_node(end, title="")
            digraph.add_edge(edge.source, edge.target, edge=edge)
        return cls(view=view, digraph=digraph, degree=dict(digraph.degree()))

    def nodes_matching(self, words: set[str] | tuple[str, ...]) -> list[str]:
        """Nodes whose title contains any of ``words`` as a substring, in node order."""
        if not words:
            return []
        return [node for node, title in self.digraph.nodes(data="title") if any(w in title for w in words)]

    def edge(self, source: str, target: str) -> CkgEdge:
        return self.digraph.edges[source, target]["edge"]

    def name(self, node_id: str) -> str:
        """How a node is printed in a fact: its title (see the module docstring)."""
        return self.view.title(node_id)


def published_fact(edge: CkgEdge, text: str, score: float) -> Fact:
    """A Fact carrying the published text; id, endpoints and statistics as every karma fact."""
    return Fact.model_construct(
        id=edge.id,
        text=text,
        score=round(float(score), SCORE_DECIMALS),
        source=edge.source,
        target=edge.target,
        stats=edge_stats(edge),
    )


class KeywordRetriever(Retriever):
    """The published keyword retriever: source-degree ranked 1-hop out-edges of title matches."""

    name = "keyword"
    config_model = KeywordConfig

    def __init__(self, view: GraphView, config: KeywordConfig | None = None) -> None:
        self.view = view
        self.config = config or KeywordConfig()
        self.graph = PublishedGraph.of(view)

    def keywords(self, question: str) -> set[str]:
        return published_keywords(question, strip_scene_tokens=self.config.strip_scene_tokens)

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        graph = self.graph
        candidates: list[tuple[CkgEdge, str, float]] = []
        seen: set[str] = set()
        for node in graph.nodes_matching(self.keywords(query.question)):
            for neighbour in graph.digraph.successors(node):
                edge = graph.edge(node, neighbour)
                description = edge.description or ""
                text = f"Concept [{graph.name(node)}] -> [{graph.name(neighbour)}] via: {description}"
                if text in seen:
                    continue
                seen.add(text)
                boost = (
                    self.config.change_boost if any(w in description.lower() for w in CHANGE_WORDS) else 1.0
                )
                candidates.append((edge, text, graph.degree.get(node, 1) * boost))
        ranked = sorted(candidates, key=lambda item: item[2], reverse=True)  # stable: ties keep scan order
        limit = min(k, self.config.top_n) if self.config.respect_k else self.config.top_n
        facts = [published_fact(edge, text, score) for edge, text, score in ranked[:limit]]
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)
