"""What Neo4j Browser shows of a pushed graph (issue 39, item 6), without a server: short, unique
node captions; a cause's text_relation twin merged into it; and the guide's ``:style`` command read
by the Browser's own style parser (taken from the neo4j-browser jar ``karma neo4j install`` fetched,
run with node)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from graph.neo4j.caption import (
    CAPTION_MAX,
    browser_style,
    edge_view_rows,
    node_caption,
    node_captions,
    style_command,
    twins,
)
from graph.neo4j.guide import browser_queries
from graph.neo4j.server import LocalServerConfig


def _node(node_id: str, title: str, kind: str = "visual_change") -> CkgNode:
    return CkgNode(id=node_id, title=title, kind=kind)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("title", "kind", "caption"),
    [
        ("brightness decreases", "visual_change", "brightness ↓"),
        ("colour saturation increases", "visual_change", "saturation ↑"),
        ("mood shifts from energetic to calm", "music_change", "mood: energetic → calm"),
        ("action shifts from standing to dancing", "visual_change", "standing → dancing"),
        ("action shifts to dancing", "visual_change", "action → dancing"),
        ("mode is minor", "music_change", "mode: minor"),
        ("guitar appears", "visual_change", "guitar appears"),
        ("objects on screen", "concept", "objects"),
        ("a very long free-text entity named by an explanation", "text", "a very long free-text…"),
    ],
)
def test_a_caption_names_the_node_in_a_few_words(title: str, kind: str, caption: str) -> None:
    assert node_caption(_node("n", title, kind)) == caption
    assert len(caption) <= CAPTION_MAX


def test_captions_are_unique_in_the_graph_so_different_nodes_never_look_alike() -> None:
    graph = CausalGraph()
    for node in (
        _node("visual:brightness:up", "brightness increases"),
        _node("music:brightness:up", "brightness increases", "music_change"),  # same words, other modality
        _node("visual:saturation:up", "colour saturation increases"),
        _node("text:saturation", "saturation ↑", "text"),  # collides with the caption above
    ):
        graph.nodes[node.id] = node
    captions = node_captions(graph)
    assert len(set(captions.values())) == len(captions)
    assert captions["visual:brightness:up"] == "visual:brightness:up"  # title collides too: the id
    assert captions["visual:saturation:up"] == "colour saturation increases"


def _twin_graph() -> CausalGraph:
    graph = CausalGraph()
    graph.nodes["a"] = _node("a", "brightness increases")
    graph.nodes["b"] = _node("b", "loudness increases", "music_change")
    graph.nodes["c"] = _node("c", "tempo increases", "music_change")
    for source, target, relation, support in (
        ("a", "b", "causes", 23),
        ("a", "b", "text_relation", 19),
        ("a", "c", "text_relation", 5),  # no cause between a and c: not a twin
    ):
        edge_id = f"{source}->{target}|{relation}"
        graph.edges[edge_id] = CkgEdge(
            id=edge_id, source=source, target=target, relation=relation, support=support, lift=3.14,
            description=f"{relation} {support}",
        )  # fmt: skip
    return graph


def test_a_text_relation_twin_is_merged_into_its_cause_for_reading() -> None:
    graph = _twin_graph()
    assert twins(graph) == {"a->b|text_relation": "a->b|causes"}
    rows = edge_view_rows(graph)
    cause = rows["a->b|causes"]
    assert cause == {
        "caption": "causes ×3.1 · text 19",
        "text_support": 19,
        "text_description": "text_relation 19",
        "twin_of": None,
    }
    assert rows["a->b|text_relation"]["twin_of"] == "a->b|causes"
    assert rows["a->c|text_relation"] == {
        "caption": "named together",
        "text_support": None,
        "text_description": None,
        "twin_of": None,
    }


def test_the_guide_sets_the_style_and_leaves_twins_out_of_its_views() -> None:
    queries = browser_queries(_twin_graph())
    assert queries[0].cypher == style_command() and "\n" not in style_command()
    assert queries[1].cypher == ':config "autoComplete": false'
    neighbourhood = next(q for q in queries if q.title.startswith("Neighbourhood"))
    assert "twin_of IS NOT NULL" in neighbourhood.cypher
    for query in queries:  # data only as Browser parameters
        assert "brightness" not in query.cypher


def _browser_app_js() -> str:
    jars = sorted((LocalServerConfig.from_env().home / "lib").glob("neo4j-browser-*.jar"))
    if not jars:
        pytest.skip("no neo4j-browser jar: `karma neo4j install` fetches it (scripts/test.sh does)")
    with zipfile.ZipFile(jars[-1]) as jar:
        names = [n for n in jar.namelist() if re.search(r"browser/app-[0-9a-f]+\.js$", n)]
        return "".join(jar.read(n).decode("utf-8", "replace") for n in names)


def test_the_browser_reads_the_style_command_as_karma_meant_it(tmp_path: Path) -> None:
    """The Browser's ``:style`` handler, as shipped: the text after ``:style`` goes to parseGrass."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: cannot run the Browser's style parser")
    source = _browser_app_js()
    start = source.find("t.parseGrass=function(e){")
    end = source.find(",t.objToCss=", start)
    assert start >= 0 and end > start, "the Browser's parseGrass was not found in its app bundle"
    assert 'e.cmd.trim().split(":style")[1].trim()' in source  # how the Browser cuts the argument
    script = tmp_path / "parse.js"
    script.write_text(
        "const t = {};\n"
        + source[start:end]
        + ";\nconst cmd = require('fs').readFileSync(0, 'utf8');\n"
        + "process.stdout.write(JSON.stringify(t.parseGrass(cmd.trim().split(':style')[1].trim())));\n"
    )
    parsed = subprocess.run(
        [node, str(script)], input=style_command(), capture_output=True, text=True, check=True, timeout=60
    )
    style = json.loads(parsed.stdout)
    assert style == browser_style()
    for label in ("KarmaNode", "VisualChange", "MusicChange", "Concept", "TextEntity"):
        assert style[f"node.{label}"]["caption"] == "{caption}"
    assert style["relationship.CAUSES"]["caption"] == "{caption}"
