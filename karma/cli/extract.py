"""``karma extract``: scenes, clips and ``_causal_features.json`` from raw videos.

Only parsing and delegation: the work lives in ``graph.extract``.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from karma.cli.errors import print_error
from karma.core.errors import InputError


class ClipMode(StrEnum):
    reencode = "reencode"
    none = "none"


def extract(
    video_or_dir: Path = typer.Argument(
        ..., help="A video file, or a folder searched recursively for videos."
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output folder: <id>_causal_features.json, <id>_transitions.json, <id>_extraction.json, "
        "clips/<id>/scene_NNN.mp4, extract_errors.jsonl.",
    ),
    workers: int = typer.Option(0, "--workers", "-j", help="Videos processed in parallel (0 = all cores)."),
    force: bool = typer.Option(False, "--force", help="Redo videos whose feature file already exists."),
    threshold: float = typer.Option(27.0, "--threshold", help="ContentDetector cut threshold (HSV change)."),
    min_scene_seconds: float = typer.Option(0.6, "--min-scene-seconds", help="Shortest scene kept, seconds."),
    sample_rate: float = typer.Option(
        4.0, "--sample-rate", help="Visual samples (frame pairs) per second of video."
    ),
    frames_per_scene: int | None = typer.Option(
        None, "--frames-per-scene", help="Sample this many frame pairs per scene instead of --sample-rate."
    ),
    analysis_height: int = typer.Option(
        180, "--analysis-height", help="Decode frames scaled to this height for analysis (0 = native)."
    ),
    clips: ClipMode = typer.Option(
        ClipMode.reencode, "--clips", help="reencode: frame-accurate scene_NNN.mp4 clips; none: skip clips."
    ),
    tagger: list[str] = typer.Option(
        [],
        "--tagger",
        help="Optional learned tagger KIND:PATH (objects:yolo.pt, action:<hf video model dir>, "
        "moods:<hf audio model dir>); repeatable. Without taggers the tagged keys are listed "
        "under Not_Computed.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    shard: str | None = typer.Option(
        None,
        "--shard",
        help="I/N: extract only the videos of shard I of N (from 0) and write OUT/extract_shard-I-of-N.json; "
        "join shards with `karma merge extract`.",
    ),
    executor: str = typer.Option(
        "local", "--executor", help="local (a process pool here) or ray (shards as tasks on a Ray cluster)."
    ),
    shards: int = typer.Option(2, "--shards", min=1, help="Ray executor: number of shards/tasks."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray executor: cluster address (default $RAY_ADDRESS or auto)."
    ),
) -> None:
    """Detect scenes, cut clips and extract visual and audio features for one video or a folder.

    Resumable (finished videos are skipped), parallel across videos, and a broken file is recorded
    in OUT/extract_errors.jsonl without stopping the run. Feature definitions: docs/extraction.md.
    """
    from pydantic import ValidationError
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from graph.extract import ERRORS_FILE, ExtractOptions, TaggerError, extract_many, find_videos

    console = Console(stderr=True, highlight=False)
    try:
        options = ExtractOptions(
            threshold=threshold,
            min_scene_seconds=min_scene_seconds,
            sample_rate_hz=sample_rate,
            frames_per_scene=frames_per_scene,
            analysis_height=analysis_height,
            clips=clips.value,
            taggers=tagger,
        )
        if out.exists() and not out.is_dir():
            raise InputError(f"{out}: is a file, expected the output folder (--out)")
        videos = find_videos(video_or_dir)
    except (ValidationError, FileNotFoundError) as exc:
        print_error(f"{exc}")
        raise typer.Exit(2) from exc
    if not videos:
        print_error(f"no video files under {video_or_dir}")
        raise typer.Exit(2)
    if executor not in ("local", "ray"):
        raise typer.BadParameter(f"--executor must be local or ray, got {executor!r}")
    if executor == "ray":
        from karma.distributed.ray_runner import run_extract_on_ray

        ray_outcomes, summary = run_extract_on_ray(
            videos, out, options, shards, force=force, address=ray_address
        )
        typer.echo(
            f"{summary['videos']} videos in {shards} Ray shards: "
            f"{sum(o['status'] == 'done' for o in ray_outcomes)} extracted, "
            f"{sum(o['status'] == 'skipped' for o in ray_outcomes)} already done, {len(summary['failed'])} failed"
        )
        if summary["failed"]:
            typer.echo(f"failed: {', '.join(summary['failed'])} (see {out / ERRORS_FILE})", err=True)
            raise typer.Exit(1)
        return
    universe = videos
    spec = None
    if shard:
        from graph.extract.shards import shard_sources
        from karma.core.shard import ShardSpec

        spec = ShardSpec.parse(shard)
        videos = shard_sources(videos, spec)

    columns = (
        TextColumn("[bold]extract"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=console, disable=not progress) as bar:
        task = bar.add_task("", total=len(videos))

        def advance(outcome) -> None:
            bar.update(task, advance=1, description=f"{outcome.video_id}: {outcome.status}")

        try:
            outcomes = extract_many(
                videos, out, options, workers=workers or None, force=force, on_outcome=advance
            )
        except (TaggerError, ValueError) as exc:
            print_error(f"{exc}")
            raise typer.Exit(2) from exc

    if spec is not None:
        from graph.extract.shards import write_manifest

        write_manifest(out, spec, universe, outcomes, options)
    done = [o for o in outcomes if o.status == "done"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    failed = [o for o in outcomes if o.status == "error"]
    seconds = sum(o.duration_s for o in done)
    typer.echo(
        f"{len(done)} extracted ({seconds:.1f} s of video, {sum(o.n_scenes for o in done)} scenes), "
        f"{len(skipped)} already done, {len(failed)} failed"
    )
    for outcome in failed:
        typer.echo(f"failed: {outcome.source}: {outcome.error}", err=True)
    if failed:
        typer.echo(f"errors recorded in {out / ERRORS_FILE}", err=True)
        raise typer.Exit(1)
