"""Ready-to-paste Neo4j Browser commands and queries for a pushed graph.

Two setup commands come first, each run alone: ``:style`` (short captions, one colour per node kind:
graph.neo4j.caption) and ``:config "autoComplete": false`` (the Browser setting "Connect result
nodes": off, the Browser draws only the relationships a query returns, so a cause's
``text_relation`` twin is not drawn as a second arrow beside it). The views then show one arrow per
cause: they return ``CAUSES`` (which carries its twin's ``text_support``) and leave out relationships
marked ``twin_of``.

Each query uses Browser parameters (``:param name => value``) instead of values spliced into the query
text: the ``:param`` line is pasted first, then the query. Values are JSON string literals, which
Cypher reads as strings.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from graph.model import CausalGraph, CkgEdge
from graph.neo4j.caption import style_command


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
    """Style and setting, overview, strongest causes of a musical change, an edge's evidence, a node's
    neighbourhood, provenance."""
    queries = [
        BrowserQuery(
            title="Style: short captions, one colour per node kind (run this line alone; :style reset undoes it)",
            params={},
            cypher=style_command(),
        ),
        BrowserQuery(
            title=(
                "Draw only the relationships a query returns (Browser setting 'Connect result nodes' off; "
                'run alone; :config "autoComplete": true turns it back on)'
            ),
            params={},
            cypher=':config "autoComplete": false',
        ),
        BrowserQuery(
            title="Overview: the strongest visual -> musical causal edges (graph view)",
            params={},
            cypher=(
                "MATCH (c:VisualChange)-[r:CAUSES]->(e:MusicChange)\n"
                "RETURN c, r, e ORDER BY r.weight DESC LIMIT 50"
            ),
        ),
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
                "       round(r.lift, 2) AS lift, round(r.precedence, 3) AS precedence, r.weight AS weight,\n"
                "       r.text_support AS explained_in\n"
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
            title="Neighbourhood of a node (2 hops, graph view; text twins of causes left out)",
            params={"node": edge.source},
            cypher=(
                "MATCH p = (n:KarmaNode {id: $node})-[rs*1..2]-(:KarmaNode)\n"
                "WHERE none(r IN rs WHERE r.twin_of IS NOT NULL)\nRETURN p LIMIT 100"
            ),
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
