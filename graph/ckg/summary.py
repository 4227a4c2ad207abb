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


def left_out_undirected(graph: CausalGraph) -> list[dict[str, object]]:
    """The associations the build left out for failing the precedence test (``build_config
    ["left_out_undirected"]``: source, target, statistics, ``fails``, ``reason``); empty for a graph
    built with ``keep_undirected``, before the key existed, or not by the builder."""
    records = graph.build_config.get("left_out_undirected") or []
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def summarize(graph: CausalGraph, top: int = 10) -> dict[str, object]:
    """Node counts by kind, edge counts by relation, content hash, the strongest causes edges and the
    associations left out without an edge (no evidence of direction)."""
    return {
        "content_hash": graph.content_hash(),
        "nodes_by_kind": dict(sorted(Counter(n.kind for n in graph.nodes.values()).items())),
        "edges_by_relation": dict(sorted(Counter(e.relation for e in graph.edges.values()).items())),
        "top_causes": strongest(graph, "causes", top),
        "left_out_undirected": left_out_undirected(graph),
    }
