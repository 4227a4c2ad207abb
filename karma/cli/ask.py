"""CLI for issue #7 (placeholder until that issue lands)."""

from __future__ import annotations

import typer


def ask() -> None:
    """Not implemented yet (issue #7)."""
    typer.echo("not implemented yet (issue #7)", err=True)
    raise typer.Exit(2)
