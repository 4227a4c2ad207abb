"""Fixtures for the retrieval tests: a hand-made graph, the packaged embedder, a small synthetic world.

The synthetic world is real: ``karma.synth.generate`` writes it, ``graph.build_graph`` builds the graph
from every video except the held-out ones (the leakage-safe split an evaluation uses), and the recall
tests score the held-out questions against the world's ``question_truth.jsonl``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.core.events import parse_event_id

REPO = Path(__file__).resolve().parents[2]

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


def make_small_graph(build_config: dict[str, object] | None = None) -> CausalGraph:
    """Causal edges, planted co-movement and concept nodes, shaped like the builder's output."""
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


@pytest.fixture
def small_graph() -> CausalGraph:
    return make_small_graph()


@pytest.fixture(scope="session")
def embedder():
    """The packaged all-MiniLM-L6-v2 (offline); one instance so its text cache serves every test."""
    from retrieval.embed import Embedder

    return Embedder()


@dataclass
class SynthWorld:
    """A generated world, its dataset, and a graph built without the held-out videos."""

    world_dir: Path
    graph_dir: Path
    graph: CausalGraph
    held_out: list[str]
    dataset: object


@pytest.fixture(scope="session")
def synth_world(tmp_path_factory: pytest.TempPathFactory) -> SynthWorld:
    from graph import BuildConfig, build_graph, save_graph
    from karma.data import load_dataset
    from karma.synth import generate, load_world

    root = tmp_path_factory.mktemp("retrieval_world")
    world_dir = root / "world"
    generate(load_world(REPO / "data" / "worlds" / "default.yaml"), world_dir, videos=100, seed=11)
    dataset = load_dataset(world_dir)
    videos = sorted({t.video_id for t in dataset.transitions})
    held_out = videos[:8]
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig(exclude_videos=held_out))
    graph_dir = root / "graph"
    save_graph(graph, graph_dir)
    return SynthWorld(
        world_dir=world_dir, graph_dir=graph_dir, graph=graph, held_out=held_out, dataset=dataset
    )


@pytest.fixture
def graph_factory():
    """``make_small_graph`` itself, for tests that need a variant (other build_config, extra edges)."""
    return make_small_graph
