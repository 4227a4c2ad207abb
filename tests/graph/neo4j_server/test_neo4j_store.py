"""The Cypher-backed GraphStore against the networkx store on the same graphs, on the real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph import BuildConfig, NetworkxStore, build_graph
from graph.neo4j.push import push_graph
from graph.neo4j.store import Neo4jStore

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"


def _assert_parity(nx_store: NetworkxStore, neo_store: Neo4jStore, seeds_sets: list[list[str]]) -> None:
    assert neo_store.nodes() == nx_store.nodes()
    assert neo_store.edges() == nx_store.edges()
    for node in nx_store.nodes():
        assert neo_store.node(node.id) == node
        assert neo_store.out_edges(node.id) == nx_store.out_edges(node.id), node.id
        assert neo_store.in_edges(node.id) == nx_store.in_edges(node.id), node.id
    assert neo_store.node("no:such:node") is None
    assert neo_store.out_edges("no:such:node") == []
    for seeds in seeds_sets:
        for hops in range(4):
            assert neo_store.expand(seeds, hops) == nx_store.expand(seeds, hops), (seeds, hops)


def test_neo4j_store_matches_networkx_on_generated_graph(clean_db, neo4j_settings, graph_factory):
    graph = graph_factory(seed=7, n_nodes=40, n_edges=120)
    push_graph(clean_db, graph, neo4j_settings.database)
    ids = sorted(graph.nodes)
    seeds_sets = [[ids[0]], [ids[5], ids[17], "no:such:node"], [], ids[::9]]
    store = Neo4jStore(clean_db, neo4j_settings.database)
    _assert_parity(NetworkxStore(graph), store, seeds_sets)
    # Ties in weight are ordered by id, as the GraphStore contract says.
    edges = store.expand([ids[0]], 2)
    assert edges == sorted(edges, key=lambda e: (-e.weight, e.id))
    with pytest.raises(ValueError):
        store.expand([ids[0]], -1)


@pytest.fixture(scope="module")
def sample_graph():
    from karma.data import load_dataset

    dataset = load_dataset(SAMPLE)
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig(min_support=1, min_lift=0.0))
    return dataset, graph


def test_neo4j_store_matches_networkx_on_built_sample_graph(clean_db, neo4j_settings, sample_graph):
    _, graph = sample_graph
    push_graph(clean_db, graph, neo4j_settings.database)
    store = Neo4jStore(clean_db, neo4j_settings.database)
    music = sorted(n for n, node in graph.nodes.items() if node.kind == "music_change")
    visual = sorted(n for n, node in graph.nodes.items() if node.kind == "visual_change")
    _assert_parity(NetworkxStore(graph), store, [music[:1], visual[:3], music + visual])
    assert store.graph == graph  # whole-graph pull keeps the build config


@pytest.mark.parametrize("retriever", ["keyword", "paths", pytest.param("hybrid", marks=pytest.mark.slow)])
def test_neo4j_store_gives_retrievers_the_same_facts(clean_db, neo4j_settings, sample_graph, retriever):
    from retrieval import build_query, get_retriever

    dataset, graph = sample_graph
    push_graph(clean_db, graph, neo4j_settings.database)
    queries = [
        build_query(t, q, dataset.features.get(t.video_id)) for t in dataset.transitions for q in t.questions
    ]
    assert queries
    config = {}
    if retriever == "hybrid":
        from retrieval.embed import Embedder

        config["embedder"] = Embedder()  # one model load for both stores
    on_nx = get_retriever(retriever, NetworkxStore(graph), **config).retrieve_many(queries, k=8)
    neo_store = Neo4jStore(clean_db, neo4j_settings.database)
    on_neo = get_retriever(retriever, neo_store, **config).retrieve_many(queries, k=8)
    assert on_neo == on_nx
    assert any(result.facts for result in on_nx)
