"""Push a CausalGraph into Neo4j: constraints, batched ``UNWIND ... MERGE``, provenance; idempotent.

A push makes the database's karma subgraph equal to the pushed graph: nodes and relationships the
graph no longer has are deleted, the rest are merged by id, so pushing the same graph twice creates
nothing. One karma graph per database (Community edition has a single user database).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from graph.model import CausalGraph
from graph.neo4j.caption import EDGE_VIEW_PROPERTIES, edge_view_rows, node_captions
from graph.neo4j.errors import GraphPushError
from graph.neo4j.schema import (
    EDGE_PROPERTIES,
    GRAPH_LABEL,
    KIND_LABELS,
    NODE_LABEL,
    NODE_PROPERTIES,
    RELATION_TYPES,
    build_config_json,
    constraint_statements,
    edge_row,
    node_row,
)
from karma.core.errors import InputError

if TYPE_CHECKING:
    import neo4j

GRAPH_NAME = "karma"
"""``name`` of the provenance node (one karma graph per database)."""
DEFAULT_BATCH_SIZE = 5000
Progress = Callable[[int], None]


class PushReport(BaseModel):
    """What a push did, from the server's own update counters."""

    graph_hash: str
    """CausalGraph.content_hash() of the pushed graph."""
    nodes: int
    """Nodes in the graph."""
    edges: int
    """Edges in the graph."""
    nodes_created: int = 0
    """Nodes the server created (0 on a repeated push)."""
    nodes_deleted: int = 0
    """Stale nodes removed (in the database but not in the graph)."""
    relationships_created: int = 0
    """Relationships the server created (0 on a repeated push)."""
    relationships_deleted: int = 0
    """Stale relationships removed."""
    properties_set: int = 0
    """Property writes (also counts rewrites of unchanged values)."""
    node_seconds: float = 0.0
    """Time spent merging nodes (database writes, parameter rows already built)."""
    edge_seconds: float = 0.0
    """Time spent merging relationships (database writes, parameter rows already built)."""
    seconds: float = 0.0
    """Whole push, constraints and provenance included."""

    def add(self, counters: Any) -> None:
        self.nodes_created += counters.nodes_created
        self.nodes_deleted += counters.nodes_deleted
        self.relationships_created += counters.relationships_created
        self.relationships_deleted += counters.relationships_deleted
        self.properties_set += counters.properties_set


def _batches(rows: Sequence[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield list(rows[start : start + size])


def _assignments(var: str, names: Sequence[str]) -> str:
    # One SET per fixed property name (not ``+= map``): the planner then knows ``id`` is not written
    # and needs no Eager barrier between the MERGE and the SET.
    return ", ".join(f"{var}.{name} = row.props.{name}" for name in names)


def node_merge_query(kind: str) -> str:
    """``UNWIND $rows MERGE`` for nodes of one kind; the label comes from the fixed KIND_LABELS map."""
    label = KIND_LABELS[kind]
    others = ":".join(v for v in KIND_LABELS.values() if v != label)
    return (
        f"UNWIND $rows AS row MERGE (n:{NODE_LABEL} {{id: row.id}}) "
        f"SET {_assignments('n', NODE_PROPERTIES)}, n.caption = row.caption REMOVE n:{others} SET n:{label}"
    )


def edge_merge_query(relation: str) -> str:
    """``UNWIND $rows MERGE`` for edges of one relation; the type comes from the fixed RELATION_TYPES map."""
    rel_type = RELATION_TYPES[relation]
    return (
        f"UNWIND $rows AS row "
        f"MATCH (a:{NODE_LABEL} {{id: row.source}}) MATCH (b:{NODE_LABEL} {{id: row.target}}) "
        f"MERGE (a)-[r:{rel_type} {{id: row.id}}]->(b) SET {_assignments('r', EDGE_PROPERTIES)}, "
        + ", ".join(f"r.{name} = row.view.{name}" for name in EDGE_VIEW_PROPERTIES)
    )


def _karma_version() -> str:
    try:
        return metadata.version("karma-mv")
    except metadata.PackageNotFoundError:
        return "unknown"


def _excluded_videos(config: dict[str, object]) -> list[str]:
    """The videos the graph was built without, as a list property the split guard reads in Cypher."""
    raw = config.get("exclude_videos") or []
    return sorted(str(video) for video in raw) if isinstance(raw, list | tuple | set) else []


def validate_for_push(graph: CausalGraph) -> None:
    """Every edge joins two nodes of the graph, and ids agree with their keys."""
    for key, node in graph.nodes.items():
        if key != node.id:
            raise GraphPushError(f"node key {key!r} differs from its id {node.id!r}")
    for key, edge in graph.edges.items():
        if key != edge.id:
            raise GraphPushError(f"edge key {key!r} differs from its id {edge.id!r}")
        for end in ("source", "target"):
            if getattr(edge, end) not in graph.nodes:
                raise GraphPushError(
                    f"edge {edge.id!r}: {end} {getattr(edge, end)!r} is not a node of the graph"
                )


def ensure_schema(driver: neo4j.Driver, database: str) -> None:
    """Create karma's constraints and index (no-op when they exist)."""
    with driver.session(database=database) as session:
        for statement in constraint_statements():
            session.run(statement).consume()


def _delete_stale(session: neo4j.Session, report: PushReport, graph: CausalGraph, batch_size: int) -> None:
    """Remove karma relationships and nodes the pushed graph does not have, in batches."""
    rel_types = sorted(RELATION_TYPES.values())
    stale_rels = session.execute_read(
        lambda tx: [
            r["eid"]
            for r in tx.run(
                f"MATCH (:{NODE_LABEL})-[r]->(:{NODE_LABEL}) WHERE type(r) IN $types AND NOT r.id IN $ids "
                "RETURN elementId(r) AS eid",
                types=rel_types,
                ids=sorted(graph.edges),
            )
        ]
    )
    for batch in _batches([{"eid": e} for e in stale_rels], batch_size):
        report.add(
            session.execute_write(
                lambda tx, b=batch: (
                    tx.run(
                        "UNWIND $rows AS row MATCH ()-[r]->() WHERE elementId(r) = row.eid DELETE r", rows=b
                    )
                    .consume()
                    .counters
                )
            )
        )
    stale_nodes = session.execute_read(
        lambda tx: [
            r["id"]
            for r in tx.run(
                f"MATCH (n:{NODE_LABEL}) WHERE NOT n.id IN $ids RETURN n.id AS id", ids=sorted(graph.nodes)
            )
        ]
    )
    for batch in _batches([{"id": i} for i in stale_nodes], batch_size):
        report.add(
            session.execute_write(
                lambda tx, b=batch: (
                    tx.run(
                        f"UNWIND $rows AS row MATCH (n:{NODE_LABEL} {{id: row.id}}) DETACH DELETE n", rows=b
                    )
                    .consume()
                    .counters
                )
            )
        )


def push_graph(
    driver: neo4j.Driver,
    graph: CausalGraph,
    database: str = "neo4j",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
) -> PushReport:
    """Make the database hold exactly ``graph``; returns the server's counters. Idempotent.

    ``progress`` is called with the number of nodes/edges written after each batch.
    """
    if batch_size < 1:
        raise InputError(f"batch_size must be >= 1, got {batch_size}")
    validate_for_push(graph)
    started = time.perf_counter()
    report = PushReport(graph_hash=graph.content_hash(), nodes=len(graph.nodes), edges=len(graph.edges))
    ensure_schema(driver, database)
    with driver.session(database=database) as session:
        _delete_stale(session, report, graph, batch_size)

        # Parameter rows first, so node_seconds / edge_seconds time the database writes alone.
        # Display properties beside the CKG's own (graph.neo4j.caption): Browser captions, and a
        # text_relation twin merged into its cause for reading.
        captions = node_captions(graph)
        views = edge_view_rows(graph)
        node_rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KIND_LABELS}
        for key in sorted(graph.nodes):
            node_rows[graph.nodes[key].kind].append({**node_row(graph.nodes[key]), "caption": captions[key]})
        edge_rows: dict[str, list[dict[str, Any]]] = {relation: [] for relation in RELATION_TYPES}
        for key in sorted(graph.edges):
            edge_rows[graph.edges[key].relation].append({**edge_row(graph.edges[key]), "view": views[key]})

        t0 = time.perf_counter()
        for kind, rows in node_rows.items():
            query = node_merge_query(kind)
            for batch in _batches(rows, batch_size):
                report.add(
                    session.execute_write(lambda tx, b=batch, q=query: tx.run(q, rows=b).consume().counters)
                )
                if progress:
                    progress(len(batch))
        report.node_seconds = time.perf_counter() - t0

        t0 = time.perf_counter()
        for relation, rows in edge_rows.items():
            query = edge_merge_query(relation)
            for batch in _batches(rows, batch_size):
                report.add(
                    session.execute_write(lambda tx, b=batch, q=query: tx.run(q, rows=b).consume().counters)
                )
                if progress:
                    progress(len(batch))
        report.edge_seconds = time.perf_counter() - t0

        # Provenance last: its hash says the push completed.
        report.add(
            session.execute_write(
                lambda tx: (
                    tx.run(
                        f"MERGE (g:{GRAPH_LABEL} {{name: $name}}) "
                        "SET g.hash = $hash, g.build_config = $config, g.node_count = $nodes, "
                        "g.edge_count = $edges, g.karma_version = $version, g.pushed_at = datetime(), "
                        "g.exclude_videos = $excluded",
                        name=GRAPH_NAME,
                        hash=report.graph_hash,
                        config=build_config_json(graph.build_config),
                        nodes=report.nodes,
                        edges=report.edges,
                        version=_karma_version(),
                        excluded=_excluded_videos(graph.build_config),
                    )
                    .consume()
                    .counters
                )
            )
        )
    report.seconds = time.perf_counter() - started
    return report


def clear_karma_graph(driver: neo4j.Driver, database: str = "neo4j") -> int:
    """Delete every karma node, relationship and the provenance node (benchmarks, tests); returns nodes deleted."""
    deleted = 0
    with driver.session(database=database) as session:
        while True:
            counters = session.execute_write(
                lambda tx: (
                    tx.run(
                        f"MATCH (n) WHERE n:{NODE_LABEL} OR n:{GRAPH_LABEL} WITH n LIMIT 10000 DETACH DELETE n"
                    )
                    .consume()
                    .counters
                )
            )
            deleted += counters.nodes_deleted
            if counters.nodes_deleted == 0:
                return deleted
