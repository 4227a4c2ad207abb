"""NetworkxStore: lookups by id and title, deterministic (-weight, id) ordering, hop expansion."""

from __future__ import annotations

import pytest

from graph import NetworkxStore
from graph.model import CausalGraph, CkgEdge, CkgNode


def graph() -> CausalGraph:
    nodes = {
        nid: CkgNode(id=nid, title=title, kind=kind)
        for nid, title, kind in [
            ("visual:brightness:up", "brightness increases", "visual_change"),
            ("visual:motion:up", "motion increases", "visual_change"),
            ("music:loudness:up", "loudness increases", "music_change"),
            ("music:tempo:up", "tempo increases", "music_change"),
            ("concept:loudness", "loudness", "concept"),
            ("concept:tempo", "tempo", "concept"),
        ]
    }
    spec = [
        ("visual:brightness:up", "music:loudness:up", "causes", 0.5),
        ("visual:brightness:up", "music:loudness:up", "text_relation", 0.5),
        ("visual:brightness:up", "music:tempo:up", "co_moves", 0.1),
        ("visual:motion:up", "music:tempo:up", "causes", 0.7),
        ("music:loudness:up", "concept:loudness", "instance_of", 0.0),
        ("music:tempo:up", "concept:tempo", "instance_of", 0.0),
    ]
    edges = {}
    for source, target, relation, weight in spec:
        eid = f"{source}->{target}|{relation}"
        edges[eid] = CkgEdge(id=eid, source=source, target=target, relation=relation, weight=weight)
    return CausalGraph(nodes=nodes, edges=edges)


def test_lookups_and_ordering() -> None:
    store = NetworkxStore(graph())
    assert store.name == "networkx"
    assert store.node("music:tempo:up").title == "tempo increases"
    assert store.node("nope") is None
    assert store.resolve("Loudness Increases").id == "music:loudness:up"
    assert store.resolve("visual:motion:up").id == "visual:motion:up"
    assert store.resolve("louder") is None
    assert [n.id for n in store.nodes()] == sorted(graph().nodes)
    assert [e.id for e in store.edges()] == sorted(graph().edges)
    # Equal weights tie-break by id: causes < text_relation.
    assert [e.id for e in store.out_edges("visual:brightness:up")] == [
        "visual:brightness:up->music:loudness:up|causes",
        "visual:brightness:up->music:loudness:up|text_relation",
        "visual:brightness:up->music:tempo:up|co_moves",
    ]
    assert [e.source for e in store.in_edges("music:tempo:up")] == [
        "visual:motion:up",
        "visual:brightness:up",
    ]
    assert store.out_edges("missing") == [] and store.in_edges("missing") == []


def test_expand_by_hops_in_both_directions() -> None:
    store = NetworkxStore(graph())
    one = {e.id for e in store.expand(["music:tempo:up"], 1)}
    assert one == {
        "visual:motion:up->music:tempo:up|causes",
        "visual:brightness:up->music:tempo:up|co_moves",
        "music:tempo:up->concept:tempo|instance_of",
    }
    two = store.expand(["music:tempo:up"], 2)
    assert {e.id for e in two} == set(graph().edges) - {"music:loudness:up->concept:loudness|instance_of"}
    assert [e.weight for e in two] == sorted((e.weight for e in two), reverse=True)
    assert len(store.expand(["music:tempo:up"], 3)) == len(graph().edges)
    assert store.expand(["music:tempo:up"], 0) == [] and store.expand(["unknown"], 2) == []
    with pytest.raises(ValueError):
        store.expand(["music:tempo:up"], -1)


def test_edges_must_join_known_nodes() -> None:
    broken = graph()
    broken.edges["x"] = CkgEdge(
        id="x", source="visual:brightness:up", target="music:nothing:up", relation="causes"
    )
    with pytest.raises(ValueError, match="edge x joins a node that is not in the graph"):
        NetworkxStore(broken)
