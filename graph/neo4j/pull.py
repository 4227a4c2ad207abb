"""Read the karma graph back out of Neo4j as a CausalGraph (the inverse of push)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel

from graph.model import CausalGraph
from graph.neo4j.push import GRAPH_NAME
from graph.neo4j.schema import GRAPH_LABEL, NODE_LABEL, RELATION_TYPES, edge_from_props, node_from_props

if TYPE_CHECKING:
    import neo4j


class Provenance(BaseModel):
    """The (:KarmaGraph) node written by the last push."""

    hash: str
    """content_hash() of the pushed graph."""
    build_config: dict[str, object]
    """The builder config the graph was made with."""
    node_count: int
    """Nodes pushed."""
    edge_count: int
    """Edges pushed."""
    karma_version: str
    """karma version that pushed."""
    pushed_at: str
    """Server time of the push (ISO 8601)."""


def read_provenance(driver: neo4j.Driver, database: str = "neo4j") -> Provenance | None:
    """The provenance of the graph in the database, or None when nothing was pushed."""
    records, _, _ = driver.execute_query(
        f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) RETURN g {{.*}} AS g", name=GRAPH_NAME, database_=database
    )
    if not records:
        return None
    g = records[0]["g"]
    return Provenance(
        hash=g["hash"],
        build_config=json.loads(g.get("build_config") or "{}"),
        node_count=g.get("node_count", 0),
        edge_count=g.get("edge_count", 0),
        karma_version=g.get("karma_version", "unknown"),
        pushed_at=str(g.get("pushed_at", "")),
    )


def pull_graph(driver: neo4j.Driver, database: str = "neo4j") -> CausalGraph:
    """Every karma node and relationship in the database, with the pushed build config."""
    node_records, _, _ = driver.execute_query(
        f"MATCH (n:{NODE_LABEL}) RETURN n {{.*}} AS n ORDER BY n.id", database_=database
    )
    edge_records, _, _ = driver.execute_query(
        f"MATCH (a:{NODE_LABEL})-[r]->(b:{NODE_LABEL}) WHERE type(r) IN $types "
        "RETURN type(r) AS type, r {.*} AS r, a.id AS source, b.id AS target ORDER BY r.id",
        types=sorted(RELATION_TYPES.values()),
        database_=database,
    )
    provenance = read_provenance(driver, database)
    graph = CausalGraph(build_config=provenance.build_config if provenance else {})
    for record in node_records:
        node = node_from_props(record["n"])
        graph.nodes[node.id] = node
    for record in edge_records:
        edge = edge_from_props(record["r"], record["source"], record["target"], record["type"])
        graph.edges[edge.id] = edge
    return graph
