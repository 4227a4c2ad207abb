"""CLI for issue #5 (placeholder until that issue lands)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("build")
def build() -> None:
    """Not implemented yet (issue #5)."""
    typer.echo("not implemented yet (issue #5)", err=True)
    raise typer.Exit(2)
