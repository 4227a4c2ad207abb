"""The options of ``karma eval``, declared once as ``Annotated`` types (graphrag's style), so that
:func:`karma.cli.evaluate.eval_command` reads as its parameter list and the help lives in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from karma.cli import tasks as task_cli
from karma.cli.options import (
    CKG_HELP,
    FOLDS_HELP,
    GRAPH_HELP,
    MAX_TOKENS_HELP,
    AnswerModeOpt,
    BackendOpt,
    BackendOptOpt,
    BudgetTokensOpt,
    ClipsDirOpt,
    ConceptFactsOpt,
    ConstrainChoicesOpt,
    ExecutorOpt,
    FactLinksOpt,
    FoldSeedOpt,
    KOpt,
    LenientOpt,
    LimitOpt,
    MaxErrorRateOpt,
    ModelDefaults,
    ModelOpt,
    PipelineOpt,
    ProgressOpt,
    RetrieverOpt,
    ScorePickOpt,
    SeedOpt,
    ShardOpt,
    ShardsOpt,
    TaskOptOpt,
    TemplateOpt,
)

__all__ = [
    "AnswerModeOpt", "BackendOpt", "BackendOptOpt", "BudgetTokensOpt", "ConceptFactsOpt",
    "ConstrainChoicesOpt", "ExecutorOpt", "FactLinksOpt", "FoldSeedOpt", "KOpt", "LenientOpt", "LimitOpt", "MaxErrorRateOpt",
    "ModelOpt", "PipelineOpt", "ProgressOpt", "RetrieverOpt", "ScorePickOpt", "SeedOpt", "ShardOpt", "ShardsOpt",
    "TaskOptOpt", "TemplateOpt",
]  # fmt: skip
"""The shared options eval takes, re-exported so :func:`karma.cli.evaluate.eval_command` reads ``opt.X``."""

KMV = ModelDefaults("karma.tasks.karma_mv.options:KarmaMvOptions")
"""The defaults of Karma-MV's flags, read from its options model (``-T`` options; each flag of
:data:`karma.tasks.karma_mv.options.FLAG_ALIASES` is an alias of one), where they are declared once;
the run's flags read theirs from ``EvalConfig`` (``karma.cli.options.EVAL``)."""

DataOpt = Annotated[
    Path, typer.Option("--data", help="Folder with <video>_qa.json and <video>_causal_features.json.")
]
OutOpt = Annotated[Path, typer.Option("--out", help="Run directory; rerunning the same command resumes it.")]
CkgOpt = Annotated[Literal["on", "off", "both"], typer.Option("--ckg", help=CKG_HELP)]
TypesOpt = Annotated[
    list[str] | None,
    typer.Option("--types", help="Question types to answer (comma-separated or repeated)."),
]
VideosOpt = Annotated[
    list[str] | None, typer.Option("--videos", help="Video ids to answer (comma-separated or repeated).")
]
LimitOrderOpt = Annotated[
    Literal["spread", "first"] | None,
    typer.Option(
        "--limit-order",
        help="Which N questions --limit keeps: spread (default: a seeded sample, round-robin over "
        "videos, types rotated) or first (the first N in the order video, transition, question). "
        "A run folder keeps the order it was started with.",
    ),
]
FoldsOpt = Annotated[int, typer.Option("--folds", help=FOLDS_HELP)]
WholeCorpusGraphOpt = Annotated[
    bool,
    typer.Option("--whole-corpus-graph", help="One graph from every video (the published, leaky setting)."),
]
GraphOpt = Annotated[Path | None, typer.Option("--graph", help=GRAPH_HELP)]
ClipsOpt = ClipsDirOpt
MaxTokensOpt = Annotated[int | None, typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
TemperatureOpt = Annotated[float, typer.Option(help="Decoding temperature; only 0 is cached.")]
DEFAULT_ANSWER_MODE = "loglik"
"""The answer mode of ``karma ask`` and ``karma eval`` when none is given (``--constrain-choices``
implies generate, and so does ``--preset paper``, whose published run generated its answers): with
the default model, qwen2.5-coder-1.5b, loglik reads the facts best (contrary world, 330 pairs,
--fact-links options: 70.0 % with the graph vs generate 62.4 %; docs/evaluation.md, issue 30 item 4)
and no answer is lost to parsing. One rule for both commands (``karma.cli.default_model.
command_answer_mode``: generate on server backends, with --constrain-choices or a preset), so a
question asked with ``karma ask`` is answered as in a ``karma eval`` run. Task runs (``--task``)
keep generate."""
LogPromptsOpt = Annotated[
    bool,
    typer.Option("--log-prompts", help="Write every request's full prompt to RUN_DIR/prompts.jsonl."),
]
BatchSizeOpt = Annotated[
    int | None, typer.Option(help="Requests per backend call (default: 16 batching backends, else 1).")
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(help="Backend calls in flight (default: the backend's max_concurrency or 1)."),
]
CacheOpt = Annotated[
    Path | None, typer.Option("--cache", help="Response cache file (default: karma's cache dir).")
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")]
BootstrapResamplesOpt = Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")]
ReportTooOpt = Annotated[
    bool, typer.Option("--report", help="Also write RUN_DIR/report/report.md with plots.")
]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        help="Settings bundle: paper (4 fps, <=448x448 px, bf16 on cuda, 16 tokens; docs/backends.md)."
    ),
]
AllowEmptyGraphOpt = Annotated[
    bool, typer.Option("--allow-empty-graph", help="Run the graph-on arm even on a graph without edges.")
]
AudioPartsOpt = Annotated[
    Literal["wav", "clip", "none"],
    typer.Option(help="VLM: audio beside each clip: wav (derived), clip (the mp4 itself) or none."),
]
AllowBackendErrorsOpt = Annotated[
    bool,
    typer.Option(
        "--allow-backend-errors",
        help="Exit 0 although some requests failed in the backend (no answer: left out of accuracy and pairs, retried by a rerun); default exit 1.",
    ),
]
TaskOpt = Annotated[str | None, typer.Option("--task", help=task_cli.TASK_HELP)]
TaskArmsOpt = Annotated[list[str] | None, typer.Option("--arms", help=task_cli.ARMS_HELP)]
