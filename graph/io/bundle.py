"""A graph directory: ``graph.json`` (canonical) plus the same graph as GraphRAG parquet and GraphML."""

from __future__ import annotations

from pathlib import Path

from graph.io.graphml import GRAPHML_FILE, read_graphml, write_graphml
from graph.io.graphrag import ENTITIES_FILE, RELATIONSHIPS_FILE, read_graphrag, write_graphrag
from graph.io.json_io import GRAPH_JSON, read_json, write_json
from graph.io.marker import COMPLETE_FILE, check_folder, write_marker
from graph.model import CausalGraph
from karma.core.atomic import atomic_directory, fault_point, is_temporary, recover_directory
from karma.core.errors import InputError

GRAPH_FILES = (GRAPH_JSON, ENTITIES_FILE, RELATIONSHIPS_FILE, GRAPHML_FILE)
"""The files of a karma graph folder (plus the completion marker, written last)."""


def _check_replaceable(directory: Path) -> None:
    """A folder is replaced as a whole, so it may hold only a graph's own files (never a user's)."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise InputError(f"{directory}: is a file, expected a graph folder to write")
    own = {*GRAPH_FILES, COMPLETE_FILE}
    foreign = sorted(p.name for p in directory.iterdir() if p.name not in own and not is_temporary(p))
    if foreign:
        raise InputError(
            f"{directory}: holds files that are not part of a karma graph ({', '.join(foreign[:5])}); "
            "write the graph into an empty or new folder"
        )


def save_graph(graph: CausalGraph, directory: str | Path) -> Path:
    """Write graph.json, entities.parquet, relationships.parquet, graph.graphml and the completion
    marker into ``directory`` as one step: a reader sees the old folder or the new one, never a mix."""
    directory = Path(directory)
    _check_replaceable(directory)
    with atomic_directory(directory) as staging:
        write_json(graph, staging / GRAPH_JSON)
        fault_point("graph.file")
        write_graphrag(graph, staging)
        fault_point("graph.file")
        write_graphml(graph, staging / GRAPHML_FILE)
        fault_point("graph.file")
        write_marker(staging, graph.content_hash(), list(GRAPH_FILES))
        fault_point("graph.file")
    return directory


def load_graph(path: str | Path) -> CausalGraph:
    """Load a graph from a directory (graph.json, else the GraphRAG tables, else graph.graphml) or from
    a single ``.json`` / ``.graphml`` file."""
    path = Path(path)
    if not path.exists():
        recover_directory(path)  # a rebuild killed between its two renames (filesystems without exchange)
    if path.is_file():
        if path.suffix == ".graphml":
            return read_graphml(path)
        return read_json(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no graph at {path} (expected a graph directory or a .json/.graphml file)")
    check_folder(path, GRAPH_JSON)
    if (path / GRAPH_JSON).is_file():
        return read_json(path / GRAPH_JSON)
    if (path / ENTITIES_FILE).is_file() and (path / RELATIONSHIPS_FILE).is_file():
        return read_graphrag(path / ENTITIES_FILE, path / RELATIONSHIPS_FILE)
    if (path / GRAPHML_FILE).is_file():
        return read_graphml(path / GRAPHML_FILE)
    raise FileNotFoundError(
        f"{path} holds no graph: expected {GRAPH_JSON}, or {ENTITIES_FILE} + {RELATIONSHIPS_FILE}, or {GRAPHML_FILE}"
    )
