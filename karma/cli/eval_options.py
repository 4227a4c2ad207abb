"""The options of ``karma eval``, declared once as ``Annotated`` types (graphrag's style), so that
:func:`karma.cli.evaluate.eval_command` reads as its parameter list and the help lives in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from karma.cli import tasks as task_cli
from karma.cli.options import (
    BACKEND_OPT_HELP,
    MODEL_HELP,
    backend_help,
    retriever_help,
)

DataOpt = Annotated[
    Path, typer.Option("--data", help="Folder with <video>_qa.json and <video>_causal_features.json.")
]
OutOpt = Annotated[Path, typer.Option("--out", help="Run directory; rerunning the same command resumes it.")]
LenientOpt = Annotated[
    bool, typer.Option("--lenient", help="Keep every valid question of files with problems (listed).")
]
PipelineOpt = Annotated[str, typer.Option(help="llm (features as text) or vlm (clips as video).")]
BackendOpt = Annotated[str, typer.Option(help=backend_help())]
BackendOptOpt = Annotated[list[str] | None, typer.Option("--backend-opt", help=BACKEND_OPT_HELP)]
ModelOpt = Annotated[str | None, typer.Option("--model", help=MODEL_HELP)]
CkgOpt = Annotated[str, typer.Option(help="Graph block: on, off, or both (the paired ablation).")]
RetrieverOpt = Annotated[str, typer.Option(help=retriever_help())]
KOpt = Annotated[int, typer.Option(help="Facts retrieved per question.")]
BudgetTokensOpt = Annotated[int, typer.Option(help="Token budget of the graph block.")]
TypesOpt = Annotated[
    list[str] | None,
    typer.Option("--types", help="Question types to answer (comma-separated or repeated)."),
]
VideosOpt = Annotated[
    list[str] | None, typer.Option("--videos", help="Video ids to answer (comma-separated or repeated).")
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        help="Answer only N of the selected questions, spread over videos and types (--limit-order)."
    ),
]
LimitOrderOpt = Annotated[
    str | None,
    typer.Option(
        "--limit-order",
        help="Which N questions --limit keeps: spread (default: a seeded sample, round-robin over "
        "videos, types rotated) or first (the first N in the order video, transition, question). "
        "A run folder keeps the order it was started with.",
    ),
]
FoldsOpt = Annotated[
    int,
    typer.Option(help="k of the k-fold split by video: each video's graph is built without its fold."),
]
WholeCorpusGraphOpt = Annotated[
    bool,
    typer.Option("--whole-corpus-graph", help="One graph from every video (the published, leaky setting)."),
]
GraphOpt = Annotated[
    Path | None, typer.Option("--graph", help="Use this prebuilt graph (folder or file) for every video.")
]
FoldSeedOpt = Annotated[int, typer.Option(help="Seed of the fold split.")]
ClipsOpt = Annotated[
    Path | None, typer.Option(help="VLM: folder with one folder of scene_NNN.mp4 per video.")
]
TemplateOpt = Annotated[str | None, typer.Option(help="Prompt template name or YAML path.")]
MaxTokensOpt = Annotated[
    int | None, typer.Option(help="Output budget (same in both arms; default 32, --preset paper 16).")
]
TemperatureOpt = Annotated[float, typer.Option(help="Decoding temperature; only 0 is cached.")]
SeedOpt = Annotated[int, typer.Option(help="Decoding seed.")]
ConstrainChoicesOpt = Annotated[
    bool, typer.Option("--constrain-choices", help="Constrain decoding to the letters a-d (both arms).")
]
DEFAULT_ANSWER_MODE = "loglik"
"""The answer mode of ``karma ask`` and ``karma eval`` when none is given (``--constrain-choices``
implies generate, and so does ``--preset paper``, whose published run generated its answers): with
the default model, qwen2.5-coder-1.5b, loglik reads the facts best (contrary world, 330 pairs,
--fact-links options: 70.0 % with the graph vs generate 62.4 %; docs/evaluation.md, issue 30 item 4)
and no answer is lost to parsing. One rule for both commands (``karma.cli.default_model.
command_answer_mode``: generate on server backends, with --constrain-choices or a preset), so a
question asked with ``karma ask`` is answered as in a ``karma eval`` run. Task runs (``--task``)
keep generate."""
AnswerModeOpt = Annotated[
    str | None,
    typer.Option(
        help="generate (parse the reply), letter (score each letter) or loglik (score each option's "
        "text, acc and acc_norm as lm-evaluation-harness); same in both arms. Default, as karma ask: "
        "loglik; generate with --constrain-choices, --preset or --backend openai."
    ),
]
ScorePickOpt = Annotated[
    str,
    typer.Option(
        help="Scored modes: which pick answers: acc_norm (log-likelihood per character), acc (sum) or "
        "mutual_info (minus the option's log-likelihood without the question, lm-eval's "
        "acc_mutual_info, scored only when chosen); acc and acc_norm are always recorded and reported."
    ),
]
FactLinksOpt = Annotated[
    str,
    typer.Option(
        help="none (plain fact lines) or options (each fact line names the option it speaks of, "
        "as the graph reader reads the options with the embedding model); graph-on arm only."
    ),
]
ConceptFactsOpt = Annotated[
    bool,
    typer.Option(
        "--concept-facts",
        help="Show concept links ('tempo decreases is a tempo') as facts; by default they are skipped "
        "and the next-ranked facts take their places.",
    ),
]
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
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar.")]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        help="Settings bundle: paper (4 fps, <=448x448 px, bf16 on cuda, 16 tokens; docs/backends.md)."
    ),
]
MaxErrorRateOpt = Annotated[
    float,
    typer.Option(help="Stop when more than this share of requests fail in the backend (1 = never)."),
]
AllowEmptyGraphOpt = Annotated[
    bool, typer.Option("--allow-empty-graph", help="Run the graph-on arm even on a graph without edges.")
]
AudioPartsOpt = Annotated[
    str, typer.Option(help="VLM: audio beside each clip: wav (derived), clip (the mp4 itself) or none.")
]
AllowBackendErrorsOpt = Annotated[
    bool,
    typer.Option(
        "--allow-backend-errors",
        help="Exit 0 although some requests failed in the backend (no answer: left out of accuracy and pairs, retried by a rerun); default exit 1.",
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        help="I/N: answer only the videos of shard I of N (from 0); join the N runs with `karma merge eval`.",
    ),
]
ExecutorOpt = Annotated[
    str,
    typer.Option("--executor", help="local (this process) or ray (shards as actors on a Ray cluster)."),
]
ShardsOpt = Annotated[int, typer.Option("--shards", min=1, help="Ray executor: number of shards/actors.")]
TaskOpt = Annotated[str | None, typer.Option("--task", help=task_cli.TASK_HELP)]
TaskArmsOpt = Annotated[list[str] | None, typer.Option("--arms", help=task_cli.ARMS_HELP)]
TaskOptOpt = Annotated[list[str] | None, typer.Option("--task-opt", "-T", help=task_cli.TASK_OPT_HELP)]
