"""karma's path retriever (``karma-paths``): the published idea on karma's own graph shape.

The published baseline is ``retrieval.paths`` (``paths``); docs/retrieval.md lists every
difference. This variant: the question's keywords select nodes by title substring; shortest paths of
at most two hops, **direction ignored**, are taken from the ``concept:<variable>`` nodes of ten feature
variables (a graph without concept nodes falls back to their event nodes) to every keyword node;
facts are ranked by the length of the shortest path they lie on (shorter first), ties by edge id.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from graph.model import CkgEdge
from retrieval.base import RetrievalQuery, RetrievalResult, Retriever
from retrieval.facts import make_fact, rank
from retrieval.graph_view import GraphView
from retrieval.keyword_karma import KarmaKeywordConfig, KarmaKeywordRetriever

KARMA_PATH_FEATURES: tuple[str, ...] = (
    "brightness",
    "visual_intensity",
    "motion",
    "saturation",
    "contrast",
    "loudness",
    "key",
    "mood",
    "object",
    "action",
)
"""The feature variables of the published scene-feature files (this variant's fixed path endpoints)."""


class KarmaPathsConfig(BaseModel):
    """Settings of karma's path retriever."""

    max_hops: int = Field(default=2, ge=1)
    """Longest path (in edges) between a feature node and a keyword node."""
    max_facts: int = Field(default=3, ge=1)
    """Facts kept (the published value is 3); ``k`` cuts further."""
    min_keyword_length: int = Field(default=4, ge=1)
    """Words of the question at least this long are keywords."""
    features: list[str] = Field(default_factory=lambda: list(KARMA_PATH_FEATURES))
    """Variables whose nodes are the fixed path endpoints."""


class KarmaPathsRetriever(Retriever):
    """Shortest undirected paths (<= 2 hops) between feature concept nodes and keyword nodes."""

    name = "karma-paths"
    config_model = KarmaPathsConfig

    def __init__(self, view: GraphView, config: KarmaPathsConfig | None = None) -> None:
        self.view = view
        self.config = config or KarmaPathsConfig()
        self._keywords = KarmaKeywordRetriever(
            view, KarmaKeywordConfig(min_keyword_length=self.config.min_keyword_length)
        )
        self.feature_nodes = self._feature_nodes()
        # Undirected adjacency, neighbours in id order; between one pair the edge with the smallest id.
        neighbours: dict[str, dict[str, CkgEdge]] = {}
        for edge_id in view.edge_ids:
            edge = view.graph.edges[edge_id]
            for a, b in ((edge.source, edge.target), (edge.target, edge.source)):
                neighbours.setdefault(a, {}).setdefault(b, edge)
        self._neighbours = {
            node: [(other, by_node[other]) for other in sorted(by_node)]
            for node, by_node in neighbours.items()
        }

    def _feature_nodes(self) -> list[str]:
        concepts = [f"concept:{name}" for name in self.config.features]
        present = [node_id for node_id in concepts if node_id in self.view.graph.nodes]
        if present:
            return sorted(present)
        wanted = set(self.config.features)
        return [
            node_id
            for node_id in self.view.node_ids
            if node_id.count(":") >= 2 and node_id.split(":", 2)[1] in wanted
        ]

    def _paths_from(self, start: str, targets: set[str]) -> dict[str, list[CkgEdge]]:
        """Breadth-first shortest paths (as edge lists) from ``start`` to each reachable target."""
        found: dict[str, list[CkgEdge]] = {}
        frontier: list[tuple[str, list[CkgEdge]]] = [(start, [])]
        visited = {start}
        for _ in range(self.config.max_hops):
            next_frontier: list[tuple[str, list[CkgEdge]]] = []
            for node, path in frontier:
                for other, edge in self._neighbours.get(node, []):
                    if other in visited:
                        continue
                    visited.add(other)
                    new_path = [*path, edge]
                    if other in targets:
                        found[other] = new_path
                    next_frontier.append((other, new_path))
            frontier = next_frontier
        return found

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        targets = set(self._keywords.matched_nodes(query)) - set(self.feature_nodes)
        scored: dict[str, float] = {}
        if targets:
            for feature in self.feature_nodes:
                for path in self._paths_from(feature, targets).values():
                    for edge in path:
                        scored[edge.id] = max(scored.get(edge.id, 0.0), 1.0 / len(path))
        limit = min(k, self.config.max_facts)
        facts = [
            make_fact(self.view, self.view.graph.edges[edge_id], score)
            for edge_id, score in rank(scored)[:limit]
        ]
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)
