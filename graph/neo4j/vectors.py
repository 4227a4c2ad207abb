"""Node and relationship embeddings in Neo4j: ``embedding`` properties and native vector indexes.

``push_vectors`` writes one float32 vector per node and relationship (``db.create.set*VectorProperty``,
stored as a float array: the same float32 values karma's in-memory index holds, read back exactly),
creates the vector indexes (cosine; one on ``:KarmaNode(embedding)``, one per relationship type) and
records on the provenance node which graph, model and dimension the vectors belong to. A retriever
checks that record before trusting the vectors. All data travels as parameters; index names, labels
and relationship types come from fixed mappings, and the dimension is an integer karma computed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from graph.neo4j.errors import GraphPushError
from graph.neo4j.schema import GRAPH_LABEL, NODE_LABEL, RELATION_TYPES

if TYPE_CHECKING:
    import neo4j

NODE_VECTOR_INDEX = "karma_node_embedding"
"""Vector index over ``:KarmaNode(embedding)``."""
EMBEDDING_PROPERTY = "embedding"
"""Property holding a node's or relationship's vector."""
GRAPH_NAME = "karma"
VECTOR_BATCH = 2000


def relationship_vector_index(rel_type: str) -> str:
    """Name of the vector index over one relationship type's embeddings (from the fixed type map)."""
    if rel_type not in RELATION_TYPES.values():
        raise ValueError(f"unknown relationship type {rel_type!r}")
    return f"karma_rel_{rel_type.lower()}_embedding"


class VectorPushReport(BaseModel):
    """What a vector push wrote."""

    graph_hash: str
    """Content hash of the graph the vectors were computed for."""
    model: str
    """Embedding model id."""
    dim: int
    """Vector dimension."""
    nodes: int
    """Node vectors written."""
    relationships: int
    """Relationship vectors written."""
    seconds: float = 0.0
    """Writes plus index population."""


def _index_statement(name: str, pattern: str, dim: int) -> str:
    return (
        f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR {pattern} ON (x.{EMBEDDING_PROPERTY}) "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dim)}, `vector.similarity_function`: 'cosine'}}}}"
    )


def _existing_dims(session: neo4j.Session) -> dict[str, int | None]:
    records = session.run("SHOW VECTOR INDEXES YIELD name, options RETURN name, options").data()
    out: dict[str, int | None] = {}
    for record in records:
        config = (record.get("options") or {}).get("indexConfig") or {}
        dims = config.get("vector.dimensions")
        out[record["name"]] = int(dims) if dims is not None else None
    return out


def ensure_vector_indexes(
    driver: neo4j.Driver, database: str, dim: int, rel_types: Sequence[str]
) -> list[str]:
    """Create the vector indexes for ``dim`` (an index of another dimension is dropped first)."""
    wanted = {NODE_VECTOR_INDEX: f"(x:{NODE_LABEL})"}
    for rel_type in rel_types:
        wanted[relationship_vector_index(rel_type)] = f"()-[x:{rel_type}]-()"
    with driver.session(database=database) as session:
        existing = _existing_dims(session)
        for name, pattern in wanted.items():
            if name in existing and existing[name] != int(dim):
                session.run(f"DROP INDEX {name} IF EXISTS").consume()
            session.run(_index_statement(name, pattern, dim)).consume()
    return sorted(wanted)


def _write_batches(
    driver: neo4j.Driver,
    database: str,
    query: str,
    rows: list[dict[str, object]],
    progress: Callable[[int], None] | None,
) -> None:
    with driver.session(database=database) as session:
        for start in range(0, len(rows), VECTOR_BATCH):
            batch = rows[start : start + VECTOR_BATCH]
            session.execute_write(lambda tx, b=batch: tx.run(query, rows=b).consume())
            if progress:
                progress(len(batch))


def push_vectors(
    driver: neo4j.Driver,
    graph_hash: str,
    model: str,
    node_ids: Sequence[str],
    node_vectors: np.ndarray,
    edges: Sequence[tuple[str, str]],
    edge_vectors: np.ndarray,
    database: str = "neo4j",
    progress: Callable[[int], None] | None = None,
    await_seconds: int = 600,
) -> VectorPushReport:
    """Write the vectors of a pushed graph (``edges`` are (edge id, relation) in ``edge_vectors`` row
    order) and build the vector indexes; the graph itself must already be pushed."""
    started = time.perf_counter()
    if len(node_ids) != len(node_vectors) or len(edges) != len(edge_vectors):
        raise GraphPushError("vector rows do not match the node / edge ids")
    records, _, _ = driver.execute_query(
        f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) RETURN g.hash AS hash", name=GRAPH_NAME, database_=database
    )
    pushed = records[0]["hash"] if records else None
    if pushed != graph_hash:
        raise GraphPushError(
            f"the database holds graph {pushed}, not {graph_hash}: push the graph before its embeddings"
        )
    dim = int(node_vectors.shape[1]) if node_vectors.ndim == 2 else int(edge_vectors.shape[1])
    with driver.session(database=database) as session:  # vectors of an earlier push are now stale
        session.run(
            f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) REMOVE g.embedding_hash", name=GRAPH_NAME
        ).consume()
    node_rows = [
        {"id": node_id, "vec": vector}
        for node_id, vector in zip(node_ids, np.asarray(node_vectors, np.float32).tolist(), strict=True)
    ]
    _write_batches(
        driver,
        database,
        f"UNWIND $rows AS row MATCH (n:{NODE_LABEL} {{id: row.id}}) "
        f"CALL db.create.setNodeVectorProperty(n, '{EMBEDDING_PROPERTY}', row.vec)",
        node_rows,
        progress,
    )
    by_type: dict[str, list[dict[str, object]]] = {}
    for (edge_id, relation), vector in zip(edges, np.asarray(edge_vectors, np.float32).tolist(), strict=True):
        by_type.setdefault(RELATION_TYPES[relation], []).append({"id": edge_id, "vec": vector})
    for rel_type, rows in sorted(by_type.items()):
        _write_batches(
            driver,
            database,
            f"UNWIND $rows AS row MATCH ()-[r:{rel_type} {{id: row.id}}]->() "
            f"CALL db.create.setRelationshipVectorProperty(r, '{EMBEDDING_PROPERTY}', row.vec)",
            rows,
            progress,
        )
    ensure_vector_indexes(driver, database, dim, sorted(by_type))
    with driver.session(database=database) as session:
        session.run("CALL db.awaitIndexes($seconds)", seconds=int(await_seconds)).consume()
        session.run(
            f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) SET g.embedding_hash = $hash, g.embedding_model = $model, "
            "g.embedding_dim = $dim, g.embedding_rel_types = $types",
            name=GRAPH_NAME,
            hash=graph_hash,
            model=model,
            dim=dim,
            types=sorted(by_type),
        ).consume()
    return VectorPushReport(
        graph_hash=graph_hash,
        model=model,
        dim=dim,
        nodes=len(node_rows),
        relationships=len(edges),
        seconds=time.perf_counter() - started,
    )
