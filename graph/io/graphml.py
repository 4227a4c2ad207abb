"""GraphML export/import (for Gephi, yEd, Cytoscape, networkx users).

Nodes keep their karma id as the GraphML node id with ``title``, ``kind``, ``description`` and
``frequency`` attributes; edges carry every CkgEdge field, lists as JSON strings (GraphML has no list
type). The build config is a JSON string graph attribute. Floats are written with Python's shortest
round-trip repr, so export then import is lossless.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import networkx as nx

from graph.model import CausalGraph, CkgEdge, CkgNode, EdgeRelation, NodeKind
from karma.core.atomic import atomic_path
from karma.core.errors import InputError

GRAPHML_FILE = "graph.graphml"
_NODE_KINDS = set(get_args(NodeKind))
_RELATIONS = set(get_args(EdgeRelation))


def to_networkx(graph: CausalGraph) -> nx.MultiDiGraph:
    """A MultiDiGraph with plain (GraphML-writable) attributes, keyed by karma ids."""
    g = nx.MultiDiGraph()
    g.graph["build_config"] = json.dumps(graph.build_config, sort_keys=True, default=str)
    for node_id in sorted(graph.nodes):
        n = graph.nodes[node_id]
        g.add_node(node_id, title=n.title, kind=n.kind, description=n.description, frequency=n.frequency)
    for edge_id in sorted(graph.edges):
        e = graph.edges[edge_id]
        g.add_edge(
            e.source,
            e.target,
            key=edge_id,
            ckg_id=edge_id,
            relation=e.relation,
            support=e.support,
            confidence=e.confidence,
            lift=e.lift,
            precedence=e.precedence,
            weight=e.weight,
            evidence=json.dumps(e.evidence),
            source_questions=json.dumps(e.source_questions),
            description=e.description,
        )
    return g


def write_graphml(graph: CausalGraph, path: str | Path) -> Path:
    """Write the graph as GraphML."""
    path = Path(path)
    with atomic_path(path) as tmp:
        nx.write_graphml(to_networkx(graph), tmp, named_key_ids=True)
    return path


def _list(value: Any, path: Path, where: str) -> list[str]:
    if value in (None, ""):
        return []
    try:
        items = json.loads(value)
    except (TypeError, json.JSONDecodeError):
        raise InputError(f"{path}: {where}: not a JSON list: {value!r}") from None
    if not isinstance(items, list):
        raise InputError(f"{path}: {where}: not a JSON list: {value!r}")
    return [str(v) for v in items]


def read_graphml(path: str | Path) -> CausalGraph:
    """Read GraphML written by karma, or a plain GraphML graph (titles from ``title``/``label``/
    ``name`` attributes or the node id; unknown edge kinds become ``text_relation``)."""
    path = Path(path)
    try:
        g = nx.read_graphml(path, force_multigraph=True)
    except FileNotFoundError:
        raise FileNotFoundError(f"GraphML file not found: {path}") from None
    except Exception as exc:  # networkx raises several parser error types
        raise InputError(f"{path}: not readable GraphML ({exc})") from exc
    nodes: dict[str, CkgNode] = {}
    for node_id, data in g.nodes(data=True):
        node_id = str(node_id)
        kind = data.get("kind", "text")
        nodes[node_id] = CkgNode(
            id=node_id,
            title=str(data.get("title") or data.get("label") or data.get("name") or node_id),
            kind=kind if kind in _NODE_KINDS else "text",
            description=str(data.get("description", "")),
            frequency=int(data.get("frequency", 0)),
        )
    edges: dict[str, CkgEdge] = {}
    for source, target, key, data in g.edges(keys=True, data=True):
        relation = data.get("relation", "text_relation")
        relation = relation if relation in _RELATIONS else "text_relation"
        edge_id = str(data.get("ckg_id") or f"{source}->{target}|{relation}")
        if edge_id in edges:
            edge_id = f"{edge_id}#{key}"
        where = f"edge {edge_id}"
        edges[edge_id] = CkgEdge(
            id=edge_id,
            source=str(source),
            target=str(target),
            relation=relation,
            support=int(data.get("support", 0)),
            confidence=float(data.get("confidence", 0.0)),
            lift=float(data.get("lift", 0.0)),
            precedence=float(data.get("precedence", 0.0)),
            weight=float(data.get("weight", 0.0)),
            evidence=_list(data.get("evidence"), path, where),
            source_questions=_list(data.get("source_questions"), path, where),
            description=str(data.get("description", "")),
        )
    build_config = json.loads(g.graph["build_config"]) if g.graph.get("build_config") else {}
    return CausalGraph(
        nodes={k: nodes[k] for k in sorted(nodes)},
        edges={k: edges[k] for k in sorted(edges)},
        build_config=build_config,
    )
