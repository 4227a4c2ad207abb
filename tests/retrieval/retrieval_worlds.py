"""Hand-made causal graphs for the retrieval tests (small, fully known)."""

from __future__ import annotations

from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.events import parse_event_id

VISUAL = [
    "visual:brightness:up",
    "visual:brightness:down",
    "visual:motion:up",
    "visual:motion:down",
    "visual:saturation:up",
    "visual:saturation:down",
    "visual:action:standing->dancing",
]
MUSIC = [
    "music:loudness:up",
    "music:loudness:down",
    "music:tempo:up",
    "music:tempo:down",
    "music:mode:major_to_minor",
    "music:mode:minor_to_major",
    "music:key:changed",
]
# (cause, effect, relation, support, confidence, lift, precedence)
EDGES = [
    ("visual:brightness:up", "music:loudness:up", "causes", 120, 0.70, 2.1, 0.35),
    ("visual:brightness:down", "music:loudness:down", "causes", 110, 0.68, 2.0, 0.33),
    ("visual:motion:up", "music:tempo:up", "causes", 140, 0.75, 2.3, 0.40),
    ("visual:motion:down", "music:tempo:down", "causes", 130, 0.72, 2.2, 0.38),
    ("visual:brightness:down", "music:mode:major_to_minor", "causes", 60, 0.40, 1.9, 0.25),
    ("visual:brightness:up", "music:mode:minor_to_major", "causes", 55, 0.38, 1.8, 0.22),
    ("visual:action:standing->dancing", "music:tempo:up", "causes", 30, 0.55, 1.7, 0.20),
    # planted co-movement: saturation moves with loudness but does not cause it
    ("visual:saturation:up", "music:loudness:up", "co_moves", 90, 0.50, 1.5, 0.01),
    ("visual:saturation:down", "music:loudness:down", "co_moves", 85, 0.48, 1.4, 0.00),
    ("visual:saturation:up", "music:key:changed", "co_moves", 40, 0.30, 1.3, 0.02),
]


def _weight(support: int, confidence: float, lift: float, relation: str) -> float:
    factor = 1.0 if relation == "causes" else 0.25
    return round(factor * confidence * (lift - 1.0) * support / (support + 10), 4)


def small_graph(build_config: dict[str, object] | None = None) -> CausalGraph:
    """A graph with causal edges, planted co-movement and concept nodes, like the builder's output."""
    nodes: dict[str, CkgNode] = {}
    for event_id in VISUAL + MUSIC:
        event = parse_event_id(event_id)
        kind = "visual_change" if event.modality == "visual" else "music_change"
        nodes[event_id] = CkgNode(id=event_id, title=event.title, kind=kind, frequency=100)
    edges: dict[str, CkgEdge] = {}
    for source, target, relation, support, confidence, lift, precedence in EDGES:
        edge_id = f"{source}->{target}|{relation}"
        edges[edge_id] = CkgEdge(
            id=edge_id,
            source=source,
            target=target,
            relation=relation,
            support=support,
            confidence=confidence,
            lift=lift,
            precedence=precedence,
            weight=_weight(support, confidence, lift, relation),
            evidence=[f"vid{i:03d}/t000" for i in range(3)],
        )
    for event_id in VISUAL + MUSIC:
        variable = event_id.split(":")[1]
        concept = f"concept:{variable}"
        nodes.setdefault(concept, CkgNode(id=concept, title=variable, kind="concept"))
        edge_id = f"{event_id}->{concept}|instance_of"
        edges[edge_id] = CkgEdge(id=edge_id, source=event_id, target=concept, relation="instance_of")
    return CausalGraph(
        nodes=nodes,
        edges=edges,
        build_config=build_config or {"thresholds": {"brightness": 10.0, "motion": 2.0, "saturation": 8.0}},
    )
