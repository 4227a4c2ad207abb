"""A read-only, in-memory view of a CKG that every retriever shares: adjacency, degrees, texts.

Retrievers accept a CausalGraph, any GraphStore (networkx, Neo4j) or a graph folder. They all read
through this view, built once, so a question never costs a store round trip and iteration orders are
fixed (sorted ids), which is what makes every retriever deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from graph.model import CausalGraph, CkgEdge, CkgNode, GraphStore

RELATION_PHRASE: dict[str, str] = {
    "causes": "causes",
    "co_moves": "co-moves with",
    "text_relation": "is related to",
    "instance_of": "is an instance of",
}
"""How each edge relation reads in embedding texts and fact lines."""


def load_graph_dir(path: str | Path) -> CausalGraph:
    """Load a graph folder written by ``karma graph build`` (through the graph package's loader)."""
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"graph folder not found: {folder}")
    import graph as graph_pkg

    loader = getattr(graph_pkg, "load_graph", None)
    if loader is None:  # the builder package predates its loader: read the JSON export directly
        candidates = [folder / "graph.json"] if folder.is_dir() else [folder]
        for candidate in candidates:
            if candidate.is_file():
                return CausalGraph.model_validate_json(candidate.read_text())
        raise FileNotFoundError(f"no graph.json in {folder} and graph.load_graph is not available")
    loaded = loader(folder)
    return as_causal_graph(loaded)


def as_causal_graph(source: CausalGraph | GraphStore | str | Path) -> CausalGraph:
    """Normalise what a caller passes (graph, store, folder) into a CausalGraph."""
    if isinstance(source, CausalGraph):
        return source
    if isinstance(source, str | Path):
        return load_graph_dir(source)
    if isinstance(source, GraphStore):
        inner = getattr(source, "graph", None)
        if isinstance(inner, CausalGraph):
            return inner
        return CausalGraph(
            nodes={node.id: node for node in source.nodes()},
            edges={edge.id: edge for edge in source.edges()},
        )
    raise TypeError(f"expected a CausalGraph, a GraphStore or a graph folder, got {type(source).__name__}")


def node_text(node: CkgNode) -> str:
    """The text embedded for a node: its title plus its description when that adds anything."""
    if node.description and node.description.strip().lower() != node.title.strip().lower():
        return f"{node.title}. {node.description}"
    return node.title


@dataclass
class GraphView:
    """Sorted, indexed access to one CausalGraph."""

    graph: CausalGraph
    """The graph viewed."""
    content_hash: str = ""
    """``graph.content_hash()``, computed once."""
    node_ids: list[str] = field(default_factory=list)
    """Node ids, sorted."""
    edge_ids: list[str] = field(default_factory=list)
    """Edge ids, sorted."""
    out_adj: dict[str, list[CkgEdge]] = field(default_factory=dict)
    """Node id -> edges leaving it, sorted by id."""
    in_adj: dict[str, list[CkgEdge]] = field(default_factory=dict)
    """Node id -> edges entering it, sorted by id."""
    degree: dict[str, int] = field(default_factory=dict)
    """Node id -> number of incident edges (in + out)."""
    max_weight: float = 1.0
    """Largest edge weight (at least a tiny positive number), to normalise weights to [0, 1]."""

    @classmethod
    def of(cls, source: CausalGraph | GraphStore | str | Path) -> GraphView:
        graph = as_causal_graph(source)
        view = cls(graph=graph, content_hash=graph.content_hash())
        view.node_ids = sorted(graph.nodes)
        view.edge_ids = sorted(graph.edges)
        view.out_adj = {node_id: [] for node_id in view.node_ids}
        view.in_adj = {node_id: [] for node_id in view.node_ids}
        for edge_id in view.edge_ids:
            edge = graph.edges[edge_id]
            view.out_adj.setdefault(edge.source, []).append(edge)
            view.in_adj.setdefault(edge.target, []).append(edge)
        view.degree = {
            node_id: len(view.out_adj.get(node_id, [])) + len(view.in_adj.get(node_id, []))
            for node_id in set(view.out_adj) | set(view.in_adj)
        }
        weights = [edge.weight for edge in graph.edges.values()]
        view.max_weight = max([*weights, 1e-9])
        return view

    def title(self, node_id: str) -> str:
        node = self.graph.nodes.get(node_id)
        return node.title if node is not None else node_id

    def edge_text(self, edge: CkgEdge) -> str:
        """The text embedded for an edge: ``<cause title> causes <effect title>`` plus its description."""
        phrase = RELATION_PHRASE.get(edge.relation, edge.relation)
        head = f"{self.title(edge.source)} {phrase} {self.title(edge.target)}"
        return f"{head}. {edge.description}" if edge.description else head

    def node_texts(self) -> list[str]:
        return [node_text(self.graph.nodes[node_id]) for node_id in self.node_ids]

    def edge_texts(self) -> list[str]:
        return [self.edge_text(self.graph.edges[edge_id]) for edge_id in self.edge_ids]
