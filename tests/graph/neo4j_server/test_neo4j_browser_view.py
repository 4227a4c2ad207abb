"""Neo4j as a person reads it (issue 39, item 6), on the real server: a push writes short captions
and merges a cause's text_relation twin into it; the guide's views draw one arrow per cause; and
``karma ask --retriever neo4j-hybrid`` names the graph to push when the database holds another one,
then answers from Neo4j once that graph is pushed."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graph import BuildConfig, build_graph
from graph.neo4j.caption import node_captions
from graph.neo4j.guide import browser_queries
from graph.neo4j.pull import pull_graph
from graph.neo4j.push import push_graph

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "data" / "sample"

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def sample_graph():
    from karma.data import load_dataset

    dataset = load_dataset(SAMPLE)
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig(min_support=2))
    assert any(e.relation == "text_relation" for e in graph.edges.values())
    return graph


def _run(driver, database: str, query: str, **params):
    records, _, _ = driver.execute_query(query, params, database_=database)
    return records


def test_a_push_writes_captions_and_merges_twins_and_pull_still_returns_the_graph(
    clean_db, neo4j_settings, sample_graph
) -> None:
    db = neo4j_settings.database
    push_graph(clean_db, sample_graph, db)
    stored = {
        r["id"]: r["caption"]
        for r in _run(clean_db, db, "MATCH (n:KarmaNode) RETURN n.id AS id, n.caption AS caption")
    }
    assert stored == node_captions(sample_graph)
    assert any(c.endswith((" ↑", " ↓")) for c in stored.values()) and len(set(stored.values())) == len(stored)
    twins = _run(
        clean_db, db,
        "MATCH (a)-[t:TEXT_RELATION]->(b) WHERE t.twin_of IS NOT NULL "
        "MATCH (a)-[c:CAUSES {id: t.twin_of}]->(b) RETURN c.text_support AS merged, t.support AS support, c.caption AS caption",
    )  # fmt: skip
    assert twins and all(r["merged"] == r["support"] for r in twins)
    assert all(r["caption"].endswith(f"· text {r['support']}") for r in twins)
    pulled = pull_graph(clean_db, db)  # display properties are not CKG fields
    assert pulled.content_hash() == sample_graph.content_hash()


def test_a_repeated_push_removes_merged_text_when_the_twin_is_gone(
    clean_db, neo4j_settings, sample_graph
) -> None:
    db = neo4j_settings.database
    push_graph(clean_db, sample_graph, db)
    without = sample_graph.model_copy(deep=True)
    for key in [k for k, e in without.edges.items() if e.relation == "text_relation"]:
        del without.edges[key]
    push_graph(clean_db, without, db)
    assert _run(clean_db, db, "MATCH ()-[c:CAUSES]->() WHERE c.text_support IS NOT NULL RETURN c.id") == []


def test_the_guides_views_draw_one_arrow_per_cause(clean_db, neo4j_settings, sample_graph) -> None:
    """The overview and the neighbourhood, run with their :param values, return at most one
    relationship per pair of nodes (the Browser, with 'Connect result nodes' off, draws only these)."""
    db = neo4j_settings.database
    push_graph(clean_db, sample_graph, db)
    queries = {q.title.split(" (")[0].split(":")[0]: q for q in browser_queries(sample_graph)}
    overview = _run(clean_db, db, queries["Overview"].cypher)
    assert overview and Counter((r["c"]["id"], r["e"]["id"]) for r in overview).most_common(1)[0][1] == 1
    twin_nodes = _run(
        clean_db, db, "MATCH (a)-[t:TEXT_RELATION]->() WHERE t.twin_of IS NOT NULL RETURN a.id AS id"
    )
    neighbourhood = queries["Neighbourhood of a node"]
    assert twin_nodes
    for record in twin_nodes:
        types: dict[tuple[str, str], set[str]] = {}
        for row in _run(clean_db, db, neighbourhood.cypher, node=record["id"]):
            for rel in row["p"].relationships:
                types.setdefault((rel.start_node["id"], rel.end_node["id"]), set()).add(rel.type)
        assert types and all(not {"CAUSES", "TEXT_RELATION"} <= drawn for drawn in types.values())


@pytest.mark.slow
def test_karma_ask_with_neo4j_hybrid_names_the_graph_to_push_then_answers_after_the_push(
    clean_db, neo4j_settings, sample_graph, tmp_path: Path, monkeypatch
) -> None:
    from karma.cli.main import app

    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))  # ask's held-out graph lands here
    runner = CliRunner()
    pushed = tmp_path / "whole-graph"
    from graph.io import save_graph

    save_graph(sample_graph, pushed)
    result = runner.invoke(app, ["graph", "push", str(pushed), "--embeddings"])
    assert result.exit_code == 0, result.output
    ask = ["ask", "--retriever", "neo4j-hybrid", "--model", "smollm2-135m"]
    result = runner.invoke(app, ask)
    assert result.exit_code == 1
    line = result.output.strip().splitlines()[-1]
    assert "internal error" not in line and f"Neo4j holds graph {sample_graph.content_hash()}" in line
    match = re.search(r"karma graph push (\S+) --embeddings", line)
    assert match, line
    to_push = Path(match.group(1))
    assert to_push.is_file() and to_push.is_relative_to(tmp_path / "cache")  # ask's held-out graph
    result = runner.invoke(app, ["graph", "push", str(to_push), "--embeddings"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ask)
    assert result.exit_code == 0, result.output
    assert "neo4j-hybrid" in result.output and "Answer:" in result.output
