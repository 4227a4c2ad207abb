"""``karma eval`` and ``karma report``: parse options and delegate to ``karma.eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from karma.cli import tasks as task_cli
from karma.cli.options import (
    BACKEND_OPT_HELP,
    DEVICE_HELP,
    MODEL_HELP,
    backend_help,
    backend_options,
    embed_device_option,
    retriever_help,
)
from pipelines.assembly import GENERATION_DEFAULTS as GEN


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def eval_command(
    data: Annotated[
        Path, typer.Option("--data", help="Folder with <video>_qa.json and <video>_causal_features.json.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Run directory; rerunning the same command resumes it.")],
    lenient: Annotated[
        bool, typer.Option("--lenient", help="Keep every valid question of files with problems (listed).")
    ] = False,
    pipeline: Annotated[str, typer.Option(help="llm (features as text) or vlm (clips as video).")] = "llm",
    backend: Annotated[str, typer.Option(help=backend_help())] = "llamacpp",
    backend_opt: Annotated[list[str] | None, typer.Option("--backend-opt", help=BACKEND_OPT_HELP)] = None,
    model: Annotated[str | None, typer.Option("--model", help=MODEL_HELP)] = None,
    ckg: Annotated[str, typer.Option(help="Graph block: on, off, or both (the paired ablation).")] = "both",
    retriever: Annotated[str, typer.Option(help=retriever_help())] = "hybrid",
    device: Annotated[
        str | None, typer.Option("--device", help=DEVICE_HELP, callback=embed_device_option)
    ] = None,
    k: Annotated[int, typer.Option(help="Facts retrieved per question.")] = GEN.k,
    budget_tokens: Annotated[int, typer.Option(help="Token budget of the graph block.")] = GEN.budget_tokens,
    types: Annotated[
        list[str] | None,
        typer.Option("--types", help="Question types to answer (comma-separated or repeated)."),
    ] = None,
    videos: Annotated[
        list[str] | None, typer.Option("--videos", help="Video ids to answer (comma-separated or repeated).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Answer only the first N selected questions.")] = None,
    folds: Annotated[
        int,
        typer.Option(help="k of the k-fold split by video: each video's graph is built without its fold."),
    ] = 5,
    whole_corpus_graph: Annotated[
        bool,
        typer.Option(
            "--whole-corpus-graph", help="One graph from every video (the published, leaky setting)."
        ),
    ] = False,
    graph: Annotated[
        Path | None, typer.Option("--graph", help="Use this prebuilt graph (folder or file) for every video.")
    ] = None,
    fold_seed: Annotated[int, typer.Option(help="Seed of the fold split.")] = 0,
    clips: Annotated[
        Path | None, typer.Option(help="VLM: folder with one folder of scene_NNN.mp4 per video.")
    ] = None,
    template: Annotated[str | None, typer.Option(help="Prompt template name or YAML path.")] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Output budget (same in both arms; default 32, --preset paper 16).")
    ] = None,
    temperature: Annotated[
        float, typer.Option(help="Decoding temperature; only 0 is cached.")
    ] = GEN.temperature,
    seed: Annotated[int, typer.Option(help="Decoding seed.")] = GEN.seed,
    constrain_choices: Annotated[
        bool, typer.Option("--constrain-choices", help="Constrain decoding to the letters a-d (both arms).")
    ] = False,
    answer_mode: Annotated[
        str,
        typer.Option(
            help="generate (parse the reply), letter (score each letter) or loglik (score each option's "
            "text, acc and acc_norm as lm-evaluation-harness); same in both arms."
        ),
    ] = "generate",
    score_pick: Annotated[
        str,
        typer.Option(
            help="Scored modes: which pick answers: acc_norm (log-likelihood per character), acc (sum) or "
            "mutual_info (minus the option's log-likelihood without the question, lm-eval's "
            "acc_mutual_info, scored only when chosen); acc and acc_norm are always recorded and reported."
        ),
    ] = GEN.score_pick,
    fact_links: Annotated[
        str,
        typer.Option(
            help="none (plain fact lines) or options (each fact line names the option it speaks of, "
            "as the graph reader reads the options with the embedding model); graph-on arm only."
        ),
    ] = GEN.fact_links,
    concept_facts: Annotated[
        bool,
        typer.Option(
            "--concept-facts",
            help="Show concept links ('tempo decreases is a tempo') as facts; by default they are skipped "
            "and the next-ranked facts take their places.",
        ),
    ] = GEN.concept_facts,
    log_prompts: Annotated[
        bool,
        typer.Option("--log-prompts", help="Write every request's full prompt to RUN_DIR/prompts.jsonl."),
    ] = False,
    batch_size: Annotated[
        int | None, typer.Option(help="Requests per backend call (default: 16 batching backends, else 1).")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(help="Backend calls in flight (default: the backend's max_concurrency or 1)."),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Response cache file (default: karma's cache dir).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
    ] = False,
    bootstrap_resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the intervals.")] = 2000,
    report_too: Annotated[
        bool, typer.Option("--report", help="Also write RUN_DIR/report/report.md with plots.")
    ] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar.")] = True,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Settings bundle: paper (4 fps, <=448x448 px, bf16 on cuda, 16 tokens; docs/backends.md)."
        ),
    ] = None,
    max_error_rate: Annotated[
        float,
        typer.Option(help="Stop when more than this share of requests fail in the backend (1 = never)."),
    ] = 0.2,
    allow_empty_graph: Annotated[
        bool, typer.Option("--allow-empty-graph", help="Run the graph-on arm even on a graph without edges.")
    ] = False,
    audio_parts: Annotated[
        str, typer.Option(help="VLM: audio beside each clip: wav (derived), clip (the mp4 itself) or none.")
    ] = "wav",
    allow_backend_errors: Annotated[
        bool,
        typer.Option(
            "--allow-backend-errors",
            help="Exit 0 although some requests failed in the backend (they count as wrong); default exit 1.",
        ),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="I/N: answer only the videos of shard I of N (from 0); join the N runs with `karma merge eval`.",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option("--executor", help="local (this process) or ray (shards as actors on a Ray cluster)."),
    ] = "local",
    shards: Annotated[
        int, typer.Option("--shards", min=1, help="Ray executor: number of shards/actors.")
    ] = 2,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray executor: cluster address (default $RAY_ADDRESS or auto)."),
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help=task_cli.TASK_HELP)] = None,
    task_arms: Annotated[list[str] | None, typer.Option("--arms", help=task_cli.ARMS_HELP)] = None,
    task_opt: Annotated[
        list[str] | None, typer.Option("--task-opt", "-T", help=task_cli.TASK_OPT_HELP)
    ] = None,
) -> None:
    """Answer questions with the graph block on and/or off, resumably; write config, samples and results.

    RUN_DIR/config.json records the resolved settings and the content hashes of data, graphs, prompt template and model; RUN_DIR/samples.jsonl gets one line per (question, arm) as soon as it is answered; RUN_DIR/results.json holds accuracy per type and arm with video-clustered bootstrap intervals, parse-failure rates, the paired graph effect with an exact McNemar test, and the no-model baselines.

    Rerunning the same command skips finished records (see docs/evaluation.md).
    """
    if task_cli.is_other_task(task):
        # Every option given is either honoured by the task run or refused (exit 2) before any work.
        task_cli.eval_task(
            task, given=task_cli.given_options(), data=data, out=out, lenient=lenient, backend=backend,
            backend_opt=backend_opt, model=model, arms=_split(task_arms), task_opt=task_opt,
            max_tokens=32 if max_tokens is None else max_tokens, temperature=temperature, seed=seed, limit=limit,
            bootstrap_resamples=bootstrap_resamples, batch_size=batch_size, concurrency=concurrency,
            max_error_rate=max_error_rate, allow_backend_errors=allow_backend_errors, report_too=report_too,
            progress=progress, answer_mode=answer_mode, executor=executor,
        )  # fmt: skip
        return
    from karma.core.shard import ShardSpec
    from karma.eval import EvalConfig, RunMismatchError, arms_from_ckg, run_evaluation, write_report

    if executor not in ("local", "ray"):
        raise typer.BadParameter(f"--executor must be local or ray, got {executor!r}")

    if whole_corpus_graph and graph is not None:
        raise typer.BadParameter("--whole-corpus-graph and --graph exclude each other")
    mode = "given" if graph is not None else "whole_corpus" if whole_corpus_graph else "folds"
    try:
        config = EvalConfig(
            data=str(data),
            out=str(out),
            lenient=lenient,
            pipeline=pipeline,  # type: ignore[arg-type]
            clips=str(clips) if clips else None,
            backend=backend,
            backend_options=backend_options(backend_opt or [], "--backend-opt"),
            model=model,
            arms=arms_from_ckg(ckg),
            retriever=retriever,
            embed_device=device,
            k=k,
            budget_tokens=budget_tokens,
            template=template,
            **({"max_tokens": max_tokens} if max_tokens is not None else {}),
            temperature=temperature,
            seed=seed,
            constrain_choices=constrain_choices,
            answer_mode=answer_mode,  # type: ignore[arg-type]
            fact_links=fact_links,  # type: ignore[arg-type]
            concept_facts=concept_facts,
            score_pick=score_pick,  # type: ignore[arg-type]
            log_prompts=log_prompts,
            graph_mode=mode,  # type: ignore[arg-type]
            folds=folds,
            fold_seed=fold_seed,
            graph_path=str(graph) if graph else None,
            types=_split(types),
            videos=_split(videos),
            limit=limit,
            bootstrap_resamples=bootstrap_resamples,
            batch_size=batch_size,
            concurrency=concurrency,
            use_cache=not no_cache,
            cache_path=str(cache) if cache else None,
            shard=str(ShardSpec.parse(shard)) if shard else None,
            preset=preset,
            max_error_rate=max_error_rate,
            allow_empty_graph=allow_empty_graph,
            audio_parts=audio_parts,  # type: ignore[arg-type]
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if executor == "ray":
        from karma.distributed.ray_runner import run_eval_on_ray

        parts, _ = run_eval_on_ray(config, shards, address=ray_address)
        answered = sum(p["answered"] for p in parts)
        typer.echo(f"{config.out}: {answered} answered in {shards} Ray shards, merged")
        _print_summary(Path(config.out))
        if report_too:
            typer.echo(f"report: {write_report([config.out])}")
        _refuse_backend_errors(Path(config.out), allow_backend_errors)
        return
    try:
        summary = run_evaluation(config, progress=progress)
    except RunMismatchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(
        f"{summary.run_dir}: {summary.answered} answered ({summary.cache_hits} from cache), "
        f"{summary.already_done} already done, {summary.questions_per_s:.2f} q/s"
    )
    if summary.data_problems:
        typer.echo(f"  data: {summary.data_problems} problems skipped (see `karma data validate`)", err=True)
    if summary.removed_for_features:
        typer.echo(
            f"  data: {summary.removed_for_features} questions left the denominator (feature problems)",
            err=True,
        )
    _print_summary(Path(summary.run_dir))
    if report_too:
        typer.echo(f"report: {write_report([summary.run_dir])}")
    _refuse_backend_errors(Path(summary.run_dir), allow_backend_errors)


def _refuse_backend_errors(run_dir: Path, allow: bool) -> None:
    """Exit 1 when (question, arm) pairs of the run still hold a backend error, unless allowed."""
    from karma.core.errors import RunError
    from karma.eval.runner import backend_error_count

    errors = backend_error_count(json.loads((run_dir / "results.json").read_text()))
    if errors and not allow:
        raise RunError(
            f"{errors} request(s) of {run_dir} failed in the backend (no answer came back; counted as "
            "wrong); rerun the same command to retry them, or pass --allow-backend-errors"
        )


def _print_summary(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    for arm, stats in results.get("arms", {}).items():
        s = stats["overall"]
        typer.echo(
            f"  graph {arm}: accuracy {100 * s['accuracy']:.1f}% [{100 * s['ci_low']:.1f}, {100 * s['ci_high']:.1f}] "
            f"n={s['n']}, parse failures {100 * s['parse_failure_rate']:.1f}%, "
            f"backend errors {s.get('backend_errors', 0)}"
        )
    paired = results.get("paired", {}).get("overall")
    if paired:
        typer.echo(
            f"  graph effect: {100 * paired['delta']:+.1f} points [{100 * paired['ci_low']:+.1f}, "
            f"{100 * paired['ci_high']:+.1f}], McNemar p={paired['mcnemar_p']:.3g}"
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
            # Printed plainly: a long path inside typer's error box would be cut off.
            typer.echo(f"error: {run_dir} is not a karma run directory (no config.json)", err=True)
            raise typer.Exit(2)
        if recompute or not run.results_path.exists():
            finalize(run)
    path = write_report(list(run_dirs), out)
    typer.echo(str(path))
