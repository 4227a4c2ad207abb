"""CLI for issue #8 (placeholder until that issue lands)."""

from __future__ import annotations

import typer


def eval_command() -> None:
    """Not implemented yet (issue #8)."""
    typer.echo("not implemented yet (issue #8)", err=True)
    raise typer.Exit(2)


def report() -> None:
    """Not implemented yet (issue #8)."""
    typer.echo("not implemented yet (issue #8)", err=True)
    raise typer.Exit(2)
