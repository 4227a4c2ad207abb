"""Fixtures for the Neo4j tests: the REAL server started by scripts/neo4j.sh (never a mock).

When no server answers: outside CI the tests skip with the reason; with CI=true they fail, because CI
starts the server (scripts/test.sh) and a silent skip there would hide a broken setup.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from graph.neo4j import Neo4jSettings, Neo4jUnavailableError, open_driver
from graph.neo4j.push import clear_karma_graph

# Data that would break a query if it were ever spliced into Cypher text.
NASTY_TITLES = [
    "brightness ' }) DETACH DELETE n //",
    'quote " and backslash \\ and `backtick`',
    "ünïcödé — 音楽 🎵",
    "$param {map: 1}",
]


@pytest.fixture(scope="session")
def neo4j_settings() -> Neo4jSettings:
    settings = Neo4jSettings.resolve()
    try:
        open_driver(settings).close()
    except Neo4jUnavailableError as exc:
        message = f"no Neo4j at {settings.uri}: start it with `bash scripts/neo4j.sh start` ({exc})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {message}")
        pytest.skip(message)
    return settings


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_settings: Neo4jSettings) -> Iterator[object]:
    driver = open_driver(neo4j_settings)
    yield driver
    driver.close()


@pytest.fixture
def clean_db(neo4j_driver, neo4j_settings: Neo4jSettings):
    """The karma subgraph emptied before (and after) the test."""
    clear_karma_graph(neo4j_driver, neo4j_settings.database)
    yield neo4j_driver
    clear_karma_graph(neo4j_driver, neo4j_settings.database)


def make_graph(seed: int = 0, n_nodes: int = 60, n_edges: int = 240) -> CausalGraph:
    """A deterministic CKG exercising every node kind and relation, weight ties, empty lists and
    hostile strings."""
    rng = random.Random(seed)
    kinds = ["visual_change", "music_change", "concept", "text"]
    graph = CausalGraph(build_config={"min_support": 2, "thresholds": {"brightness": 0.1}, "seed": seed})
    for i in range(n_nodes):
        kind = kinds[i % 4]
        node_id = f"{kind}:n{i:03d}"
        title = NASTY_TITLES[i] if i < len(NASTY_TITLES) else f"{kind} node {i}"
        graph.nodes[node_id] = CkgNode(
            id=node_id, title=title, kind=kind, description=f"node {i}: {title}", frequency=rng.randint(0, 50)
        )
    ids = sorted(graph.nodes)
    relations = ["causes", "co_moves", "text_relation", "instance_of"]
    while len(graph.edges) < n_edges:
        source, target = rng.sample(ids, 2)
        relation = rng.choice(relations)
        edge_id = f"{source}->{target}|{relation}"
        if edge_id in graph.edges:
            continue
        evidence = [f"vid{rng.randint(0, 9)}/t{rng.randint(0, 99):03d}" for _ in range(rng.randint(0, 4))]
        graph.edges[edge_id] = CkgEdge(
            id=edge_id,
            source=source,
            target=target,
            relation=relation,
            support=rng.randint(0, 30),
            confidence=rng.random(),
            lift=rng.uniform(0.5, 3.0),
            precedence=rng.uniform(-0.2, 0.4),
            # Few distinct weights, so ties are broken by id as the GraphStore contract says.
            weight=rng.choice([0.0, 0.25, 0.5, 1.0, 1.5]),
            evidence=evidence,
            source_questions=[f"q{rng.randint(0, 9)}"] if relation == "text_relation" else [],
            description=f"{source} -> {target} ({relation})",
        )
    return graph


@pytest.fixture
def graph_factory() -> Callable[..., CausalGraph]:
    return make_graph
