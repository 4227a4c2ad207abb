"""The ``--task`` side of ``karma eval``, ``karma data validate`` and ``karma report``: parse and delegate
to ``karma.tasks`` (Karma-MV itself keeps its own code path)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from karma.cli.options import backend_options

TASK_HELP = "Registered task (karma-mv, wildscore, harmonyset-mc, aimoclips); see docs/tasks.md."
ARMS_HELP = "Task arms to run, comma-separated (default: all of the task's arms, e.g. image,text_only)."
TASK_OPT_HELP = "Task option KEY=VALUE (repeatable), e.g. --task-opt image_as=video."


def is_other_task(task: str | None) -> bool:
    """True when ``task`` names a task other than Karma-MV (which keeps karma eval's own path)."""
    from karma.tasks import DEFAULT_TASK, TASKS

    if task is None:
        return False
    TASKS.entry(task)  # unknown name: InputError listing the registered ones
    return task != DEFAULT_TASK


def eval_task(
    task: str,
    *,
    data: Path,
    out: Path,
    lenient: bool,
    backend: str,
    backend_opt: list[str] | None,
    arms: list[str] | None,
    task_opt: list[str] | None,
    max_tokens: int,
    limit: int | None,
    bootstrap_resamples: int,
    batch_size: int | None,
    progress: bool,
) -> None:
    """``karma eval --task NAME`` for a task other than Karma-MV."""
    from karma.tasks import TASKS
    from karma.tasks.runner import TaskRunConfig, run_task

    kind = TASKS.load(task).kind
    if kind != "mcq":
        _eval_other_kind(
            task, kind, data, out, lenient, backend, backend_opt, max_tokens, limit, bootstrap_resamples
        )
        return

    config = TaskRunConfig(
        task=task,
        data=str(data),
        out=str(out),
        lenient=lenient,
        arms=arms or [],
        backend=backend,
        backend_options=backend_options(backend_opt or [], "--backend-opt"),
        task_options=backend_options(task_opt or [], "--task-opt"),
        max_tokens=max_tokens,
        limit=limit,
        batch_size=batch_size or 1,
        bootstrap_resamples=bootstrap_resamples,
    )
    summary = run_task(config, progress=progress)
    typer.echo(
        f"{summary.run_dir}: {summary.answered} answered, {summary.already_done} already done "
        f"({summary.elapsed_s:.1f} s)"
    )
    if summary.data_problems:
        typer.echo(
            f"  data: {summary.data_problems} problem rows left out (see `karma data validate --task {task}`)",
            err=True,
        )
    results = json.loads((Path(summary.run_dir) / "results.json").read_text())
    for arm, stats in results["arms"].items():
        s = stats["overall"]
        typer.echo(
            f"  {arm}: accuracy {100 * s['accuracy']:.2f}% ({s['correct']}/{s['n']}), chance {100 * s['chance']:.2f}%, "
            f"parse failures {100 * s['parse_failure_rate']:.1f}%"
        )
    for block in results.get("paired", {}).values():
        p = block["overall"]
        typer.echo(
            f"  {block['first']} - {block['second']}: {100 * p['delta']:+.2f} points, McNemar p={p['mcnemar_p']:.3g}"
        )


def _eval_other_kind(
    task: str, kind: str, data: Path, out: Path, lenient: bool, backend: str, backend_opt: list[str] | None,
    max_tokens: int, limit: int | None, resamples: int,
) -> None:  # fmt: skip
    """HarmonySet-OE (open answers, judged separately) and AImoclips (an analysis, no model)."""
    if kind == "open":
        from karma.tasks.harmonyset_oe import run_oe
        from pipelines.backends import get_backend

        model = get_backend(backend, **backend_options(backend_opt or [], "--backend-opt"))
        try:
            answered = run_oe(data, out, model, max_tokens=max(max_tokens, 64), limit=limit, lenient=lenient)
        finally:
            model.close()
        typer.echo(
            f"{out}: {answered} open answers written; judge them with `python -m karma.tasks.judge {out}`"
        )
        return
    from karma.tasks.affect_analysis import deviation_analysis
    from karma.tasks.aimoclips import load_aimoclips

    result = deviation_analysis(load_aimoclips(data, lenient=lenient), resamples=resamples)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"task": task, **result}, indent=2, sort_keys=True) + "\n")
    for model_name, stats in result["by_model"].items():
        v, a = stats["valence"]["signed_deviation"], stats["arousal"]["signed_deviation"]
        typer.echo(
            f"  {model_name}: valence deviation {v['estimate']:+.2f} [{v['ci_low']:+.2f}, {v['ci_high']:+.2f}], "
            f"arousal {a['estimate']:+.2f}, quadrant hit {100 * stats['quadrant_hit']['estimate']:.1f}%"
        )
    missing = result["data"]["missing_cells"]
    typer.echo(f"{out / 'results.json'}: {result['data']['clips']} clips, {len(missing)} grid cells missing")


def validate_task(task: str, path: Path, lenient: bool, task_opt: list[str] | None = None) -> None:
    """``karma data validate --task NAME PATH``: every problem as file, row, field; exit 1 if any (strict)."""
    from karma.tasks import get_task

    instance = get_task(task, **backend_options(task_opt or [], "--task-opt"))
    data = instance.load(path, lenient=True)
    for problem in data.problems:
        typer.echo(f"error {problem}")
    typer.echo(
        f"{task}: files {', '.join(data.files) or '-'} | rows {data.rows_seen} | valid items {len(data.items)} | "
        f"problems {len(data.problems)}"
    )
    if data.problems and not (lenient and data.items):
        typer.echo(
            "invalid (strict); rerun with --lenient to keep every valid row"
            if not lenient
            else "no valid rows"
        )
        raise typer.Exit(1)
    typer.echo("valid" if not data.problems else "valid rows kept (lenient)")


def report_task_runs(run_dirs: list[Path], out: Path | None, recompute: bool) -> bool:
    """``karma report`` for task runs; False (nothing done) when none of ``run_dirs`` is a task run."""
    from karma.core.errors import InputError
    from karma.tasks.report import write_task_report
    from karma.tasks.runner import finalize_task, is_task_run

    flags = [is_task_run(d) for d in run_dirs]
    if not any(flags):
        return False
    if not all(flags):
        raise InputError("karma report: give either Karma-MV runs or task runs, not both in one report")
    for run_dir in run_dirs:
        if recompute or not (run_dir / "results.json").exists():
            finalize_task(run_dir)
    typer.echo(str(write_task_report(run_dirs, out)))
    return True
