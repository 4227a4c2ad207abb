"""CLI for issue #4 (placeholder until that issue lands)."""

from __future__ import annotations

import typer


def extract() -> None:
    """Not implemented yet (issue #4)."""
    typer.echo("not implemented yet (issue #4)", err=True)
    raise typer.Exit(2)
