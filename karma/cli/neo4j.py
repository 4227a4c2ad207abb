"""CLI for issue #9 (placeholder until that issue lands)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("status")
def status() -> None:
    """Not implemented yet (issue #9)."""
    typer.echo("not implemented yet (issue #9)", err=True)
    raise typer.Exit(2)


def push() -> None:
    """Not implemented yet (issue #9)."""
    typer.echo("not implemented yet (issue #9)", err=True)
    raise typer.Exit(2)
