"""CKG construction: change-event detection, edge statistics, the builder, folds and scoring."""

from graph.ckg.builder import build_graph, edge_id
from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable, build_event_table, detect_events
from graph.ckg.folds import fold_exclusion, video_folds
from graph.ckg.score import GroundTruth, ScoreReport, load_ground_truth, score_against_truth

__all__ = [
    "BuildConfig",
    "EventTable",
    "GroundTruth",
    "ScoreReport",
    "build_event_table",
    "build_graph",
    "detect_events",
    "edge_id",
    "fold_exclusion",
    "load_ground_truth",
    "score_against_truth",
    "video_folds",
]
