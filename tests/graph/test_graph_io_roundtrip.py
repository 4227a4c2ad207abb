"""Export then import is lossless (JSON, GraphRAG parquet, GraphML); plain GraphRAG tables with UUID
ids load with every edge whether endpoints are titles or ids; bad tables fail with file/row/field."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graph import BuildConfig, build_graph, load_graph, read_graphml, read_graphrag, read_json, save_graph
from graph.io import ENTITIES_FILE, RELATIONSHIPS_FILE
from graph.io.graphrag import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS
from graph.model import CausalGraph
from karma.data import load_dataset

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="module")
def built() -> CausalGraph:
    dataset = load_dataset(SAMPLE)
    graph = build_graph(
        dataset.transitions,
        dataset.features,
        # Undirected associations kept as co_moves edges, so every relation kind is round-tripped (the
        # sample's rules since issue 39 leave no proxy to relabel co_moves).
        BuildConfig(min_support=2, min_lift=1.0, min_association_z=-100.0, keep_undirected=True),
    )
    assert {e.relation for e in graph.edges.values()} >= {
        "causes",
        "co_moves",
        "instance_of",
        "text_relation",
    }
    return graph


def test_every_format_round_trips_losslessly(built: CausalGraph, tmp_path: Path) -> None:
    save_graph(built, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ENTITIES_FILE,
        "graph.graphml",
        "graph.json",
        "karma-complete.json",
        RELATIONSHIPS_FILE,
    ]
    for loaded in (
        read_json(tmp_path / "graph.json"),
        read_graphrag(tmp_path / ENTITIES_FILE, tmp_path / RELATIONSHIPS_FILE),
        read_graphml(tmp_path / "graph.graphml"),
        load_graph(tmp_path),
    ):
        assert loaded.content_hash() == built.content_hash()
        assert loaded.model_dump() == built.model_dump()
    # Writing twice gives byte-identical canonical JSON.
    other = tmp_path / "again"
    save_graph(load_graph(tmp_path), other)
    assert (other / "graph.json").read_bytes() == (tmp_path / "graph.json").read_bytes()


def test_graphrag_tables_have_the_full_column_set_with_title_endpoints(
    built: CausalGraph, tmp_path: Path
) -> None:
    save_graph(built, tmp_path)
    entities = pq.read_table(tmp_path / ENTITIES_FILE)
    relationships = pq.read_table(tmp_path / RELATIONSHIPS_FILE)
    assert set(ENTITY_COLUMNS) <= set(entities.column_names)
    assert set(RELATIONSHIP_COLUMNS) <= set(relationships.column_names)
    titles = set(entities.column("title").to_pylist())
    assert set(relationships.column("source").to_pylist()) <= titles
    assert set(relationships.column("target").to_pylist()) <= titles
    for value in entities.column("id").to_pylist() + relationships.column("id").to_pylist():
        assert uuid.UUID(value).version == 5
    assert relationships.num_rows == len(built.edges)


def _plain_graphrag(tmp_path: Path, endpoint: str) -> tuple[Path, Path]:
    """Tables shaped like GraphRAG's own output: UUID ids, no karma columns."""
    names = ["BRIGHT SCENE", "LOUD CHORUS", "FAST DRUMS", "NEON SIGN"]
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(names))]
    entities = pa.table(
        {
            "id": ids,
            "human_readable_id": list(range(4)),
            "title": names,
            "type": ["EVENT", "EVENT", "EVENT", "OBJECT"],
            "description": [f"about {n.lower()}" for n in names],
            "text_unit_ids": [["tu1"], ["tu1", "tu2"], [], ["tu3"]],
            "frequency": [3, 2, 1, 1],
            "degree": [2, 2, 1, 1],
        }
    )
    pairs = [(0, 1), (0, 2), (3, 1), (0, 1)]  # the last one repeats a pair: it must still load
    pick = (lambda i: names[i]) if endpoint == "title" else (lambda i: ids[i])
    relationships = pa.table(
        {
            "id": [str(uuid.UUID(int=100 + k)) for k in range(len(pairs))],
            "human_readable_id": list(range(len(pairs))),
            "source": [pick(a) for a, _ in pairs],
            "target": [pick(b) for _, b in pairs],
            "description": [
                "bright scenes bring loud choruses",
                "brightness speeds drums",
                "neon goes with loud",
                "again",
            ],
            "weight": [2.0, 1.0, 0.5, 1.5],
            "combined_degree": [4, 3, 3, 4],
            "text_unit_ids": [["tu1"], ["tu2"], [], ["tu4"]],
        }
    )
    e_path, r_path = tmp_path / ENTITIES_FILE, tmp_path / RELATIONSHIPS_FILE
    pq.write_table(entities, e_path)
    pq.write_table(relationships, r_path)
    return e_path, r_path


@pytest.mark.parametrize("endpoint", ["title", "id"])
def test_plain_graphrag_tables_load_with_every_edge(tmp_path: Path, endpoint: str) -> None:
    e_path, r_path = _plain_graphrag(tmp_path, endpoint)
    graph = read_graphrag(e_path, r_path)
    assert len(graph.nodes) == 4 and len(graph.edges) == 4
    first = str(uuid.UUID(int=1))
    assert graph.nodes[first].title == "BRIGHT SCENE" and graph.nodes[first].kind == "text"
    loud = str(uuid.UUID(int=2))
    out_of_bright = sorted((e.target, e.weight) for e in graph.edges.values() if e.source == first)
    assert out_of_bright == sorted([(loud, 2.0), (str(uuid.UUID(int=3)), 1.0), (loud, 1.5)])
    assert {tuple(e.evidence) for e in graph.edges.values()} == {("tu1",), ("tu2",), (), ("tu4",)}
    # The imported graph survives karma's own round trip too.
    out = tmp_path / "karma"
    save_graph(graph, out)
    assert load_graph(out / "graph.graphml").content_hash() == graph.content_hash()
    assert read_graphrag(out / ENTITIES_FILE, out / RELATIONSHIPS_FILE).content_hash() == graph.content_hash()


def test_unknown_endpoint_and_missing_column_are_clear_errors(tmp_path: Path) -> None:
    e_path, r_path = _plain_graphrag(tmp_path, "title")
    table = pq.read_table(r_path)
    sources = table.column("source").to_pylist()
    sources[2] = "NO SUCH ENTITY"
    pq.write_table(table.set_column(2, "source", pa.array(sources)), r_path)
    with pytest.raises(ValueError, match=r"relationships\.parquet: row 2, column 'source': 'NO SUCH ENTITY'"):
        read_graphrag(e_path, r_path)
    pq.write_table(table.drop(["target"]), r_path)
    with pytest.raises(ValueError, match=r"missing required column\(s\) \['target'\]"):
        read_graphrag(e_path, r_path)
    with pytest.raises(FileNotFoundError, match="holds no graph"):
        load_graph(tmp_path / "nothing-here" if (tmp_path / "nothing-here").mkdir() is None else tmp_path)
