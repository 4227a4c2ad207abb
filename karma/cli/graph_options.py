"""The options of ``karma graph build``, declared once as ``Annotated`` types (as ``eval_options``), so
that :func:`karma.cli.graph.build` reads as its parameter list and the help lives in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from karma.cli.options import FOLDS_HELP, FoldSeedOpt, LenientOpt

__all__ = ["FoldSeedOpt", "LenientOpt"]
"""Shared with karma data, eval: one spelling, ``--lenient/--strict``."""

DataOpt = Annotated[
    Path,
    typer.Option(
        "--data",
        help="Folder (or file) of *_qa.json and *_causal_features.json (feature files alone: karma "
        "extract output, consecutive scenes are the transitions).",
    ),
]
OutOpt = Annotated[
    Path, typer.Option("--out", help="Graph folder to write (graph.json, parquet tables, GraphML).")
]
ExcludeVideosOpt = Annotated[
    str,
    typer.Option(
        "--exclude-videos", help="Comma-separated video ids to leave out (the ones you will evaluate on)."
    ),
]
FoldsOpt = Annotated[int, typer.Option("--folds", help=FOLDS_HELP)]
FoldOpt = Annotated[
    int, typer.Option("--fold", help="0-based fold to leave out of the build (needs --folds).")
]
MinLiftOpt = Annotated[float, typer.Option("--min-lift", help="Minimum lift over the effect's base rate.")]
MinPrecedenceOpt = Annotated[
    float,
    typer.Option(
        "--min-precedence",
        help="Minimum temporal precedence for 'causes' (part of the precedence test).",
    ),
]
MinPrecedenceZOpt = Annotated[
    float, typer.Option("--min-precedence-z", help="Exact-test z the precedence needs for 'causes'.")
]
MinAssociationZOpt = Annotated[
    float,
    typer.Option(
        "--min-association-z",
        help="Exact-test z the co-occurrence needs over the base rate for any edge.",
    ),
]
MinReferenceZOpt = Annotated[
    float,
    typer.Option(
        "--min-reference-z",
        help="Exact-test z the co-occurrence needs over the effect's rate where the cause's variable did not move.",
    ),
]
StatesOpt = Annotated[
    str,
    typer.Option(
        "--states",
        help="Comma-separated variables whose state after the cut is an event (action, mode, mood; '' for none).",
    ),
]
AggregateOpt = Annotated[
    str,
    typer.Option(
        "--aggregate",
        help="Comma-separated variables whose X->Y shifts are also pooled as *->Y (action, mood; '' for none).",
    ),
]
ThresholdOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--threshold",
        help="VARIABLE=VALUE minimum |change| for an event (repeatable); default: data quantile.",
    ),
]
ThresholdQuantileOpt = Annotated[
    float,
    typer.Option("--threshold-quantile", help="Quantile of |change| used for variables without --threshold."),
]
ExplanationsOpt = Annotated[
    bool,
    typer.Option("--explanations/--no-explanations", help="Add text relations from question explanations."),
]
KeepUndirectedOpt = Annotated[
    bool,
    typer.Option(
        "--keep-undirected",
        help="Emit associations that fail the precedence test as 'co_moves' edges (default: no edge; "
        "they are listed in build_config['left_out_undirected']).",
    ),
]
