"""A GraphStore answered by Cypher against Neo4j: same facts, same order as the networkx store.

Ordering is finished in Python with the key the GraphStore ABC documents, ``(-weight, id)``, because
Cypher's string order (UTF-16 code units) and Python's (code points) can differ on rare characters;
parity with ``graph.NetworkxStore`` is exact, not approximate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graph.model import CausalGraph, CkgEdge, CkgNode, GraphStore
from graph.neo4j.connection import Neo4jSettings, open_driver
from graph.neo4j.schema import NODE_LABEL, RELATION_TYPES, edge_from_props, node_from_props

if TYPE_CHECKING:
    import neo4j

_EDGE_RETURN = (
    "RETURN DISTINCT type(r) AS type, r {.*} AS r, startNode(r).id AS source, endNode(r).id AS target"
)


def _ranked(edges: list[CkgEdge]) -> list[CkgEdge]:
    return sorted(edges, key=lambda e: (-e.weight, e.id))


class Neo4jStore(GraphStore):
    """Read access to the karma graph pushed into a Neo4j database (see ``graph.neo4j.push_graph``)."""

    name = "neo4j"

    def __init__(self, driver: neo4j.Driver, database: str = "neo4j", owns_driver: bool = False) -> None:
        self.driver = driver
        self.database = database
        self._owns_driver = owns_driver
        self._types = sorted(RELATION_TYPES.values())
        self._graph: CausalGraph | None = None

    @classmethod
    def connect(cls, settings: Neo4jSettings | None = None) -> Neo4jStore:
        """Open a store on the server in ``settings`` (default: arguments/env/local server); close() it."""
        settings = settings or Neo4jSettings.resolve()
        return cls(open_driver(settings), settings.database, owns_driver=True)

    def close(self) -> None:
        if self._owns_driver:
            self.driver.close()

    def __enter__(self) -> Neo4jStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def graph(self) -> CausalGraph:
        """The whole graph with its build config, pulled once (``refresh()`` pulls again).

        Whole-graph consumers, such as the retrievers' in-memory view, read this in one round trip and
        get the build config too (the per-node methods below never need it).
        """
        if self._graph is None:
            from graph.neo4j.pull import pull_graph

            self._graph = pull_graph(self.driver, self.database)
        return self._graph

    def refresh(self) -> None:
        """Forget the pulled graph (after the database changed)."""
        self._graph = None

    def _query(self, cypher: str, **params: Any) -> list[Any]:
        import neo4j

        records, _, _ = self.driver.execute_query(
            cypher, params, database_=self.database, routing_=neo4j.RoutingControl.READ
        )
        return records

    def _edges(self, records: list[Any]) -> list[CkgEdge]:
        return [edge_from_props(r["r"], r["source"], r["target"], r["type"]) for r in records]

    def node(self, node_id: str) -> CkgNode | None:
        records = self._query(f"MATCH (n:{NODE_LABEL} {{id: $id}}) RETURN n {{.*}} AS n", id=node_id)
        return node_from_props(records[0]["n"]) if records else None

    def nodes(self) -> list[CkgNode]:
        records = self._query(f"MATCH (n:{NODE_LABEL}) RETURN n {{.*}} AS n")
        return sorted((node_from_props(r["n"]) for r in records), key=lambda n: n.id)

    def edges(self) -> list[CkgEdge]:
        records = self._query(
            f"MATCH (:{NODE_LABEL})-[r]->(:{NODE_LABEL}) WHERE type(r) IN $types {_EDGE_RETURN}",
            types=self._types,
        )
        return sorted(self._edges(records), key=lambda e: e.id)

    def out_edges(self, node_id: str) -> list[CkgEdge]:
        records = self._query(
            f"MATCH (:{NODE_LABEL} {{id: $id}})-[r]->(:{NODE_LABEL}) WHERE type(r) IN $types {_EDGE_RETURN} "
            "ORDER BY r.weight DESC, r.id",
            id=node_id,
            types=self._types,
        )
        return _ranked(self._edges(records))

    def in_edges(self, node_id: str) -> list[CkgEdge]:
        records = self._query(
            f"MATCH (:{NODE_LABEL})-[r]->(:{NODE_LABEL} {{id: $id}}) WHERE type(r) IN $types {_EDGE_RETURN} "
            "ORDER BY r.weight DESC, r.id",
            id=node_id,
            types=self._types,
        )
        return _ranked(self._edges(records))

    def expand(self, seeds: list[str], hops: int) -> list[CkgEdge]:
        """Edges touching a node at distance < ``hops`` from a seed, ignoring direction (the networkx
        store's definition), found breadth-first: one Cypher query per hop from the current frontier."""
        if hops < 0:
            raise ValueError(f"hops must be >= 0, got {hops}")
        if hops == 0 or not seeds:
            return []
        existing = self._query(
            f"UNWIND $ids AS id MATCH (n:{NODE_LABEL} {{id: id}}) RETURN n.id AS id", ids=sorted(set(seeds))
        )
        frontier = {r["id"] for r in existing}
        visited = set(frontier)
        found: dict[str, CkgEdge] = {}
        for _ in range(hops):
            if not frontier:
                break
            records = self._query(
                f"UNWIND $ids AS id MATCH (n:{NODE_LABEL} {{id: id}})-[r]-(:{NODE_LABEL}) "
                f"WHERE type(r) IN $types {_EDGE_RETURN}",
                ids=sorted(frontier),
                types=self._types,
            )
            reached: set[str] = set()
            for edge in self._edges(records):
                found[edge.id] = edge
                reached.update((edge.source, edge.target))
            frontier = reached - visited
            visited |= reached
        return _ranked(list(found.values()))
