"""``karma tasks list | show NAME``: the registered benchmark tasks and the options each one takes.

Only parsing and printing: everything shown comes from the registry (``karma.tasks.TASKS``) and the
task classes (``karma.tasks.task_card``), so a newly registered task appears here without CLI code.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from karma.cli.options import DEFAULT_FORMAT, AsJsonOpt, FormatOpt

app = typer.Typer(
    no_args_is_help=True,
    help=(
        "The registered benchmark tasks (`karma eval --task NAME`, `karma data validate --task NAME`): "
        "list them, or show one with its arms, metrics, data and the options it takes (-T KEY=VALUE). "
        "See docs/tasks.md."
    ),
)


@app.command("list")
def list_tasks(fmt: FormatOpt = DEFAULT_FORMAT, as_json: AsJsonOpt = False) -> None:
    """Every registered task: name, kind, arms and one line of help."""
    from karma.tasks import TASKS, task_card

    cards = [task_card(name) for name in TASKS.names()]
    if as_json or fmt == "json":
        typer.echo(json.dumps(cards, indent=2))
        return
    rows = [(c["task"], c["kind"], ", ".join(c["arms"]) or "-", c["help"]) for c in cards]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        typer.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3]
        )


@app.command("show")
def show_task(
    name: Annotated[str, typer.Argument(help="A registered task name (`karma tasks list`).")],
    fmt: FormatOpt = DEFAULT_FORMAT,
    as_json: AsJsonOpt = False,
) -> None:
    """One task: title, kind, arms, metrics, data, paper comparability and its options (-T KEY=VALUE).

    Each option is shown with its type, its default and what it does (the docstring of the field in
    the task's options model).
    """
    from karma.tasks import task_card

    card = task_card(name)
    if as_json or fmt == "json":
        typer.echo(json.dumps(card, indent=2))
        return
    arms = ", ".join(card["arms"]) or "none (an analysis: nothing is asked)"
    comparable = "yes" if card["paper_comparable"] else "no (karma's protocol differs; see docs/tasks.md)"
    typer.echo(f"{card['task']}{' (default)' if card['default'] else ''}: {card['title']}")
    typer.echo(f"  kind: {card['kind']}")
    typer.echo(f"  arms: {arms}")
    typer.echo(f"  metrics: {', '.join(card['metrics'])} (clustered by {card['cluster_unit']})")
    typer.echo(f"  data: {card['data_help']}")
    typer.echo(f"  paper-comparable: {comparable}")
    if not card["options"]:
        typer.echo("  options: none (any -T is refused)")
        return
    typer.echo("  options (-T KEY=VALUE):")
    for option in card["options"]:
        typer.echo(
            f"    {option['name']} ({option['type']}, default {_shown(option['default'])}"
            f"{', flag ' + option['flag'] if 'flag' in option else ''}): {option['help']}"
        )


def _shown(default: Any) -> str:
    """A default as a user would write it after ``-T key=`` (``false``, ``image``, ``{}``)."""
    if default is None:
        return "unset"
    return default if isinstance(default, str) else json.dumps(default)
