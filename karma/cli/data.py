"""``karma data``: validate and describe Karma-MV files."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Literal

import typer

from karma.cli.eval_options import TaskOpt  # the registered task, declared once (eval's --task)
from karma.cli.options import DEFAULT_FORMAT, AsJsonOpt, FormatOpt, LenientOpt, TaskOptOpt
from karma.core.errors import InputError

app = typer.Typer(no_args_is_help=True)


@app.command("validate")
def validate(
    path: Path = typer.Argument(..., help="A *_qa.json / *_causal_features.json file, or a folder of them."),
    lenient: LenientOpt = False,
    show_inferred: bool = typer.Option(
        False, "--show-inferred", help="Also list what the loader inferred from older layouts."
    ),
    task: TaskOpt = None,
    task_opt: TaskOptOpt = None,
) -> None:
    """Check Karma-MV files and print every problem as file, transition, question, field, reason.

    Strict by default: exits 2 if any error is found (docs/reliability.md). Cross-file checks: every transition's scenes
    must be in the video's feature file. Inferred normalizations (string scenes, positional types,
    concatenated JSON values) are counted, and listed with --show-inferred.
    """
    from karma.cli import tasks as task_cli

    if task_cli.is_other_task(task):
        task_cli.validate_task(task, path, lenient, task_opt)  # type: ignore[arg-type]
        return
    from karma.cli.console import stdout_console
    from karma.data import load_dataset

    console = stdout_console()
    try:
        dataset = load_dataset(path, lenient=True)
    except FileNotFoundError as exc:
        raise InputError(f"{exc}") from exc
    counts = Counter(p.severity for p in dataset.problems)
    for problem in dataset.problems:
        if problem.severity == "inferred" and not show_inferred:
            continue
        colour = {"error": "red", "warning": "yellow", "inferred": "cyan"}[problem.severity]
        console.print(
            f"[{colour}]{problem.severity}[/{colour}] {problem.location()}: {problem.reason}", soft_wrap=True
        )
    kept, seen = dataset.questions_kept, dataset.questions_seen
    console.print(
        f"files: {len(dataset.qa_files)} QA, {len(dataset.feature_files)} features | "
        f"questions kept: {kept}, rejected: {seen - kept} "
        f"({dataset.questions_removed_for_features} for feature problems) | "
        f"errors: {counts['error']}, warnings: {counts['warning']}, inferred: {counts['inferred']}"
    )
    if not dataset.qa_files and not dataset.feature_files:
        raise InputError(f"{path}: no *_qa.json or *_causal_features.json files found")
    if lenient:
        if kept == 0 and (seen > 0 or counts["error"]):
            raise InputError(f"{path}: no valid question (see the errors above)")
        return
    if counts["error"]:
        console.print("[red]invalid[/red] (strict); rerun with --lenient to keep every valid question")
        raise InputError(f"{path}: {counts['error']} data error(s), first: {_first_error(dataset)}")
    console.print("[green]valid[/green]")


def _first_error(dataset) -> str:  # type: ignore[no-untyped-def]
    first = next(p for p in dataset.problems if p.severity == "error")
    return f"{first.location()}: {first.reason}"


@app.command("stats")
def stats(
    path: Path = typer.Argument(..., help="A QA file or a folder of Karma-MV files."),
    lenient: LenientOpt = False,
    fmt: FormatOpt = DEFAULT_FORMAT,
    as_json: AsJsonOpt = False,
) -> None:
    """Videos, transitions, questions per type, answer letters, and answer-bias baselines.

    Strict by default, as every data command: a data error exits 2; with --lenient the statistics cover
    the valid questions and a warning counts what was left out. The baselines (always the most frequent letter, always the longest option, always the option
    sharing most words with the question) show how much can be scored without looking at anything.
    """
    from rich.table import Table

    from karma.cli.console import stdout_console
    from karma.data import DataValidationError, load_dataset
    from karma.data.stats import dataset_stats

    console = stdout_console()
    try:
        dataset = load_dataset(path, lenient=lenient)
    except (FileNotFoundError, DataValidationError) as exc:
        raise InputError(f"{exc}") from exc
    if not dataset.qa_files:
        raise InputError(f"{path}: no *_qa.json files found")
    if dataset.questions_kept == 0 and dataset.errors:
        raise InputError(
            f"{path}: no valid question; {len(dataset.errors)} error(s), first: {_first_error(dataset)}"
        )
    if dataset.errors:  # lenient: the statistics cover what was valid, and say what was left out
        skipped = sorted({p.file for p in dataset.errors if p.file})
        print(
            f"warning: {len(dataset.errors)} data error(s) left out (see `karma data validate`), in "
            + ", ".join(skipped[:5])
            + (f" and {len(skipped) - 5} more files" if len(skipped) > 5 else ""),
            file=sys.stderr,
        )
    result = dataset_stats(dataset)
    if as_json or fmt == "json":
        typer.echo(result.model_dump_json(indent=2))
        return
    rejected = dataset.questions_seen - dataset.questions_kept
    console.print(
        f"[bold]{path}[/bold]: {result.videos} videos, {result.transitions} transitions, "
        f"{result.questions} questions" + (f" ({rejected} invalid skipped)" if rejected else "")
    )
    types = Table(title="Questions per type")
    types.add_column("type")
    types.add_column("n", justify="right")
    for name, n in result.questions_per_type.items():
        types.add_row(name, str(n))
    console.print(types)
    letters = Table(title="Answer letters")
    for letter in result.answer_letters:
        letters.add_column(letter, justify="right")
    total = max(result.questions, 1)
    letters.add_row(*[f"{n} ({n / total:.0%})" for n in result.answer_letters.values()])
    console.print(letters)
    table = Table(title="Answer-bias baselines (accuracy without looking at anything)")
    table.add_column("questions", no_wrap=True)
    table.add_column("n", justify="right")
    names = list(result.baselines)
    for name in names:
        table.add_column(name.replace("_", " "), justify="right")
    rows = {"all": result.baselines, **result.baselines_per_type}
    for label, values in rows.items():
        n = result.questions if label == "all" else result.questions_per_type[label]
        table.add_row(label, str(n), *[f"{values[name]:.1%}" for name in names])
    console.print(table)


@app.command("export")
def export(
    path: Path = typer.Argument(..., help="A QA file or a folder of Karma-MV files."),
    out: Path = typer.Option(..., "--out", help="File to write (e.g. karma_mv.parquet or karma_mv.jsonl)."),
    fmt: Literal["parquet", "jsonl"] = typer.Option("parquet", "--format", help="parquet or jsonl."),
    lenient: LenientOpt = False,
) -> None:
    """One flat row per question (video, transition and question ids, type, question, options,
    answer, explanation, scene names and times) for pandas or `datasets.load_dataset`.

    Strict by default, as every data command: a data error exits 2 before anything is written; with
    --lenient the invalid questions are left out and counted.

    The rows are the questions karma's loader keeps, each once; columns: docs/real-data.md.
    """
    from karma.data import load_dataset
    from karma.data.export import export_questions

    dataset = load_dataset(path, lenient=lenient, features_required=False)
    n = export_questions(dataset, out, fmt)  # type: ignore[arg-type]
    skipped = dataset.questions_seen - dataset.questions_kept
    typer.echo(
        f"{n} questions -> {out}"
        + (f" ({skipped} invalid skipped; see karma data validate)" if skipped else "")
    )
