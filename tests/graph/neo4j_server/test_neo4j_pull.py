"""Round trip through the real Neo4j: pull returns exactly the pushed graph."""

from __future__ import annotations

from graph.neo4j.pull import pull_graph, read_provenance
from graph.neo4j.push import push_graph


def test_neo4j_pull_equals_pushed_graph(clean_db, neo4j_settings, graph_factory):
    graph = graph_factory(seed=5)
    push_graph(clean_db, graph, neo4j_settings.database)
    pulled = pull_graph(clean_db, neo4j_settings.database)
    assert pulled.content_hash() == graph.content_hash()
    assert pulled.nodes == graph.nodes
    assert pulled.edges == graph.edges
    assert pulled.build_config == graph.build_config
    provenance = read_provenance(clean_db, neo4j_settings.database)
    assert provenance is not None and provenance.hash == graph.content_hash()
    assert (provenance.node_count, provenance.edge_count) == (len(graph.nodes), len(graph.edges))


def test_neo4j_pull_of_empty_database(clean_db, neo4j_settings):
    pulled = pull_graph(clean_db, neo4j_settings.database)
    assert pulled.nodes == {} and pulled.edges == {} and pulled.build_config == {}
    assert read_provenance(clean_db, neo4j_settings.database) is None
