"""Push into the real Neo4j: shape, labels from the whitelist, provenance, idempotence, sync, safety."""

from __future__ import annotations

import json

import pytest

from graph.model import CkgEdge
from graph.neo4j import GraphPushError
from graph.neo4j.push import edge_merge_query, node_merge_query, push_graph
from graph.neo4j.schema import KIND_LABELS, RELATION_TYPES


def _counts(driver, database: str) -> dict[str, int]:
    def one(query: str) -> int:
        records, _, _ = driver.execute_query(query, database_=database)
        return records[0]["c"]

    counts = {
        "nodes": one("MATCH (n:KarmaNode) RETURN count(n) AS c"),
        "rels": one("MATCH (:KarmaNode)-[r]->(:KarmaNode) RETURN count(r) AS c"),
        "graphs": one("MATCH (g:KarmaGraph) RETURN count(g) AS c"),
    }
    for kind, label in KIND_LABELS.items():
        counts[kind] = one(f"MATCH (n:{label}) RETURN count(n) AS c")
    for relation, rel_type in RELATION_TYPES.items():
        counts[relation] = one(f"MATCH ()-[r:{rel_type}]->() RETURN count(r) AS c")
    return counts


def test_neo4j_push_writes_graph_with_labels_types_and_provenance(clean_db, neo4j_settings, graph_factory):
    graph = graph_factory(seed=1)
    report = push_graph(clean_db, graph, neo4j_settings.database, batch_size=37)
    db = neo4j_settings.database

    counts = _counts(clean_db, db)
    assert counts["nodes"] == len(graph.nodes) and counts["rels"] == len(graph.edges)
    assert counts["graphs"] == 1
    for kind in KIND_LABELS:
        assert counts[kind] == sum(n.kind == kind for n in graph.nodes.values())
    for relation in RELATION_TYPES:
        assert counts[relation] == sum(e.relation == relation for e in graph.edges.values())
    assert report.nodes_created == len(graph.nodes) + 1  # + the provenance node
    assert report.relationships_created == len(graph.edges)

    records, _, _ = clean_db.execute_query(
        "MATCH (g:KarmaGraph {name: 'karma'}) RETURN g.hash AS hash, g.build_config AS config", database_=db
    )
    assert records[0]["hash"] == graph.content_hash()
    assert json.loads(records[0]["config"]) == graph.build_config

    # A causal edge carries its statistics as relationship properties.
    edge = next(e for e in sorted(graph.edges.values(), key=lambda e: e.id) if e.relation == "causes")
    records, _, _ = clean_db.execute_query(
        "MATCH (a:KarmaNode {id: $s})-[r:CAUSES {id: $id}]->(b:KarmaNode {id: $t}) RETURN r {.*} AS r",
        s=edge.source,
        t=edge.target,
        id=edge.id,
        database_=db,
    )
    props = records[0]["r"]
    assert props["support"] == edge.support and props["confidence"] == edge.confidence
    assert props["lift"] == edge.lift and props["evidence"] == edge.evidence

    # Hostile titles are stored verbatim (parameters, not query text) and did no harm.
    records, _, _ = clean_db.execute_query(
        "MATCH (n:KarmaNode) WHERE n.title CONTAINS 'DETACH DELETE' RETURN n.title AS t", database_=db
    )
    assert [r["t"] for r in records] == ["brightness ' }) DETACH DELETE n //"]

    records, _, _ = clean_db.execute_query(
        "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names", database_=db
    )
    assert {"karma_node_id", "karma_graph_name", "karma_rel_causes_id"} <= set(records[0]["names"])


def test_neo4j_push_twice_creates_nothing(clean_db, neo4j_settings, graph_factory):
    graph = graph_factory(seed=2)
    push_graph(clean_db, graph, neo4j_settings.database)
    before = _counts(clean_db, neo4j_settings.database)
    again = push_graph(clean_db, graph, neo4j_settings.database, batch_size=50)
    after = _counts(clean_db, neo4j_settings.database)
    assert after == before
    assert (again.nodes_created, again.relationships_created) == (0, 0)
    assert (again.nodes_deleted, again.relationships_deleted) == (0, 0)


def test_neo4j_push_syncs_a_changed_graph(clean_db, neo4j_settings, graph_factory):
    db = neo4j_settings.database
    graph = graph_factory(seed=3)
    push_graph(clean_db, graph, db)

    changed = graph.model_copy(deep=True)
    dropped_node = sorted(changed.nodes)[-1]
    del changed.nodes[dropped_node]
    changed.edges = {k: e for k, e in changed.edges.items() if dropped_node not in (e.source, e.target)}
    dropped_edge = sorted(changed.edges)[0]
    del changed.edges[dropped_edge]
    kept = sorted(changed.edges)[1]
    changed.edges[kept] = changed.edges[kept].model_copy(update={"weight": 9.0})
    # A node changing kind must lose its old label.
    first = sorted(changed.nodes)[0]
    changed.nodes[first] = changed.nodes[first].model_copy(update={"kind": "concept"})

    report = push_graph(clean_db, changed, db)
    assert report.nodes_deleted == 1 and report.relationships_deleted >= 1
    counts = _counts(clean_db, db)
    assert counts["nodes"] == len(changed.nodes) and counts["rels"] == len(changed.edges)
    records, _, _ = clean_db.execute_query(
        "MATCH (n:KarmaNode {id: $id}) RETURN labels(n) AS labels", id=first, database_=db
    )
    assert sorted(records[0]["labels"]) == ["Concept", "KarmaNode"]
    records, _, _ = clean_db.execute_query(
        "MATCH ()-[r {id: $id}]->() RETURN r.weight AS w", id=kept, database_=db
    )
    assert records[0]["w"] == 9.0


def test_neo4j_push_rejects_dangling_edge_before_writing(clean_db, neo4j_settings, graph_factory):
    graph = graph_factory(seed=4, n_nodes=8, n_edges=10)
    source = sorted(graph.nodes)[0]
    graph.edges["bad"] = CkgEdge(id="bad", source=source, target="music:nowhere", relation="causes")
    with pytest.raises(GraphPushError, match=r"edge 'bad': target 'music:nowhere' is not a node"):
        push_graph(clean_db, graph, neo4j_settings.database)
    assert _counts(clean_db, neo4j_settings.database)["nodes"] == 0


def test_neo4j_merge_queries_take_labels_only_from_the_whitelist():
    for kind, label in KIND_LABELS.items():
        query = node_merge_query(kind)
        assert f"SET n:{label}" in query and "$rows" in query
    for relation, rel_type in RELATION_TYPES.items():
        assert f"[r:{rel_type} {{id: row.id}}]" in edge_merge_query(relation)
    with pytest.raises(KeyError):
        node_merge_query("Evil`) DETACH DELETE n //")
