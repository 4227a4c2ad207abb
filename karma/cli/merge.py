"""``karma merge eval|extract``: join the shards of a sharded run (``--shard I/N``) into one folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Merge the shards of a sharded `karma eval` or `karma extract` run (refuses missing or repeated shards).",
    no_args_is_help=True,
)

ShardDirs = Annotated[
    list[Path], typer.Argument(help="The shards' output folders (every shard I/N exactly once).")
]


@app.command("eval")
def merge_eval(
    shard_dirs: ShardDirs,
    out: Annotated[Path, typer.Option("--out", help="New run directory for the merged run.")],
) -> None:
    """Merge shard run directories into one run; results.json equals an unsharded run's."""
    from karma.eval.shards import merge_runs

    results = merge_runs(out, list(shard_dirs))
    typer.echo(f"{out}: merged {len(shard_dirs)} shards, {results['n_questions']} questions")


@app.command("extract")
def merge_extract(
    shard_dirs: ShardDirs,
    out: Annotated[Path, typer.Option("--out", help="Folder that receives every video's files.")],
) -> None:
    """Check the shards' manifests and gather every video's features, transitions and clips in OUT."""
    from graph.extract.shards import merge_extractions

    summary = merge_extractions(out, list(shard_dirs))
    typer.echo(f"{out}: merged shards {', '.join(summary['shards'])}: {summary['videos']} videos")
    if summary["failed"]:
        typer.echo(f"failed or missing features: {', '.join(summary['failed'])}", err=True)
        raise typer.Exit(1)
