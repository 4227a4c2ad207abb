"""The causal knowledge graph: data model, builder, stores and import/export."""

from graph.ckg import (
    BuildConfig,
    GroundTruth,
    ScoreReport,
    build_graph,
    detect_events,
    edge_id,
    fold_exclusion,
    load_ground_truth,
    score_against_truth,
    video_folds,
)
from graph.io import (
    load_graph,
    read_graphml,
    read_graphrag,
    read_json,
    save_graph,
    write_graphml,
    write_graphrag,
    write_json,
)
from graph.model import CausalGraph, CkgEdge, CkgNode, GraphStore
from graph.store import NetworkxStore

__all__ = [
    "BuildConfig",
    "CausalGraph",
    "CkgEdge",
    "CkgNode",
    "GraphStore",
    "GroundTruth",
    "NetworkxStore",
    "ScoreReport",
    "build_graph",
    "detect_events",
    "edge_id",
    "fold_exclusion",
    "load_graph",
    "load_ground_truth",
    "read_graphml",
    "read_graphrag",
    "read_json",
    "save_graph",
    "score_against_truth",
    "video_folds",
    "write_graphml",
    "write_graphrag",
    "write_json",
]
