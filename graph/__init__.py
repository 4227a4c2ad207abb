"""The causal knowledge graph: data model, builder, stores and import/export.

Public names are loaded on first use (PEP 562), so ``import graph.model`` -- which every retriever and
backend does -- does not pay for numpy, scipy, pyarrow and networkx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karma.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "BuildConfig": "graph.ckg",
    "GroundTruth": "graph.ckg",
    "ScoreReport": "graph.ckg",
    "build_graph": "graph.ckg",
    "detect_events": "graph.ckg",
    "edge_id": "graph.ckg",
    "fold_exclusion": "graph.ckg",
    "load_ground_truth": "graph.ckg",
    "score_against_truth": "graph.ckg",
    "video_folds": "graph.ckg",
    "load_graph": "graph.io",
    "read_graphml": "graph.io",
    "read_graphrag": "graph.io",
    "read_json": "graph.io",
    "save_graph": "graph.io",
    "write_graphml": "graph.io",
    "write_graphrag": "graph.io",
    "write_json": "graph.io",
    "CausalGraph": "graph.model",
    "CkgEdge": "graph.model",
    "CkgNode": "graph.model",
    "GraphStore": "graph.model",
    "NetworkxStore": "graph.store",
}
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

if TYPE_CHECKING:
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
