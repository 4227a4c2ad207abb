"""A short numeric picture of a graph (what ``karma graph stats`` prints)."""

from __future__ import annotations

from collections import Counter

from graph.model import CausalGraph, CkgEdge


def strongest(graph: CausalGraph, relation: str = "causes", top: int | None = None) -> list[CkgEdge]:
    """Edges of one relation by (-weight, id)."""
    edges = sorted(
        (e for e in graph.edges.values() if e.relation == relation), key=lambda e: (-e.weight, e.id)
    )
    return edges if top is None else edges[:top]


def summarize(graph: CausalGraph, top: int = 10) -> dict[str, object]:
    """Node counts by kind, edge counts by relation, content hash and the strongest causes edges."""
    return {
        "content_hash": graph.content_hash(),
        "nodes_by_kind": dict(sorted(Counter(n.kind for n in graph.nodes.values()).items())),
        "edges_by_relation": dict(sorted(Counter(e.relation for e in graph.edges.values()).items())),
        "top_causes": strongest(graph, "causes", top),
    }
