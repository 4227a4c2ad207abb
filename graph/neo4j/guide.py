"""Ready-to-paste Neo4j Browser queries for a pushed graph.

Each query uses Browser parameters (``:param name => value``) instead of values spliced into the query
text: the ``:param`` line is pasted first, then the query. Values are JSON string literals, which
Cypher reads as strings.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from graph.model import CausalGraph, CkgEdge


class BrowserQuery(BaseModel):
    """One example query for Neo4j Browser."""

    title: str
    """What it shows."""
    params: dict[str, str]
    """Browser parameters to set first (``:param``)."""
    cypher: str
    """The query."""

    def text(self) -> str:
        """The paste-ready block: ``:param`` lines, then the query."""
        lines = [
            f":param {name} => {json.dumps(value, ensure_ascii=False)};"
            for name, value in self.params.items()
        ]
        return "\n".join([*lines, self.cypher])


def _strongest(graph: CausalGraph) -> CkgEdge | None:
    ranked = sorted(graph.edges.values(), key=lambda e: (e.relation != "causes", -e.weight, e.id))
    return ranked[0] if ranked else None


def browser_queries(graph: CausalGraph) -> list[BrowserQuery]:
    """Overview, strongest causes of a musical change, an edge's evidence, a node's neighbourhood."""
    queries = [
        BrowserQuery(
            title="Overview: the strongest visual -> musical causal edges (graph view)",
            params={},
            cypher=(
                "MATCH (c:VisualChange)-[r:CAUSES]->(e:MusicChange)\n"
                "RETURN c, r, e ORDER BY r.weight DESC LIMIT 50"
            ),
        )
    ]
    edge = _strongest(graph)
    if edge is None:
        return queries
    effect = edge.target if graph.nodes[edge.target].kind == "music_change" else edge.source
    queries += [
        BrowserQuery(
            title="Strongest causes of a musical change",
            params={"effect": effect},
            cypher=(
                "MATCH (c:KarmaNode)-[r:CAUSES]->(e:KarmaNode {id: $effect})\n"
                "RETURN c.title AS cause, r.support AS support, round(r.confidence, 3) AS confidence,\n"
                "       round(r.lift, 2) AS lift, round(r.precedence, 3) AS precedence, r.weight AS weight\n"
                "ORDER BY r.weight DESC, r.id LIMIT 10"
            ),
        ),
        BrowserQuery(
            title="The evidence transitions behind an edge",
            params={"edge": edge.id},
            cypher=(
                "MATCH (c:KarmaNode)-[r {id: $edge}]->(e:KarmaNode)\n"
                "UNWIND r.evidence AS transition\n"
                "RETURN c.title AS cause, e.title AS effect, r.support AS support, transition"
            ),
        ),
        BrowserQuery(
            title="Neighbourhood of a node (2 hops, graph view)",
            params={"node": edge.source},
            cypher="MATCH p = (n:KarmaNode {id: $node})-[*1..2]-(:KarmaNode)\nRETURN p LIMIT 100",
        ),
        BrowserQuery(
            title="Provenance of the pushed graph",
            params={},
            cypher=(
                "MATCH (g:KarmaGraph)\n"
                "RETURN g.hash, g.node_count, g.edge_count, g.karma_version, g.pushed_at, g.build_config"
            ),
        ),
    ]
    return queries
