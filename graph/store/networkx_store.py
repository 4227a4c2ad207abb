"""The embedded default graph store: the CKG held in a networkx MultiDiGraph in this process."""

from __future__ import annotations

import networkx as nx

from graph.model import CausalGraph, CkgEdge, CkgNode, GraphStore


def _ranked(edges: list[CkgEdge]) -> list[CkgEdge]:
    return sorted(edges, key=lambda e: (-e.weight, e.id))


class NetworkxStore(GraphStore):
    """Read access to a CausalGraph through networkx (nodes keyed by id, edges keyed by edge id)."""

    name = "networkx"

    def __init__(self, graph: CausalGraph) -> None:
        self.graph = graph
        self.nx = nx.MultiDiGraph()
        for node_id in sorted(graph.nodes):
            self.nx.add_node(node_id, node=graph.nodes[node_id])
        for edge_id in sorted(graph.edges):
            edge = graph.edges[edge_id]
            if edge.source not in graph.nodes or edge.target not in graph.nodes:
                raise ValueError(f"edge {edge_id} joins a node that is not in the graph")
            self.nx.add_edge(edge.source, edge.target, key=edge_id, edge=edge)
        self._by_title = {node.title.casefold(): node.id for node in graph.nodes.values()}

    def node(self, node_id: str) -> CkgNode | None:
        return self.graph.nodes.get(node_id)

    def resolve(self, id_or_title: str) -> CkgNode | None:
        """The node with this id, else the node with this title (case-insensitive), else None."""
        node = self.graph.nodes.get(id_or_title)
        if node is not None:
            return node
        node_id = self._by_title.get(id_or_title.strip().casefold())
        return self.graph.nodes[node_id] if node_id is not None else None

    def nodes(self) -> list[CkgNode]:
        return [self.graph.nodes[k] for k in sorted(self.graph.nodes)]

    def edges(self) -> list[CkgEdge]:
        return [self.graph.edges[k] for k in sorted(self.graph.edges)]

    def out_edges(self, node_id: str) -> list[CkgEdge]:
        if node_id not in self.nx:
            return []
        return _ranked([data["edge"] for _, _, data in self.nx.out_edges(node_id, data=True)])

    def in_edges(self, node_id: str) -> list[CkgEdge]:
        if node_id not in self.nx:
            return []
        return _ranked([data["edge"] for _, _, data in self.nx.in_edges(node_id, data=True)])

    def expand(self, seeds: list[str], hops: int) -> list[CkgEdge]:
        """Edges touching a node at distance < ``hops`` from a seed, ignoring direction; hop 1 is the
        seeds' own edges, hop 2 adds the edges of their neighbours, and so on."""
        if hops < 0:
            raise ValueError(f"hops must be >= 0, got {hops}")
        frontier = {s for s in seeds if s in self.nx}
        visited = set(frontier)
        found: dict[str, CkgEdge] = {}
        for _ in range(hops):
            reached: set[str] = set()
            for node_id in sorted(frontier):
                for _, other, data in self.nx.out_edges(node_id, data=True):
                    found[data["edge"].id] = data["edge"]
                    reached.add(other)
                for other, _, data in self.nx.in_edges(node_id, data=True):
                    found[data["edge"].id] = data["edge"]
                    reached.add(other)
            frontier = reached - visited
            visited |= reached
            if not frontier:
                break
        return _ranked(list(found.values()))
