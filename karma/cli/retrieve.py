"""CLI for issue #6 (placeholder until that issue lands)."""

from __future__ import annotations

import typer


def retrieve() -> None:
    """Not implemented yet (issue #6)."""
    typer.echo("not implemented yet (issue #6)", err=True)
    raise typer.Exit(2)
