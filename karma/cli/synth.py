"""CLI for issue #3 (placeholder until that issue lands)."""

from __future__ import annotations

import typer


def synth() -> None:
    """Not implemented yet (issue #3)."""
    typer.echo("not implemented yet (issue #3)", err=True)
    raise typer.Exit(2)
