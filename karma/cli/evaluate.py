"""``karma eval`` and ``karma report``: parse options and delegate to ``karma.eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from karma.cli import eval_options as opt
from karma.cli import tasks as task_cli
from karma.cli.eval_options import KMV
from karma.cli.options import (
    DEFAULT_EXECUTOR,
    DEFAULT_SHARDS,
    EVAL,
    EVAL_RUN,
    DeviceOpt,
    RayAddressOpt,
    RetrieverOptionsOpt,
    backend_options,
    retriever_options,
)
from karma.core.errors import InputError


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def eval_command(
    data: opt.DataOpt,
    out: opt.OutOpt,
    lenient: opt.LenientOpt = EVAL.lenient,
    pipeline: opt.PipelineOpt = KMV.pipeline,
    backend: opt.BackendOpt = EVAL.backend,
    backend_opt: opt.BackendOptOpt = None,
    model: opt.ModelOpt = None,
    ckg: opt.CkgOpt = KMV.ckg,
    retriever: opt.RetrieverOpt = KMV.retriever,
    retriever_opt: RetrieverOptionsOpt = None,
    device: DeviceOpt = None,
    k: opt.KOpt = KMV.k,
    budget_tokens: opt.BudgetTokensOpt = KMV.budget_tokens,
    types: opt.TypesOpt = None,
    videos: opt.VideosOpt = None,
    limit: opt.LimitOpt = None,
    limit_order: opt.LimitOrderOpt = None,
    folds: opt.FoldsOpt = KMV.folds,
    whole_corpus_graph: opt.WholeCorpusGraphOpt = KMV.whole_corpus_graph,
    graph: opt.GraphOpt = None,
    fold_seed: opt.FoldSeedOpt = KMV.fold_seed,
    clips: opt.ClipsOpt = None,
    template: opt.TemplateOpt = None,
    max_tokens: opt.MaxTokensOpt = None,
    temperature: opt.TemperatureOpt = EVAL.temperature,
    seed: opt.SeedOpt = EVAL.seed,
    constrain_choices: opt.ConstrainChoicesOpt = KMV.constrain_choices,
    answer_mode: opt.AnswerModeOpt = None,
    score_pick: opt.ScorePickOpt = KMV.score_pick,
    fact_links: opt.FactLinksOpt = KMV.fact_links,
    concept_facts: opt.ConceptFactsOpt = KMV.concept_facts,
    log_prompts: opt.LogPromptsOpt = EVAL.log_prompts,
    batch_size: opt.BatchSizeOpt = None,
    concurrency: opt.ConcurrencyOpt = None,
    cache: opt.CacheOpt = None,
    no_cache: opt.NoCacheOpt = False,
    bootstrap_resamples: opt.BootstrapResamplesOpt = EVAL.bootstrap_resamples,
    report_too: opt.ReportTooOpt = False,
    progress: opt.ProgressOpt = EVAL_RUN.progress,
    preset: opt.PresetOpt = None,
    max_error_rate: opt.MaxErrorRateOpt = EVAL.max_error_rate,
    allow_empty_graph: opt.AllowEmptyGraphOpt = KMV.allow_empty_graph,
    audio_parts: opt.AudioPartsOpt = KMV.audio_parts,
    allow_backend_errors: opt.AllowBackendErrorsOpt = False,
    shard: opt.ShardOpt = None,
    executor: opt.ExecutorOpt = DEFAULT_EXECUTOR,
    shards: opt.ShardsOpt = DEFAULT_SHARDS,
    ray_address: RayAddressOpt = None,
    task: opt.TaskOpt = None,
    task_arms: opt.TaskArmsOpt = None,
    task_opt: opt.TaskOptOpt = None,
) -> None:
    """Answer questions with the graph block on and/or off, resumably; write config, samples and results.

    RUN_DIR/config.json records the resolved settings and the content hashes of data, graphs, prompt template and model; RUN_DIR/samples.jsonl gets one line per (question, arm) as soon as it is answered; RUN_DIR/results.json holds accuracy per type and arm with video-clustered bootstrap intervals, parse-failure rates, the paired graph effect with an exact McNemar test, and the no-model baselines.

    Karma-MV's own settings are -T options, each with its flag as an alias: -T k=5 is --k 5, -T budget_tokens=300 is --budget-tokens 300, -T ckg=on is --ckg on (`karma tasks show karma-mv` lists them with their defaults; both spellings with different values are refused). The run's settings (--backend, --model, --limit, --max-tokens, ...) are flags only.

    Rerunning the same command skips finished records (see docs/evaluation.md).
    """
    if task_cli.is_other_task(task):
        # Every option given is either honoured by the task run or refused (exit 2) before any work.
        task_cli.eval_task(
            task, given=task_cli.given_options(), data=data, out=out, lenient=lenient, backend=backend,
            backend_opt=backend_opt, model=model, arms=_split(task_arms), task_opt=task_opt,
            max_tokens=32 if max_tokens is None else max_tokens, temperature=temperature, seed=seed,
            limit=limit, bootstrap_resamples=bootstrap_resamples, batch_size=batch_size,
            concurrency=concurrency, max_error_rate=max_error_rate, allow_backend_errors=allow_backend_errors,
            report_too=report_too, progress=progress, answer_mode=answer_mode or "generate", executor=executor,
            no_cache=no_cache, cache=cache,
        )  # fmt: skip
        return
    from karma.cli.default_model import command_model

    options = task_cli.karma_mv_options(
        {
            "ckg": ckg, "pipeline": pipeline, "clips": clips, "retriever": retriever, "k": k,
            "budget_tokens": budget_tokens, "types": types, "videos": videos, "limit_order": limit_order,
            "folds": folds, "whole_corpus_graph": whole_corpus_graph, "graph": graph, "fold_seed": fold_seed,
            "template": template, "constrain_choices": constrain_choices, "answer_mode": answer_mode,
            "score_pick": score_pick, "fact_links": fact_links, "concept_facts": concept_facts,
            "allow_empty_graph": allow_empty_graph, "audio_parts": audio_parts,
        },
        task_opt,
    )  # fmt: skip
    config = _karma_mv_config(
        options, data=str(data), out=str(out), lenient=lenient, backend=backend,
        backend_options=backend_options(backend_opt or [], "--backend-opt"),
        model=command_model(model, backend, backend_opt),
        retriever_options=retriever_options(options.retriever, retriever_opt), embed_device=device,
        **({"max_tokens": max_tokens} if max_tokens is not None else {}),
        temperature=temperature, seed=seed, log_prompts=log_prompts, limit=limit,
        bootstrap_resamples=bootstrap_resamples, batch_size=batch_size, concurrency=concurrency,
        use_cache=not no_cache, cache_path=str(cache) if cache else None, preset=preset,
        max_error_rate=max_error_rate, shard=shard,
    )  # fmt: skip
    if executor == "ray":
        _run_on_ray(config, shards, ray_address, report_too=report_too, allow_errors=allow_backend_errors)
        return
    _run_here(config, progress=progress, report_too=report_too, allow_errors=allow_backend_errors)


def _karma_mv_config(options: Any, *, shard: str | None, **run: Any) -> Any:
    """The EvalConfig of a Karma-MV run: its options (``-T`` or their flag aliases) and the run's
    settings, with the answer mode and the model resolved by the rule ``karma ask`` shares."""
    from karma.cli.default_model import command_answer_mode
    from karma.core.shard import ShardSpec
    from karma.eval import EvalConfig

    answer_mode = command_answer_mode(
        options.answer_mode, run["backend"], constrained=options.constrain_choices, preset=run["preset"]
    )
    options = options.model_copy(update={"answer_mode": answer_mode})
    try:
        return EvalConfig.from_options(options, shard=str(ShardSpec.parse(shard)) if shard else None, **run)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def _run_on_ray(
    config: Any, shards: int, address: str | None, *, report_too: bool, allow_errors: bool
) -> None:
    from karma.distributed.ray_runner import run_eval_on_ray

    parts, _ = run_eval_on_ray(config, shards, address=address)
    answered = sum(part["answered"] for part in parts)
    typer.echo(f"{config.out}: {answered} answered in {shards} Ray shards, merged")
    _finish(Path(config.out), report_too=report_too, allow_errors=allow_errors)


def _run_here(config: Any, *, progress: bool, report_too: bool, allow_errors: bool) -> None:
    from karma.eval import run_evaluation

    summary = run_evaluation(config, progress=progress)  # a RunMismatchError (exit 2): karma.cli.errors
    typer.echo(
        f"{summary.run_dir}: {summary.answered} answered ({summary.cache_hits} from cache), "
        f"{summary.already_done} already done, {summary.questions_per_s:.2f} q/s"
    )
    if summary.data_problems:
        typer.echo(
            f"  data: {summary.data_problems} records left out with errors (see `karma data validate`)",
            err=True,
        )
    if summary.data_notes:
        typer.echo(
            f"  data: {summary.data_notes} notes (warnings, inferred keys; nothing left out; see `karma data validate`)",
            err=True,
        )
    if summary.removed_for_features:
        typer.echo(
            f"  data: {summary.removed_for_features} questions left the denominator (feature problems)",
            err=True,
        )
    _finish(Path(summary.run_dir), report_too=report_too, allow_errors=allow_errors)


def _finish(run_dir: Path, *, report_too: bool, allow_errors: bool) -> None:
    """The summary lines, the report when asked, and exit 1 on backend errors unless allowed."""
    from karma.eval import write_report

    _print_summary(run_dir)
    if report_too:
        typer.echo(f"report: {write_report([str(run_dir)])}")
    _refuse_backend_errors(run_dir, allow_errors)


def _refuse_backend_errors(run_dir: Path, allow: bool) -> None:
    """Exit 1 when (question, arm) pairs of the run still hold a backend error, unless allowed."""
    from karma.core.errors import RunError
    from karma.run.hygiene import backend_error_count

    errors = backend_error_count(json.loads((run_dir / "results.json").read_text()))
    if errors and not allow:
        raise RunError(
            f"{errors} request(s) of {run_dir} failed in the backend (no answer came back; left out of "
            "accuracy and pairs); rerun the same command to retry them, or pass --allow-backend-errors"
        )


def _pct(value: float | None) -> str:
    """A share as a percentage, or a dash where nothing was answered (no accuracy)."""
    return "–" if value is None else f"{100 * value:.1f}%"


def _print_summary(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    for arm, stats in results.get("arms", {}).items():
        s = stats["overall"]
        typer.echo(
            f"  graph {arm}: accuracy {_pct(s['accuracy'])} [{_pct(s['ci_low'])}, {_pct(s['ci_high'])}] "
            f"n={s['n']}, parse failures {_pct(s['parse_failure_rate'])}, "
            f"backend errors {s.get('backend_errors', 0)}"
        )
    paired = results.get("paired", {}).get("overall")
    if paired:
        typer.echo(
            f"  graph effect: {100 * paired['delta']:+.1f} points [{100 * paired['ci_low']:+.1f}, "
            f"{100 * paired['ci_high']:+.1f}], McNemar p={paired['mcnemar_p']:.3g}"
        )
    _print_warnings(run_dir, results)


def _print_warnings(run_dir: Path, results: dict[str, Any]) -> None:
    """What the numbers above cannot show: too few videos for the intervals, links that linked nothing."""
    from karma.eval.report import MIN_VIDEOS_FOR_INTERVALS

    videos = results.get("n_videos")
    if videos is not None and videos < MIN_VIDEOS_FOR_INTERVALS:
        typer.echo(
            f"  warning: {results.get('n_questions')} questions from only {videos} video(s): the intervals "
            f"resample whole videos, so they are too coarse to trust (use at least "
            f"{MIN_VIDEOS_FOR_INTERVALS}; widen --limit or --videos)"
        )
    from karma.eval.rundir import RunDir

    linked = [r.linked_lines for r in RunDir(run_dir).final_samples() if r.linked_lines is not None]
    if linked:
        empty = sum(1 for count in linked if count == 0)
        typer.echo(
            f"  fact links: {len(linked) - empty} of {len(linked)} graph-on prompts name an option; "
            f"{empty} linked nothing (plain fact lines)"
        )


def report(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="One or more run directories written by `karma eval`.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Output folder (default: RUN_DIR/report, or ./karma-report for several runs)."
        ),
    ] = None,
    recompute: Annotated[
        bool,
        typer.Option(
            "--recompute", help="Recompute results.json from samples.jsonl first (e.g. after a killed run)."
        ),
    ] = False,
) -> None:
    """Write a markdown report with tables and PNG plots; several runs are compared side by side."""
    from karma.eval import RunDir, finalize, write_report

    if task_cli.report_task_runs(list(run_dirs), out, recompute):
        return
    for run_dir in run_dirs:
        run = RunDir(run_dir)
        if not run.exists():
            raise InputError(f"{run_dir} is not a karma run directory (no config.json)")
        if recompute or not run.results_path.exists():
            finalize(run)
    path = write_report(list(run_dirs), out)
    typer.echo(str(path))
