"""GraphRAG-compatible tables: ``entities.parquet`` and ``relationships.parquet``.

karma writes Microsoft GraphRAG's full column set -- entities: ``id, human_readable_id, title, type,
description, text_unit_ids, frequency, degree``; relationships: ``id, human_readable_id, source, target,
description, weight, combined_degree, text_unit_ids`` -- with ``source``/``target`` holding entity
*titles* as GraphRAG does, ids as UUIDs (uuid5 of the karma id, so stable), and karma's extra columns
(``ckg_id``, ``kind``, ``relation``, ``support``, ``confidence``, ``lift``, ``precedence``,
``source_questions``, ...) so nothing is lost. ``text_unit_ids`` of a relationship holds its evidence
transition ids. The build config travels in the entities file's schema metadata.

Reading accepts karma's tables and plain GraphRAG ones, with endpoints given as titles or entity ids.
As loose as the published scripts and as the tables GraphRAG 0.x/1.x and people write by hand: an
entity table without ``title`` falls back to ``name``, then ``id`` (warned); rows that repeat a title
are merged into one node (warned; their ids all resolve to it, distinct descriptions are kept).
A plain GraphRAG table's entity and relationship ids are kept (the graph's ``build_config`` records the
relationship ids under ``graphrag_ids``), so import -> export -> import gives back the same ids,
titles and descriptions.
"""

from __future__ import annotations

import json
import math
import uuid
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import pyarrow as pa
import pyarrow.parquet as pq

from graph.model import CausalGraph, CkgEdge, CkgNode, EdgeRelation, NodeKind
from karma.core.atomic import atomic_path
from karma.core.errors import InputError

ENTITIES_FILE = "entities.parquet"
RELATIONSHIPS_FILE = "relationships.parquet"
BUILD_CONFIG_META = b"karma.build_config"
_NAMESPACE = uuid.UUID("6f1d3c2e-5a0b-4c1e-9a57-6b61726d6121")

ENTITY_COLUMNS = (
    "id",
    "human_readable_id",
    "title",
    "type",
    "description",
    "text_unit_ids",
    "frequency",
    "degree",
)
RELATIONSHIP_COLUMNS = (
    "id",
    "human_readable_id",
    "source",
    "target",
    "description",
    "weight",
    "combined_degree",
    "text_unit_ids",
)

ENTITY_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("human_readable_id", pa.int64()),
        ("title", pa.string()),
        ("type", pa.string()),
        ("description", pa.string()),
        ("text_unit_ids", pa.list_(pa.string())),
        ("frequency", pa.int64()),
        ("degree", pa.int64()),
        ("ckg_id", pa.string()),
        ("kind", pa.string()),
    ]
)
RELATIONSHIP_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("human_readable_id", pa.int64()),
        ("source", pa.string()),
        ("target", pa.string()),
        ("description", pa.string()),
        ("weight", pa.float64()),
        ("combined_degree", pa.int64()),
        ("text_unit_ids", pa.list_(pa.string())),
        ("ckg_id", pa.string()),
        ("source_id", pa.string()),
        ("target_id", pa.string()),
        ("relation", pa.string()),
        ("support", pa.int64()),
        ("confidence", pa.float64()),
        ("lift", pa.float64()),
        ("precedence", pa.float64()),
        ("source_questions", pa.list_(pa.string())),
    ]
)
MERGED_DESCRIPTION_SEP = "; "
"""Joins the distinct descriptions of entity rows merged under one title."""
GRAPHRAG_IDS_KEY = "graphrag_ids"
"""``build_config`` key: {"relationships": {karma edge id: table id}} of an imported plain table."""
_NODE_KINDS = set(get_args(NodeKind))


class GraphImportWarning(UserWarning):
    """Something in an imported table was read loosely (merged titles, missing title column)."""


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def entity_table_id(node: CkgNode, imported: bool) -> str:
    """The ``id`` written for a node: its own id when it came from a table (kept), else a stable UUID."""
    return node.id if imported else stable_uuid("node", node.id)


_RELATIONS = set(get_args(EdgeRelation))


def stable_uuid(kind: str, karma_id: str) -> str:
    """Deterministic UUID for a node or edge id (GraphRAG ids are UUIDs)."""
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{karma_id}"))


def write_graphrag(graph: CausalGraph, directory: str | Path) -> tuple[Path, Path]:
    """Write ``entities.parquet`` and ``relationships.parquet`` into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    node_ids = sorted(graph.nodes)
    edge_ids = sorted(graph.edges)
    degree: Counter[str] = Counter()
    for edge in graph.edges.values():
        degree[edge.source] += 1
        degree[edge.target] += 1
    nodes = [graph.nodes[k] for k in node_ids]
    kept_ids = graph.build_config.get(GRAPHRAG_IDS_KEY) or {}
    kept_edges: dict[str, str] = dict(kept_ids.get("relationships", {})) if isinstance(kept_ids, dict) else {}
    imported_nodes = set(kept_ids.get("entities", [])) if isinstance(kept_ids, dict) else set()
    entities = pa.table(
        {
            "id": [entity_table_id(n, n.id in imported_nodes) for n in nodes],
            "human_readable_id": list(range(len(nodes))),
            "title": [n.title for n in nodes],
            "type": [n.kind.upper() for n in nodes],
            "description": [n.description for n in nodes],
            "text_unit_ids": [[] for _ in nodes],
            "frequency": [n.frequency for n in nodes],
            "degree": [degree[n.id] for n in nodes],
            "ckg_id": [n.id for n in nodes],
            "kind": [n.kind for n in nodes],
        },
        schema=ENTITY_SCHEMA,
    )
    metadata = {
        BUILD_CONFIG_META: json.dumps(
            graph.build_config, sort_keys=True, default=str, allow_nan=False
        ).encode()
    }
    entities = entities.replace_schema_metadata(metadata)
    edges = [graph.edges[k] for k in edge_ids]
    relationships = pa.table(
        {
            "id": [kept_edges.get(e.id) or stable_uuid("edge", e.id) for e in edges],
            "human_readable_id": list(range(len(edges))),
            "source": [graph.nodes[e.source].title for e in edges],
            "target": [graph.nodes[e.target].title for e in edges],
            "description": [e.description for e in edges],
            "weight": [e.weight for e in edges],
            "combined_degree": [degree[e.source] + degree[e.target] for e in edges],
            "text_unit_ids": [list(e.evidence) for e in edges],
            "ckg_id": [e.id for e in edges],
            "source_id": [e.source for e in edges],
            "target_id": [e.target for e in edges],
            "relation": [e.relation for e in edges],
            "support": [e.support for e in edges],
            "confidence": [e.confidence for e in edges],
            "lift": [e.lift for e in edges],
            "precedence": [e.precedence for e in edges],
            "source_questions": [list(e.source_questions) for e in edges],
        },
        schema=RELATIONSHIP_SCHEMA,
    )
    entities_path = directory / ENTITIES_FILE
    relationships_path = directory / RELATIONSHIPS_FILE
    with atomic_path(entities_path) as tmp:
        pq.write_table(entities, tmp)
    with atomic_path(relationships_path) as tmp:
        pq.write_table(relationships, tmp)
    return entities_path, relationships_path


def _read_rows(path: Path, required: tuple[str, ...]) -> tuple[list[dict[str, Any]], dict[bytes, bytes]]:
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"GraphRAG table not found: {path}") from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{path}: not a readable parquet file ({exc})") from exc
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise InputError(f"{path}: missing required column(s) {missing}; has {table.column_names}")
    return table.to_pylist(), dict(table.schema.metadata or {})


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _number(value: Any, kind: type, path: Path, row: int, column: str, *, non_negative: bool = False) -> Any:
    """A table cell as ``kind``; NaN, infinities (and negatives where ``non_negative``) are refused."""
    if value is None:
        return kind(0)
    where = f"{path}: row {row}, column {column!r}"
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where}: {value!r} is not a finite number") from None
        raise InputError(f"{where}: not a number: {value!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise InputError(f"{where}: {value!r} is not a finite number")
    if non_negative and number < 0:
        raise InputError(f"{where}: {value!r} is negative; {column} must be 0 or more")
    return number


@dataclass
class _Entities:
    """The entity table read into nodes, with every name a relationship endpoint may use."""

    nodes: dict[str, CkgNode] = field(default_factory=dict)
    by_title: dict[str, str] = field(default_factory=dict)
    by_table_id: dict[str, str] = field(default_factory=dict)
    imported_ids: list[str] = field(default_factory=list)
    """Entity ids taken from a plain GraphRAG table (kept on export)."""


def _title_column(rows: list[dict[str, Any]], path: Path, notes: list[str]) -> str:
    """The column entity titles are read from: ``title``, else ``name``, else ``id`` (noted)."""
    columns = set(rows[0]) if rows else set()
    title_column = next((c for c in ("title", "name", "id") if c in columns), "title")
    if rows and title_column != "title":
        notes.append(f"{path}: no 'title' column; entity titles are read from {title_column!r}")
    elif rows and "title" not in columns:
        raise InputError(f"{path}: no 'title', 'name' or 'id' column; has {sorted(columns)}")
    return title_column


def _entity_title(rec: dict[str, Any], row: int, title_column: str, path: Path, notes: list[str]) -> str:
    title = _text(rec.get(title_column)).strip()
    if not title and title_column != "id":
        title = _text(rec.get("id")).strip()
        if title:
            notes.append(f"{path}: row {row}: empty {title_column!r}; the entity id is its title")
    if not title:
        raise InputError(f"{path}: row {row}, column {title_column!r}: empty title")
    return title


def _read_entities(rows: list[dict[str, Any]], title_column: str, path: Path, notes: list[str]) -> _Entities:
    """Nodes from entity rows; rows repeating a title merge into the first row's node (noted)."""
    out = _Entities()
    merged: Counter[str] = Counter()
    descriptions: dict[str, list[str]] = {}
    for row, rec in enumerate(rows):
        title = _entity_title(rec, row, title_column, path, notes)
        ckg_id = _text(rec.get("ckg_id"))
        node_id = ckg_id or _text(rec.get("id")) or title
        kind = _text(rec.get("kind")) or _text(rec.get("type")).lower()
        if kind not in _NODE_KINDS:
            kind = "text"
        description = _text(rec.get("description"))
        frequency = _number(rec.get("frequency"), int, path, row, "frequency")
        if title in out.by_title:
            first = out.nodes[out.by_title[title]]
            merged[title] += 1
            parts = descriptions.setdefault(first.id, [first.description] if first.description else [])
            if description and description not in parts:
                parts.append(description)
            out.nodes[first.id] = first.model_copy(
                update={
                    "description": MERGED_DESCRIPTION_SEP.join(parts),
                    "frequency": first.frequency + frequency,
                }
            )
            if rec.get("id") is not None:
                out.by_table_id.setdefault(_text(rec["id"]), first.id)
            out.by_table_id.setdefault(node_id, first.id)
            continue
        if node_id in out.nodes:
            raise InputError(f"{path}: row {row}, column 'id': duplicate entity id {node_id!r}")
        out.nodes[node_id] = CkgNode(
            id=node_id,
            title=title,
            kind=kind,  # type: ignore[arg-type]
            description=description,
            frequency=frequency,
        )
        if not ckg_id and rec.get("id") is not None:
            out.imported_ids.append(node_id)
        out.by_title[title] = node_id
        if rec.get("id") is not None:
            out.by_table_id[_text(rec["id"])] = node_id
        out.by_table_id.setdefault(node_id, node_id)
    for title, extra in sorted(merged.items()):
        notes.append(f"{path}: title {title!r} appears {extra + 1} times; the rows are merged into one node")
    return out


def _endpoint(entities: _Entities, rec: dict[str, Any], row: int, side: str, paths: tuple[Path, Path]) -> str:
    """The node id a relationship's ``side`` names: karma's ``*_id``, an entity title or a table id."""
    karma_id = _text(rec.get(f"{side}_id"))
    if karma_id in entities.nodes:
        return karma_id
    value = _text(rec.get(side))
    if value in entities.by_title:
        return entities.by_title[value]
    if value in entities.by_table_id:
        return entities.by_table_id[value]
    raise InputError(
        f"{paths[1]}: row {row}, column {side!r}: {value!r} is neither an entity title nor an "
        f"entity id in {paths[0]}"
    )


def _read_relationships(
    rows: list[dict[str, Any]], entities: _Entities, paths: tuple[Path, Path]
) -> tuple[dict[str, CkgEdge], dict[str, str]]:
    """Edges from relationship rows, and the plain table ids kept per edge id."""
    path = paths[1]
    edges: dict[str, CkgEdge] = {}
    kept_edge_ids: dict[str, str] = {}
    for row, rec in enumerate(rows):
        source = _endpoint(entities, rec, row, "source", paths)
        target = _endpoint(entities, rec, row, "target", paths)
        relation = _text(rec.get("relation")) or "text_relation"
        if relation not in _RELATIONS:
            relation = "text_relation"
        edge_id = _text(rec.get("ckg_id")) or f"{source}->{target}|{relation}"
        if edge_id in edges:
            suffix = _text(rec.get("id")) or _text(rec.get("human_readable_id")) or str(row)
            edge_id = f"{edge_id}#{suffix}"
        if edge_id in edges:
            raise InputError(f"{path}: row {row}, column 'id': duplicate relationship {edge_id!r}")
        if not _text(rec.get("ckg_id")) and rec.get("id") is not None:
            kept_edge_ids[edge_id] = _text(rec["id"])
        edges[edge_id] = CkgEdge(
            id=edge_id,
            source=source,
            target=target,
            relation=relation,  # type: ignore[arg-type]
            support=_number(rec.get("support"), int, path, row, "support"),
            confidence=_number(rec.get("confidence"), float, path, row, "confidence"),
            lift=_number(rec.get("lift"), float, path, row, "lift"),
            precedence=_number(rec.get("precedence"), float, path, row, "precedence"),
            weight=_number(rec.get("weight"), float, path, row, "weight", non_negative=True),
            evidence=_strings(rec.get("text_unit_ids")),
            source_questions=_strings(rec.get("source_questions")),
            description=_text(rec.get("description")),
        )
    return edges, kept_edge_ids


def read_graphrag(
    entities_path: str | Path, relationships_path: str | Path, *, report: list[str] | None = None
) -> CausalGraph:
    """Load GraphRAG-shaped tables (karma's or GraphRAG's own) into a CausalGraph.

    Relationship endpoints may be entity titles (GraphRAG's form) or entity ids; every relationship
    row becomes an edge, and an endpoint that matches no entity is an error naming file, row and field;
    so is a number that is NaN or infinite, or a negative relationship ``weight`` (:class:`InputError`).
    Loose tables are read with a warning each (appended to ``report`` when given, else issued as
    :class:`GraphImportWarning`): no ``title`` column (``name``, then ``id`` is the title), and rows
    repeating a title (merged into the first row's node).
    """
    paths = (Path(entities_path), Path(relationships_path))
    notes: list[str] = []
    entity_rows, metadata = _read_rows(paths[0], ())
    title_column = _title_column(entity_rows, paths[0], notes)
    relationship_rows, _ = _read_rows(paths[1], ("source", "target"))
    entities = _read_entities(entity_rows, title_column, paths[0], notes)
    edges, kept_edge_ids = _read_relationships(relationship_rows, entities, paths)
    build_config: dict[str, object] = {}
    if BUILD_CONFIG_META in metadata:
        build_config = json.loads(metadata[BUILD_CONFIG_META])
    if entities.imported_ids or kept_edge_ids:
        build_config[GRAPHRAG_IDS_KEY] = {
            "entities": sorted(entities.imported_ids),
            "relationships": dict(sorted(kept_edge_ids.items())),
        }
    if report is not None:
        report.extend(notes)
    else:
        for note in notes:
            warnings.warn(note, GraphImportWarning, stacklevel=2)
    nodes = entities.nodes
    return CausalGraph(
        nodes={k: nodes[k] for k in sorted(nodes)},
        edges={k: edges[k] for k in sorted(edges)},
        build_config=build_config,
    )
