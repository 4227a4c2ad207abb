"""The causal knowledge graph's data model and the store interface every backend implements.

Node ids are event ids from ``karma.core.events`` (``visual:brightness:up``) or ``concept:<name>`` /
``text:<slug>`` for concepts and explanation-derived entities. Edges are directed cause -> effect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from pydantic import BaseModel, Field

from karma.core.hashing import canonical_hash

NodeKind = Literal["visual_change", "music_change", "concept", "text"]
EdgeRelation = Literal["causes", "co_moves", "text_relation", "instance_of"]


class CkgNode(BaseModel):
    """A node of the causal knowledge graph."""

    id: str
    """Stable id (event id, ``concept:...`` or ``text:...``)."""
    title: str
    """Readable title, unique in the graph (GraphRAG endpoints use titles)."""
    kind: NodeKind
    """What the node stands for."""
    description: str = ""
    """One line a model can read."""
    frequency: int = 0
    """How many transitions the event was observed in (0 for concepts)."""


class CkgEdge(BaseModel):
    """A directed edge with the statistics behind it."""

    id: str
    """Stable id: ``<source>-><target>|<relation>``; what retrievers and run logs cite."""
    source: str
    """Source node id (the cause)."""
    target: str
    """Target node id (the effect)."""
    relation: EdgeRelation
    """causes: effect follows cause across the transition; co_moves: mere co-movement; text_relation:
    from question explanations; instance_of: event -> concept."""
    support: int = 0
    """Transitions where cause and effect occurred together."""
    confidence: float = 0.0
    """P(effect | cause) over the transitions the graph was built from."""
    lift: float = 0.0
    """confidence / P(effect)."""
    precedence: float = 0.0
    """P(effect at t | cause at t) - P(effect at t-1 | cause at t): > 0 when the effect follows."""
    weight: float = 0.0
    """Ranking weight used by retrieval (documented in the builder)."""
    evidence: list[str] = Field(default_factory=list)
    """Transition ids (``<video>/t<NNN>``) behind the statistics."""
    source_questions: list[str] = Field(default_factory=list)
    """Question ids whose explanations produced a text relation."""
    description: str = ""
    """One line a model can read, with the statistics."""


class CausalGraph(BaseModel):
    """A whole CKG plus the build settings that produced it."""

    nodes: dict[str, CkgNode] = Field(default_factory=dict)
    """Node id -> node."""
    edges: dict[str, CkgEdge] = Field(default_factory=dict)
    """Edge id -> edge."""
    build_config: dict[str, object] = Field(default_factory=dict)
    """The resolved builder config (thresholds, min support, excluded videos, ...)."""

    def content_hash(self) -> str:
        """Hash of nodes and edges (not of build_config): decides index rebuilds and provenance."""
        return canonical_hash(
            {
                "nodes": [self.nodes[k].model_dump() for k in sorted(self.nodes)],
                "edges": [self.edges[k].model_dump() for k in sorted(self.edges)],
            },
            16,
        )


class GraphStore(ABC):
    """Read access to a CKG. networkx is the embedded default; Neo4j implements the same."""

    name: str = "abstract"

    @abstractmethod
    def node(self, node_id: str) -> CkgNode | None:
        """The node with this id, or None."""

    @abstractmethod
    def nodes(self) -> list[CkgNode]:
        """All nodes, sorted by id."""

    @abstractmethod
    def edges(self) -> list[CkgEdge]:
        """All edges, sorted by id."""

    @abstractmethod
    def out_edges(self, node_id: str) -> list[CkgEdge]:
        """Edges leaving the node, sorted by (-weight, id)."""

    @abstractmethod
    def in_edges(self, node_id: str) -> list[CkgEdge]:
        """Edges entering the node, sorted by (-weight, id)."""

    @abstractmethod
    def expand(self, seeds: list[str], hops: int) -> list[CkgEdge]:
        """Edges within ``hops`` of the seed nodes (either direction), sorted by (-weight, id)."""
