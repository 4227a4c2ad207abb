"""The Neo4j shape of a CKG: fixed label and relationship-type names, constraints, property rows.

Labels and relationship types cannot be Cypher parameters, so they come only from the fixed mappings
below (keyed by the model's closed ``NodeKind`` / ``EdgeRelation`` literals), never from graph data;
all data travels as parameters.

Shape: every node is ``(:KarmaNode:<KindLabel> {id, title, kind, description, frequency})``; every edge
is ``(cause)-[:<RELTYPE> {id, relation, support, confidence, lift, precedence, weight, evidence,
source_questions, description}]->(effect)``; one ``(:KarmaGraph {name, hash, build_config, ...})`` node
records provenance.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from graph.model import CkgEdge, CkgNode, EdgeRelation, NodeKind

NODE_LABEL = "KarmaNode"
"""Label on every CKG node (the uniqueness constraint on ``id`` hangs on it)."""
GRAPH_LABEL = "KarmaGraph"
"""Label of the provenance node."""
KIND_LABELS: dict[str, str] = {
    "visual_change": "VisualChange",
    "music_change": "MusicChange",
    "concept": "Concept",
    "text": "TextEntity",
}
"""Node kind -> extra label (for Browser colouring and label scans)."""
RELATION_TYPES: dict[str, str] = {
    "causes": "CAUSES",
    "co_moves": "CO_MOVES",
    "text_relation": "TEXT_RELATION",
    "instance_of": "INSTANCE_OF",
}
"""Edge relation -> relationship type."""
TYPE_RELATIONS = {v: k for k, v in RELATION_TYPES.items()}

# Fail at import, not mid-push, if the model grows a kind or relation this mapping does not know.
if set(KIND_LABELS) != set(get_args(NodeKind)) or set(RELATION_TYPES) != set(get_args(EdgeRelation)):
    raise RuntimeError("graph.neo4j.schema is out of date with graph.model's NodeKind / EdgeRelation")

NODE_PROPERTIES = ("title", "kind", "description", "frequency")
EDGE_PROPERTIES = (
    "relation",
    "support",
    "confidence",
    "lift",
    "precedence",
    "weight",
    "evidence",
    "source_questions",
    "description",
)


def constraint_statements() -> list[str]:
    """Idempotent DDL: uniqueness of node ids, provenance names and relationship ids (per type)."""
    statements = [
        f"CREATE CONSTRAINT karma_node_id IF NOT EXISTS FOR (n:{NODE_LABEL}) REQUIRE n.id IS UNIQUE",
        f"CREATE CONSTRAINT karma_graph_name IF NOT EXISTS FOR (g:{GRAPH_LABEL}) REQUIRE g.name IS UNIQUE",
        f"CREATE INDEX karma_node_title IF NOT EXISTS FOR (n:{NODE_LABEL}) ON (n.title)",
    ]
    for rel_type in RELATION_TYPES.values():
        name = f"karma_rel_{rel_type.lower()}_id"
        statements.append(
            f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR ()-[r:{rel_type}]-() REQUIRE r.id IS UNIQUE"
        )
    return statements


def node_row(node: CkgNode) -> dict[str, Any]:
    """Parameter row for one node (attribute reads, not model_dump: this runs once per node per push)."""
    return {"id": node.id, "props": {key: getattr(node, key) for key in NODE_PROPERTIES}}


def edge_row(edge: CkgEdge) -> dict[str, Any]:
    """Parameter row for one edge (attribute reads, not model_dump: this runs 100k times on big graphs)."""
    return {
        "id": edge.id,
        "source": edge.source,
        "target": edge.target,
        "props": {key: getattr(edge, key) for key in EDGE_PROPERTIES},
    }


def node_from_props(props: dict[str, Any]) -> CkgNode:
    """A CkgNode from a node's properties as read back."""
    return CkgNode(**{key: props[key] for key in ("id", *NODE_PROPERTIES) if key in props})


def edge_from_props(props: dict[str, Any], source: str, target: str, rel_type: str) -> CkgEdge:
    """A CkgEdge from a relationship's properties and endpoint ids as read back."""
    fields = {key: props[key] for key in ("id", *EDGE_PROPERTIES) if key in props}
    fields.setdefault("relation", TYPE_RELATIONS.get(rel_type, rel_type))
    for key in ("evidence", "source_questions"):
        fields[key] = list(fields.get(key) or [])
    return CkgEdge(source=source, target=target, **fields)


def build_config_json(config: dict[str, object]) -> str:
    """Build config as canonical JSON (Neo4j properties cannot hold maps)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
