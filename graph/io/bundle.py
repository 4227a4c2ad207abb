"""A graph directory: ``graph.json`` (canonical) plus the same graph as GraphRAG parquet and GraphML."""

from __future__ import annotations

from pathlib import Path

from graph.io.graphml import GRAPHML_FILE, read_graphml, write_graphml
from graph.io.graphrag import ENTITIES_FILE, RELATIONSHIPS_FILE, read_graphrag, write_graphrag
from graph.io.json_io import GRAPH_JSON, read_json, write_json
from graph.model import CausalGraph


def save_graph(graph: CausalGraph, directory: str | Path) -> Path:
    """Write graph.json, entities.parquet, relationships.parquet and graph.graphml into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_json(graph, directory / GRAPH_JSON)
    write_graphrag(graph, directory)
    write_graphml(graph, directory / GRAPHML_FILE)
    return directory


def load_graph(path: str | Path) -> CausalGraph:
    """Load a graph from a directory (graph.json, else the GraphRAG tables, else graph.graphml) or from
    a single ``.json`` / ``.graphml`` file."""
    path = Path(path)
    if path.is_file():
        if path.suffix == ".graphml":
            return read_graphml(path)
        return read_json(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no graph at {path} (expected a graph directory or a .json/.graphml file)")
    if (path / GRAPH_JSON).is_file():
        return read_json(path / GRAPH_JSON)
    if (path / ENTITIES_FILE).is_file() and (path / RELATIONSHIPS_FILE).is_file():
        return read_graphrag(path / ENTITIES_FILE, path / RELATIONSHIPS_FILE)
    if (path / GRAPHML_FILE).is_file():
        return read_graphml(path / GRAPHML_FILE)
    raise FileNotFoundError(
        f"{path} holds no graph: expected {GRAPH_JSON}, or {ENTITIES_FILE} + {RELATIONSHIPS_FILE}, or {GRAPHML_FILE}"
    )
