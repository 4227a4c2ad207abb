"""The ``--task`` side of ``karma eval``, ``karma data validate`` and ``karma report``: parse and delegate
to ``karma.tasks`` (Karma-MV itself keeps its own code path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from karma.cli.options import backend_options, key_values


def _task_help() -> str:
    from karma.tasks import DEFAULT_TASK, TASKS

    names = [f"{n} (default)" if n == DEFAULT_TASK else n for n in TASKS.names()]
    return f"Registered task: {', '.join(names)}; `karma tasks list` describes them, docs/tasks.md."


TASK_HELP = _task_help()
ARMS_HELP = "Task arms to run, comma-separated (default: all of the task's arms, e.g. image,text_only)."
TASK_OPT_HELP = (
    "An option of the task itself, KEY=VALUE (repeatable), checked against the options the task takes "
    "(`karma tasks show NAME`; an unknown one is refused), e.g. -T need_images=false."
)

_RUN = {"data", "out", "lenient", "task", "progress"}
_MODEL = {"backend", "backend_opt", "model", "max_tokens", "temperature", "seed", "limit", "max_error_rate",
          "allow_backend_errors"}  # fmt: skip
_MCQ = {"task_arms", "task_opt", "batch_size", "concurrency", "bootstrap_resamples", "report_too", "no_cache",
        "cache"}  # fmt: skip
HONOURED: dict[str, frozenset[str]] = {
    "mcq": frozenset(_RUN | _MODEL | _MCQ),
    "open": frozenset(_RUN | _MODEL | {"task_opt"}),
    "analysis": frozenset(_RUN | {"bootstrap_resamples"}),
}
"""The ``karma eval`` parameters a task run of each kind honours; any other one given is refused."""
ONLY_VALUE = {"answer_mode": "generate", "executor": "local"}
"""Parameters a task run accepts only at this value (the one it implements)."""


def is_other_task(task: str | None) -> bool:
    """True when ``task`` names a task other than Karma-MV (which keeps karma eval's own path; its
    ``-T`` options and their flag aliases are read by :func:`karma_mv_options`)."""
    from karma.tasks import DEFAULT_TASK, TASKS

    if task is not None:
        TASKS.entry(task)  # unknown name: InputError listing the registered ones
    if task is not None and task != DEFAULT_TASK:
        return True
    given = _context_task_opt()
    if given:  # an unknown key or bad value is refused here, by every command on Karma-MV's path
        task_options(DEFAULT_TASK, given)
    return False


def _context_task_opt() -> list[str]:
    """The ``task_opt`` items of the running command ([] outside a command or without the option)."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover
        from click import get_current_context  # type: ignore[no-redef]

    ctx = get_current_context(silent=True)
    return list((ctx.params.get("task_opt") if ctx is not None else None) or [])


def karma_mv_options(flags: dict[str, Any], task_opt: list[str] | None) -> Any:
    """Karma-MV's options (``KarmaMvOptions``) from ``-T KEY=VALUE`` items and the eval flags that are
    their aliases (``flags``: option name -> the flag's value; only the flags given on the command
    line count, a flag left at its default is no setting).

    An unknown ``-T`` key, a bad value, or one option given both ways with different values is an
    InputError (exit 2, one line) before any model loads and before the run folder exists.
    """
    from pathlib import PurePath

    from karma.tasks.karma_mv.options import merge_spellings

    given = given_options()
    typed = {
        name: str(value) if isinstance(value, PurePath) else value
        for name, value in flags.items()
        if name in given
    }
    return merge_spellings(typed, key_values(task_opt or [], "--task-opt"))


def task_options(task: str, task_opt: list[str] | None) -> dict[str, object]:
    """``-T KEY=VALUE`` items checked against the options of ``task``: the options given, typed (as
    config.json records them). An unknown option or a bad value is an InputError (exit 2) naming it."""
    from karma.tasks import resolve_options

    given = key_values(task_opt or [], "--task-opt")
    return resolve_options(task, given).model_dump(mode="json", exclude_unset=True)


def given_options() -> dict[str, str]:
    """The parameters of the running command given on the command line (or in the environment):
    parameter name -> the option's flag. Defaults are not given."""
    try:
        from typer._click.core import ParameterSource
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover
        from click import get_current_context  # type: ignore[no-redef]
        from click.core import ParameterSource  # type: ignore[no-redef]

    ctx = get_current_context()
    given = {}
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if param.name and source not in (None, ParameterSource.DEFAULT):
            flags = [*param.opts, *getattr(param, "secondary_opts", [])]
            given[param.name] = next(
                (f for f in flags if f.startswith("--")), flags[0] if flags else param.name
            )
    return given


def refuse_unhonoured(task: str, kind: str, given: dict[str, str], values: dict[str, object]) -> None:
    """InputError (exit 2, before any work) naming every given option a ``kind`` task run cannot honour."""
    from karma.core.errors import InputError

    honoured = HONOURED[kind]
    refused = [
        flag
        for name, flag in given.items()
        if name not in honoured and not (name in ONLY_VALUE and values.get(name) == ONLY_VALUE[name])
    ]
    if refused:
        takes = sorted(given_flag(n) for n in honoured)
        raise InputError(
            f"{', '.join(refused)}: karma eval --task {task} cannot honour "
            f"{'this option' if len(refused) == 1 else 'these options'} (refused rather than ignored); "
            f"it takes {', '.join(takes)}"
        )


def given_flag(name: str) -> str:
    """The command-line flag of an eval parameter name (``task_arms`` -> ``--arms``)."""
    special = {"task_arms": "--arms", "report_too": "--report", "progress": "--progress/--no-progress"}
    return special.get(name, "--" + name.replace("_", "-"))


def eval_task(task: str, *, given: dict[str, str], data: Path, out: Path, **values: Any) -> None:
    """``karma eval --task NAME`` for a task other than Karma-MV: refuse what the task cannot honour,
    then run it (``values``: the eval command's parameters by name)."""
    from karma.tasks import TASKS

    kind = TASKS.load(task).kind
    refuse_unhonoured(task, kind, given, values)
    if kind == "analysis":
        _eval_analysis(task, data, out, values)
    elif kind == "open":
        _eval_open(task, data, out, values)
    else:
        _eval_mcq(task, data, out, values)


def _backend_options(values: dict[str, Any]) -> dict[str, object]:
    options = backend_options(values.get("backend_opt") or [], "--backend-opt")
    if values.get("model"):
        from pipelines.model_registry import model_backend_options

        options = model_backend_options(values["model"], values["backend"], options)
    return options


def _eval_mcq(task: str, data: Path, out: Path, values: dict[str, Any]) -> None:
    from karma.tasks.runner import TaskRunConfig, run_task

    task_opts = task_options(task, values.get("task_opt"))  # refused before the run folder exists
    config = TaskRunConfig(
        task=task, data=str(data), out=str(out), lenient=values["lenient"], arms=values.get("arms") or [],
        backend=values["backend"], backend_options=_backend_options(values), model=values.get("model"),
        task_options=task_opts,
        max_tokens=values["max_tokens"], temperature=values["temperature"], seed=values["seed"],
        limit=values["limit"], batch_size=values.get("batch_size"), concurrency=values.get("concurrency"),
        use_cache=not values.get("no_cache"), cache_path=str(values["cache"]) if values.get("cache") else None,
        max_error_rate=values["max_error_rate"], allow_backend_errors=values["allow_backend_errors"],
        bootstrap_resamples=values["bootstrap_resamples"],
    )  # fmt: skip
    summary = run_task(config, progress=values["progress"])
    typer.echo(
        f"{summary.run_dir}: {summary.answered} answered, {summary.already_done} already done "
        f"({summary.elapsed_s:.1f} s)"
    )
    if summary.data_problems:
        typer.echo(
            f"  data: {summary.data_problems} problem rows left out (see `karma data validate --task {task}`)",
            err=True,
        )
    _print_results(Path(summary.run_dir))
    if values.get("report_too"):
        from karma.tasks.report import write_task_report

        typer.echo(f"report: {write_task_report([Path(summary.run_dir)])}")
    _refuse_backend_errors(Path(summary.run_dir), summary.backend_errors, values["allow_backend_errors"])


def _pct(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def _print_results(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    for arm, stats in results["arms"].items():
        s = stats["overall"]
        typer.echo(
            f"  {arm}: accuracy {_pct(s['accuracy'])} ({s['correct']}/{s['n']} answered), chance "
            f"{_pct(s['chance'])}, parse failures {_pct(s['parse_failure_rate'], 1)}, "
            f"backend errors {s['backend_errors']}"
        )
    for block in results.get("paired", {}).values():
        p = block["overall"]
        typer.echo(
            f"  {block['first']} - {block['second']}: {100 * p['delta']:+.2f} points on {p['n_pairs']} items "
            f"both answered, McNemar p={p['mcnemar_p']:.3g}"
        )


def _refuse_backend_errors(run_dir: Path, errors: int, allow: bool) -> None:
    """Exit 1 when items of the run still hold a backend error, unless allowed."""
    from karma.core.errors import RunError

    if errors and not allow:
        raise RunError(
            f"{errors} request(s) of {run_dir} failed in the backend (no answer came back; left out of "
            "accuracy and pairs); rerun the same command to retry them, or pass --allow-backend-errors"
        )


def _eval_open(task: str, data: Path, out: Path, values: dict[str, Any]) -> None:
    """HarmonySet-OE: open answers into RUN/samples.jsonl, judged by a separate pass."""
    from karma.tasks import get_task
    from karma.tasks.harmonyset_oe import oe_backend_errors, run_oe
    from pipelines.backends.preflight import open_backend

    instance = get_task(task, **task_options(task, values.get("task_opt")))
    _check_range("--max-error-rate", values["max_error_rate"], 0.0, 1.0)
    _check_range("--temperature", values["temperature"], 0.0, float("inf"))
    options = _backend_options(values)
    instance.pairs(data, lenient=values["lenient"])  # bad data: refused before a model loads
    model = open_backend(values["backend"], options)  # checked before the run folder exists
    try:
        answered = run_oe(
            data, out, model, max_tokens=max(values["max_tokens"], 64), limit=values["limit"],
            lenient=values["lenient"], task=instance, temperature=values["temperature"], seed=values["seed"],
            max_error_rate=values["max_error_rate"],
        )  # fmt: skip
    finally:
        model.close()
    typer.echo(f"{out}: {answered} open answers written; judge them with `python -m karma.tasks.judge {out}`")
    _refuse_backend_errors(out, oe_backend_errors(out), values["allow_backend_errors"])


def _check_range(flag: str, value: float, low: float, high: float) -> None:
    from karma.core.errors import InputError

    if not low <= value <= high or value != value:
        raise InputError(f"{flag} must be between {low:g} and {high:g}, got {value}")


def _eval_analysis(task: str, data: Path, out: Path, values: dict[str, Any]) -> None:
    """AImoclips (an analysis, no model): the deviation analyses and, with the WAVs, karma's VA
    agreement, into RUN/results.json beside config.json (karma.tasks.analysis_run)."""
    from karma.tasks.analysis_run import run_analysis

    result = run_analysis(task, data, out, lenient=values["lenient"], resamples=values["bootstrap_resamples"])
    for model_name, stats in result["by_model"].items():
        v, a = stats["valence"]["signed_deviation"], stats["arousal"]["signed_deviation"]
        typer.echo(
            f"  {model_name}: valence deviation {v['estimate']:+.2f} [{v['ci_low']:+.2f}, {v['ci_high']:+.2f}], "
            f"arousal {a['estimate']:+.2f}, quadrant hit {100 * stats['quadrant_hit']['estimate']:.1f}%"
        )
    agreement = result["va_agreement"]
    if agreement["computed"]:
        typer.echo(
            f"  karma's VA estimate vs listeners ({agreement['n_clips']} clips): valence CCC "
            f"{agreement['valence']['ccc']:.3f}, arousal CCC {agreement['arousal']['ccc']:.3f}"
        )
    else:
        typer.echo(f"  VA agreement not computed: {agreement['reason']}")
    missing = result["data"]["missing_cells"]
    typer.echo(f"{out / 'results.json'}: {result['data']['clips']} clips, {len(missing)} grid cells missing")


def validate_task(task: str, path: Path, lenient: bool, task_opt: list[str] | None = None) -> None:
    """``karma data validate --task NAME PATH``: every problem as file, row, field; exit 2 with one
    ``error:`` line naming the file if any (strict) or if no row is valid (lenient)."""
    from karma.core.errors import InputError
    from karma.tasks import get_task

    instance = get_task(task, **task_options(task, task_opt))
    data = instance.load(path, lenient=True)
    for note in getattr(data, "notes", []):
        typer.echo(f"note {note}")
    for problem in data.problems:
        typer.echo(f"error {problem}")
    valid = len(data.items) if instance.kind == "mcq" else data.rows_seen - len(data.problems)
    typer.echo(
        f"{task}: files {', '.join(data.files) or '-'} | rows {data.rows_seen} | valid items {valid} | "
        f"problems {len(data.problems)}"
    )
    where = ", ".join(data.files) or str(path)
    if data.problems and not lenient:
        typer.echo("invalid (strict); rerun with --lenient to keep every valid row")
        raise InputError(f"{where}: {len(data.problems)} problem(s), first: {data.problems[0]}")
    if valid == 0:
        raise InputError(
            f"{where}: no valid row" + (f", first problem: {data.problems[0]}" if data.problems else "")
        )
    typer.echo("valid" if not data.problems else "valid rows kept (lenient)")


def _recompute(run_dir: Path) -> None:
    """results.json again: from the samples (answered tasks) or from the data (analysis runs)."""
    from karma.tasks.analysis_run import is_analysis_run, run_analysis
    from karma.tasks.runner import finalize_task

    config = json.loads((run_dir / "config.json").read_text())
    if is_analysis_run(config):
        settings = config["config"]
        run_analysis(settings["task"], settings["data"], run_dir, lenient=settings["lenient"],
                     resamples=settings["bootstrap_resamples"])  # fmt: skip
    else:
        finalize_task(run_dir)


def report_task_runs(run_dirs: list[Path], out: Path | None, recompute: bool) -> bool:
    """``karma report`` for task runs, alone or beside Karma-MV runs (side by side); False (nothing
    done) when none of ``run_dirs`` is a task run."""
    from karma.core.errors import InputError
    from karma.tasks.report import write_task_report
    from karma.tasks.runner import is_task_run

    flags = [is_task_run(d) for d in run_dirs]
    if not any(flags):
        return False
    for run_dir, is_task in zip(run_dirs, flags, strict=True):
        if not is_task:  # a Karma-MV run beside task runs: the side-by-side report
            from karma.eval import RunDir, finalize

            run = RunDir(run_dir)
            if not run.exists():
                raise InputError(f"{run_dir} is not a karma run directory (no config.json)")
            if recompute or not run.results_path.exists():
                finalize(run)
            continue
        kind = json.loads((run_dir / "config.json").read_text()).get("task", {}).get("kind")
        if kind != "open" and (recompute or not (run_dir / "results.json").exists()):
            _recompute(run_dir)
    if all(flags):
        typer.echo(str(write_task_report(run_dirs, out)))
    else:
        from karma.eval.side_by_side import write_side_by_side

        typer.echo(str(write_side_by_side(run_dirs, out)))
    return True
