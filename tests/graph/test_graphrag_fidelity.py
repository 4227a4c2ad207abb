"""GraphRAG tables karma did not write: plain GraphRAG output (UUID ids, title endpoints), GraphRAG
0.x/1.x duplicate titles, script-style tables without ``title``. They import with warnings, their
ids and descriptions survive import -> export -> import, and their fact lines carry the descriptions."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graph.io.graphrag import GraphImportWarning, read_graphrag, write_graphrag


def _uid(n: int) -> str:
    return str(uuid.UUID(int=n))


def write_tables(
    folder: Path, entities: dict[str, list], relationships: dict[str, list]
) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(entities), folder / "entities.parquet")
    pq.write_table(pa.table(relationships), folder / "relationships.parquet")
    return folder / "entities.parquet", folder / "relationships.parquet"


PLAIN_ENTITIES = {
    "id": [_uid(1), _uid(2), _uid(3)],
    "human_readable_id": [0, 1, 2],
    "title": ["BRIGHTNESS", "LOUDNESS", "TEMPO"],
    "type": ["VISUAL FEATURE", "AUDIO FEATURE", "AUDIO FEATURE"],
    "description": ["How light the picture is", "How loud the music is", "Beats per minute"],
}
PLAIN_RELATIONSHIPS = {
    "id": [_uid(101), _uid(102)],
    "human_readable_id": [0, 1],
    "source": ["BRIGHTNESS", "LOUDNESS"],
    "target": ["LOUDNESS", "TEMPO"],
    "description": [
        "A sudden increase in brightness is followed by louder music",
        "Louder passages tend to come with a faster tempo",
    ],
    "weight": [7.0, 2.0],
}


def test_plain_graphrag_round_trip_keeps_ids_titles_and_descriptions(tmp_path: Path) -> None:
    report: list[str] = []
    graph = read_graphrag(*write_tables(tmp_path / "in", PLAIN_ENTITIES, PLAIN_RELATIONSHIPS), report=report)
    assert report == []
    assert sorted(graph.nodes) == PLAIN_ENTITIES["id"]
    write_graphrag(graph, tmp_path / "out")
    entities = pq.read_table(tmp_path / "out" / "entities.parquet").to_pylist()
    relationships = pq.read_table(tmp_path / "out" / "relationships.parquet").to_pylist()
    by_id = {row["id"]: row for row in entities}
    for i, entity_id in enumerate(PLAIN_ENTITIES["id"]):
        assert by_id[entity_id]["title"] == PLAIN_ENTITIES["title"][i]
        assert by_id[entity_id]["description"] == PLAIN_ENTITIES["description"][i]
    rel_by_id = {row["id"]: row for row in relationships}
    assert sorted(rel_by_id) == sorted(PLAIN_RELATIONSHIPS["id"])
    for i, rel_id in enumerate(PLAIN_RELATIONSHIPS["id"]):
        row = rel_by_id[rel_id]
        assert (row["source"], row["target"], row["description"], row["weight"]) == (
            PLAIN_RELATIONSHIPS["source"][i],
            PLAIN_RELATIONSHIPS["target"][i],
            PLAIN_RELATIONSHIPS["description"][i],
            PLAIN_RELATIONSHIPS["weight"][i],
        )
    again = read_graphrag(tmp_path / "out" / "entities.parquet", tmp_path / "out" / "relationships.parquet")
    assert again.content_hash() == graph.content_hash()
    write_graphrag(again, tmp_path / "out2")
    assert pq.read_table(tmp_path / "out2" / "relationships.parquet").column("id").to_pylist() == [
        row["id"] for row in relationships
    ]


def test_duplicate_titles_are_merged_and_reported(tmp_path: Path) -> None:
    # GraphRAG 0.x/1.x merge entities by (title, type): one title with two types gives two rows.
    entities = {
        "id": [_uid(1), _uid(2), _uid(3)],
        "title": ["BRIGHTNESS", "BRIGHTNESS", "LOUDNESS"],
        "type": ["VISUAL FEATURE", "CONCEPT", "AUDIO FEATURE"],
        "description": ["How light the picture is", "A property of light", "How loud"],
    }
    relationships = {
        "id": [_uid(101), _uid(102)],
        "source": [_uid(2), "LOUDNESS"],  # an id of the second (merged) row, and a title
        "target": ["LOUDNESS", "BRIGHTNESS"],
        "description": ["Brighter scenes come with louder music", "Loud music, bright pictures"],
    }
    with pytest.warns(GraphImportWarning, match="'BRIGHTNESS' appears 2 times"):
        graph = read_graphrag(*write_tables(tmp_path, entities, relationships))
    assert sorted(graph.nodes) == [_uid(1), _uid(3)]
    merged = graph.nodes[_uid(1)]
    assert merged.title == "BRIGHTNESS"
    assert merged.description == "How light the picture is; A property of light"
    assert sorted((e.source, e.target) for e in graph.edges.values()) == [
        (_uid(1), _uid(3)),
        (_uid(3), _uid(1)),
    ]


@pytest.mark.parametrize("column", ["name", None])
def test_tables_without_title_fall_back_to_name_then_id(tmp_path: Path, column: str | None) -> None:
    # The published scripts' own table shape: ids are names and the endpoints are ids.
    entities: dict[str, list] = {"id": ["brightness", "loudness"], "description": ["light", "loud"]}
    if column:
        entities[column] = ["Brightness", "Loudness"]
    relationships = {
        "source": ["brightness"],
        "target": ["loudness"],
        "description": ["A brighter scene is followed by an increase in loudness"],
    }
    report: list[str] = []
    graph = read_graphrag(*write_tables(tmp_path, entities, relationships), report=report)
    assert report == [
        f"{tmp_path / 'entities.parquet'}: no 'title' column; entity titles are read from {column or 'id'!r}"
    ]
    assert [graph.nodes[n].title for n in sorted(graph.nodes)] == (
        ["Brightness", "Loudness"] if column else ["brightness", "loudness"]
    )
    (edge,) = graph.edges.values()
    assert (edge.source, edge.target) == ("brightness", "loudness")
    assert edge.description == relationships["description"][0]


def test_imported_fact_lines_show_the_relationship_description(tmp_path: Path) -> None:
    from retrieval.facts import fact_line
    from retrieval.graph_view import GraphView

    graph = read_graphrag(*write_tables(tmp_path, PLAIN_ENTITIES, PLAIN_RELATIONSHIPS))
    view = GraphView.of(graph)
    lines = [fact_line(view, graph.edges[edge_id]) for edge_id in view.edge_ids]
    for description in PLAIN_RELATIONSHIPS["description"]:
        assert sum(description in line for line in lines) == 1, lines


@pytest.mark.parametrize("retriever", ["karma-keyword", "keyword"])
def test_imported_descriptions_reach_the_prompt_block(tmp_path: Path, retriever: str) -> None:
    from retrieval import RetrievalQuery, get_retriever, serialize_facts

    graph = read_graphrag(*write_tables(tmp_path, PLAIN_ENTITIES, PLAIN_RELATIONSHIPS))
    result = get_retriever(retriever, graph).retrieve(
        RetrievalQuery(question="brightness loudness tempo"), k=10
    )
    block = serialize_facts(result, budget_tokens=None)
    for description in PLAIN_RELATIONSHIPS["description"]:
        assert block.count(description) == 1, block


@pytest.mark.parametrize(
    ("weight", "reason"),
    [
        (float("nan"), "nan is not a finite number"),
        (float("inf"), "inf is not a finite number"),
        (float("-inf"), "-inf is not a finite number"),
        (-5.0, "-5.0 is negative"),
    ],
)
def test_non_finite_or_negative_weights_are_refused_naming_file_row_and_field(
    tmp_path: Path, weight: float, reason: str
) -> None:
    from typer.testing import CliRunner

    from karma.cli.main import app
    from karma.core.errors import InputError

    relationships = {**PLAIN_RELATIONSHIPS, "weight": [7.0, weight]}
    entities_path, relationships_path = write_tables(tmp_path / "in", PLAIN_ENTITIES, relationships)
    with pytest.raises(InputError) as caught:
        read_graphrag(entities_path, relationships_path)
    message = str(caught.value)
    assert str(relationships_path) in message and "row 1" in message and "'weight'" in message
    assert reason in message
    result = CliRunner().invoke(app, ["graph", "import", str(tmp_path / "in"), "--out", str(tmp_path / "g")])
    assert result.exit_code == 2, result.output
    assert "error" in result.output and "row 1" in result.output and "weight" in result.output
    assert not (tmp_path / "g").exists()  # nothing written, no Infinity token anywhere


def test_infinite_support_or_frequency_is_an_input_error(tmp_path: Path) -> None:
    from karma.core.errors import InputError

    relationships = {**PLAIN_RELATIONSHIPS, "support": [1.0, float("inf")]}
    with pytest.raises(InputError, match=r"row 1, column 'support': inf is not a finite number"):
        read_graphrag(*write_tables(tmp_path / "in", PLAIN_ENTITIES, relationships))


def test_graph_json_never_holds_infinity_tokens(tmp_path: Path) -> None:
    from graph.io.json_io import write_json

    graph = read_graphrag(*write_tables(tmp_path / "in", PLAIN_ENTITIES, PLAIN_RELATIONSHIPS))
    edge_id = sorted(graph.edges)[0]
    graph.edges[edge_id] = graph.edges[edge_id].model_copy(update={"weight": float("inf")})
    with pytest.raises(ValueError, match="non-finite number"):
        write_json(graph, tmp_path / "graph.json")
    assert not (tmp_path / "graph.json").exists()
