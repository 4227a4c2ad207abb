"""``karma qa``: make Karma-MV questions for your own videos (parsing only; ``karma.qa`` does the work)."""

from __future__ import annotations

from pathlib import Path

import typer

from karma.cli.options import (
    FOLDS_HELP,
    GRAPH_HELP,
    PARAPHRASE,
    QA_MAKE,
    VERIFY,
    AllowBiasOpt,
    BackendOpt,
    BackendOptOpt,
    FoldSeedOpt,
    LimitOpt,
    MaxBiasOpt,
    MaxErrorRateOpt,
    SeedOpt,
)

app = typer.Typer(no_args_is_help=True)


@app.command("make")
def make(
    data: Path = typer.Option(
        ...,
        "--data",
        help="Folder of *_causal_features.json (karma extract output; *_transitions.json for times).",
    ),
    out: Path = typer.Option(
        ..., "--out", help="Output folder: *_qa.json, feature copies, grounding, manifest."
    ),
    graph: Path | None = typer.Option(None, "--graph", help=GRAPH_HELP),
    seed: SeedOpt = QA_MAKE.seed,
    folds: int = typer.Option(QA_MAKE.folds, "--folds", min=2, help=FOLDS_HELP),
    fold_seed: FoldSeedOpt = QA_MAKE.fold_seed,
    variables: str | None = typer.Option(
        None,
        "--variables",
        help="Comma-separated variables questions may ask about (e.g. brightness,loudness,mode); "
        "default: every measured one. Distractors still come from all.",
    ),
    max_bias: MaxBiasOpt = QA_MAKE.max_bias,
    allow_bias: AllowBiasOpt = QA_MAKE.allow_bias,
) -> None:
    """Make evidential, predictive and counterfactual questions from scene features and a graph.

    Evidential answers are the transition's own observed change; predictive and counterfactual answers
    follow the rules of a graph that never saw the video (the graph of the other folds, as karma eval
    builds them, or --graph). Each question's grounding fact is in question_grounding.jsonl. The set is
    refused (exit 2, nothing written) when the most-frequent-letter, longest-option or word-overlap
    baseline beats --max-bias. See docs/real-data.md.
    """
    from karma.cli.console import stderr_console
    from karma.qa import QaMakeConfig, make_qa

    config = QaMakeConfig(
        data=data,
        out=out,
        graph=graph,
        seed=seed,
        folds=folds,
        fold_seed=fold_seed,
        variables=[v.strip() for v in variables.split(",") if v.strip()] if variables is not None else None,
        max_bias=max_bias,
        allow_bias=allow_bias,
    )
    summary = make_qa(config)
    console = stderr_console()
    types = ", ".join(f"{n} {t}" for t, n in summary.questions_per_type.items())
    worst = max(
        (v, k)
        for k, v in summary.baselines.items()
        if k in ("most_frequent_letter", "longest_option", "word_overlap")
    )
    console.print(
        f"{summary.questions} questions ({types}) on {summary.asked} of {summary.transitions} transitions "
        f"of {summary.videos} videos -> {summary.out_dir}; highest no-model baseline {worst[1]} {worst[0]:.1%}"
    )
    for reason, count in summary.skipped_transitions.items():
        console.print(f"  skipped {count} transitions: {reason}")
    for video, reason in summary.skipped_videos.items():
        console.print(f"  skipped video {video}: {reason}")


@app.command("verify")
def verify(
    qa_dir: Path = typer.Argument(..., help="A `karma qa make` output folder."),
    out: Path = typer.Option(..., "--out", help="Output folder: verdicts, cache, drops, the kept questions."),
    backend: BackendOpt = VERIFY.backend,
    backend_opt: BackendOptOpt = None,
    limit: LimitOpt = None,
    max_error_rate: MaxErrorRateOpt = VERIFY.max_error_rate,
) -> None:
    """Answer every question from its explanation with a model; drop and list the ones it gets wrong.

    Resumable (verdicts are appended to OUT/verify.jsonl as they come; a rerun, also after kill -9,
    skips what is there) and cached (OUT/responses.sqlite). A request that fails in the backend is
    recorded as an error, not a drop: exit 1 while any is left, and a rerun asks exactly those again.
    OUT is locked (a second run on it: exit 2). OUT/verify.json records the model, the prompt hash and
    every drop; OUT holds the kept questions as a complete folder. See docs/real-data.md.
    """
    from karma.cli.console import stderr_console
    from karma.cli.options import key_values
    from karma.qa.verify import VerifyConfig, verify_qa

    config = VerifyConfig(
        qa_dir=qa_dir,
        out=out,
        backend=backend,
        backend_options=key_values(backend_opt or [], "--backend-opt"),
        limit=limit,
        max_error_rate=max_error_rate,
    )
    summary = verify_qa(config)
    stderr_console().print(
        f"{summary.verified} questions verified with {summary.model_id} ({summary.answered_now} now, "
        f"{summary.from_cache} from cache): kept {summary.kept}, dropped {summary.dropped} "
        f"(listed in {out / 'verify_drops.jsonl'}) -> {out}"
    )


@app.command("paraphrase")
def paraphrase(
    qa_dir: Path = typer.Argument(..., help="A `karma qa make` (or `karma qa verify`) output folder."),
    out: Path = typer.Option(
        ..., "--out", help="Output folder: verdicts, cache, manifest, the rewritten set."
    ),
    backend: BackendOpt = PARAPHRASE.backend,
    backend_opt: BackendOptOpt = None,
    limit: LimitOpt = None,
    max_bias: MaxBiasOpt = PARAPHRASE.max_bias,
    allow_bias: AllowBiasOpt = PARAPHRASE.allow_bias,
    max_error_rate: MaxErrorRateOpt = PARAPHRASE.max_error_rate,
) -> None:
    """Rewrite each question's text with a model; keep a rewrite only if it passes the guards.

    A rewrite must keep every number, stay within 0.5x-2x the length and share no new word with an
    option; otherwise the template's text stays (the reason is recorded in OUT/paraphrase.json).
    Resumable, cached and locked like `karma qa verify` (a failed request: exit 1, retried by a rerun);
    refused (exit 2) when a no-model baseline beats
    --max-bias. Run `karma qa verify` on the result to drop items the rewrite broke. See docs/real-data.md.
    """
    from karma.cli.console import stderr_console
    from karma.cli.options import key_values
    from karma.qa.paraphrase import ParaphraseConfig, paraphrase_qa

    config = ParaphraseConfig(
        qa_dir=qa_dir,
        out=out,
        backend=backend,
        backend_options=key_values(backend_opt or [], "--backend-opt"),
        limit=limit,
        max_bias=max_bias,
        allow_bias=allow_bias,
        max_error_rate=max_error_rate,
    )
    summary = paraphrase_qa(config)
    rejected = ", ".join(f"{n} {why}" for why, n in summary.rejected.items()) or "none"
    stderr_console().print(
        f"{summary.rewritten} of {summary.questions} questions rewritten with {summary.model_id} "
        f"({summary.answered_now} now, {summary.from_cache} from cache); rejected: {rejected} -> {out}"
    )
