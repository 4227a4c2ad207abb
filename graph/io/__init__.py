"""Import and export of CKGs: canonical JSON, GraphRAG-compatible parquet tables, GraphML."""

from graph.io.bundle import load_graph, save_graph
from graph.io.graphml import read_graphml, to_networkx, write_graphml
from graph.io.graphrag import ENTITIES_FILE, RELATIONSHIPS_FILE, read_graphrag, stable_uuid, write_graphrag
from graph.io.json_io import GRAPH_JSON, read_json, write_json

__all__ = [
    "ENTITIES_FILE",
    "GRAPH_JSON",
    "RELATIONSHIPS_FILE",
    "load_graph",
    "read_graphml",
    "read_graphrag",
    "read_json",
    "save_graph",
    "stable_uuid",
    "to_networkx",
    "write_graphml",
    "write_graphrag",
    "write_json",
]
