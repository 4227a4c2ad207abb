"""What Neo4j Browser shows of a pushed graph: short captions, merged twins, and the Browser style.

Why: the Browser draws a node as a 50-80 px circle and cuts its caption to fit, so full titles
("mood shifts from energetic to calm", "brightness decreases") became "mood shifts from" and
"brightness decre..."; different nodes looked alike. A push therefore writes a short ``caption``
per node ("mood: energetic → calm", "brightness ↓"), unique within the graph, and per relationship
("causes ×4.0": the lift; "· text 16": 16 transitions whose explanations name the same pair), and
:func:`browser_style` gives the style (GraSS, as JSON) the guide pastes with ``:style``: those
captions, one colour per node kind.

A ``text_relation`` edge that joins the same two nodes as a ``causes`` edge (its *twin*: the
questions' explanations name the same cause) drew a second arrow for one cause. The push merges it
into the cause for reading: the ``CAUSES`` relationship carries ``text_support`` (transitions whose
explanations link the pair) and ``text_description``, and the twin ``TEXT_RELATION`` gets
``twin_of`` (the cause's edge id) so the guide's views leave it out. The twin stays in the database
as its own relationship, because retrieval (``neo4j-hybrid``) and ``karma neo4j pull`` read the
graph exactly as built; these display properties are not part of the CKG (pull ignores them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from graph.model import CausalGraph, CkgEdge, CkgNode

CAPTION_MAX = 22
"""Longest caption (characters): about three lines in an 80 px Browser circle at 10 px."""

_SHIFT = re.compile(r"^(?P<var>.+?) shifts (?:from (?P<a>.+?) )?to (?P<b>.+)$")
_IS = re.compile(r"^(?P<var>.+?) is (?P<value>.+)$")
_MOVE = re.compile(r"^(?P<var>.+?) (?P<dir>increases|decreases)$")
_SHORT_VARIABLE = {
    "colour saturation": "saturation",
    "objects on screen": "objects",
    "visual intensity": "intensity",
}
RELATION_CAPTIONS = {"co_moves": "moves with", "text_relation": "named together", "instance_of": "is a"}


def _clip(text: str) -> str:
    if len(text) <= CAPTION_MAX:
        return text
    words, out = text.split(), ""
    for word in words:
        if len(out) + len(word) + 1 > CAPTION_MAX - 1:
            break
        out = f"{out} {word}".strip()
    return (out or text[: CAPTION_MAX - 1]) + "…"


def node_caption(node: CkgNode) -> str:
    """A few words naming the node: the variable and its change ("brightness ↓", "mode: minor")."""
    title = " ".join(node.title.split())
    if node.kind in ("visual_change", "music_change"):
        if m := _MOVE.match(title):
            var = _SHORT_VARIABLE.get(m["var"], m["var"])
            return _clip(f"{var} {'↑' if m['dir'] == 'increases' else '↓'}")
        if m := _SHIFT.match(title):
            var = _SHORT_VARIABLE.get(m["var"], m["var"])
            if not m["a"]:
                return _clip(f"{var} → {m['b']}")
            full = f"{var}: {m['a']} → {m['b']}"
            return full if len(full) <= CAPTION_MAX else _clip(f"{m['a']} → {m['b']}")
        if m := _IS.match(title):
            return _clip(f"{_SHORT_VARIABLE.get(m['var'], m['var'])}: {m['value']}")
    return _clip(_SHORT_VARIABLE.get(title, title))


def node_captions(graph: CausalGraph) -> dict[str, str]:
    """Node id -> caption, unique in the graph: nodes whose short captions collide get their title
    (clipped), then their id, so no two nodes look alike in the Browser."""
    short = {key: node_caption(node) for key, node in graph.nodes.items()}
    seen: dict[str, list[str]] = {}
    for key, caption in short.items():
        seen.setdefault(caption, []).append(key)
    out = dict(short)
    for keys in seen.values():
        if len(keys) > 1:
            for key in keys:
                out[key] = graph.nodes[key].title
    titles: dict[str, list[str]] = {}
    for key, caption in out.items():
        titles.setdefault(caption, []).append(key)
    for keys in titles.values():
        if len(keys) > 1:
            for key in keys:
                out[key] = key
    return out


def edge_caption(edge: CkgEdge) -> str:
    """``causes ×4.0`` (lift) for a cause; the relation in words otherwise."""
    if edge.relation == "causes":
        return f"causes ×{edge.lift:.1f}" if edge.lift else "causes"
    return RELATION_CAPTIONS.get(edge.relation, edge.relation)


def twins(graph: CausalGraph) -> dict[str, str]:
    """``text_relation`` edge id -> the id of the ``causes`` edge between the same two nodes."""
    causes = {(e.source, e.target): e.id for e in graph.edges.values() if e.relation == "causes"}
    return {
        e.id: causes[(e.source, e.target)]
        for e in graph.edges.values()
        if e.relation == "text_relation" and (e.source, e.target) in causes
    }


EDGE_VIEW_PROPERTIES = ("caption", "text_support", "text_description", "twin_of")
"""Display properties a push writes on every relationship (None removes a stale one)."""


def edge_view_rows(graph: CausalGraph) -> dict[str, dict[str, Any]]:
    """Edge id -> its display properties: caption; on a cause, its twin's text support and
    description; on a twin, the cause it repeats."""
    twin_of = twins(graph)
    merged = {cause: graph.edges[text] for text, cause in twin_of.items()}
    rows = {}
    for key, edge in graph.edges.items():
        text = merged.get(key)
        rows[key] = {
            "caption": edge_caption(edge) + (f" · text {text.support}" if text is not None else ""),
            "text_support": text.support if text is not None else None,
            "text_description": text.description if text is not None else None,
            "twin_of": twin_of.get(key),
        }
    return rows


KIND_STYLE = {
    "VisualChange": {"color": "#56B4E9", "border-color": "#0072B2", "text-color-internal": "#000000"},
    "MusicChange": {"color": "#E69F00", "border-color": "#A36F00", "text-color-internal": "#000000"},
    "Concept": {"color": "#DDDDDD", "border-color": "#999999", "text-color-internal": "#000000"},
    "TextEntity": {"color": "#CC79A7", "border-color": "#8E4F73", "text-color-internal": "#000000"},
}
"""Browser colours per node label (Okabe-Ito, as the report's plots)."""


def browser_style() -> dict[str, dict[str, str]]:
    """The Browser style (GraSS as JSON, which ``:style`` accepts): short captions, one colour per
    kind, large enough circles for three caption lines, dark CAUSES arrows, grey others."""
    node = {"caption": "{caption}", "diameter": "80px", "font-size": "10px", "border-width": "2px"}
    style: dict[str, dict[str, str]] = {
        "node": {"diameter": "50px", "color": "#A5ABB6", "border-color": "#9AA1AC", "border-width": "2px",
                 "text-color-internal": "#FFFFFF", "font-size": "10px"},
        "relationship": {"color": "#A5ABB6", "shaft-width": "1px", "font-size": "8px", "padding": "3px",
                         "text-color-external": "#000000", "text-color-internal": "#FFFFFF",
                         "caption": "{caption}"},
        "node.KarmaNode": dict(node),
        "node.KarmaGraph": {"caption": "{name}", "diameter": "50px", "color": "#FFFFFF",
                            "border-color": "#333333", "text-color-internal": "#000000"},
    }  # fmt: skip
    for label, colours in KIND_STYLE.items():
        style[f"node.{label}"] = {**node, **colours}
    style["relationship.CAUSES"] = {"color": "#333333", "shaft-width": "2px", "caption": "{caption}"}
    for rel in ("CO_MOVES", "TEXT_RELATION", "INSTANCE_OF"):
        style[f"relationship.{rel}"] = {"color": "#A5ABB6", "shaft-width": "1px", "caption": "{caption}"}
    return style


def style_command() -> str:
    """``:style {...}`` on one line: the Browser runs a ``:style`` command alone (it never splits it
    into statements), and reads the JSON form before trying GraSS."""
    return ":style " + json.dumps(browser_style(), ensure_ascii=False, separators=(",", ":"))
