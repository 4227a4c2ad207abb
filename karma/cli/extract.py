"""``karma extract``: scenes, clips and ``_causal_features.json`` from raw videos.

Only parsing and delegation: the work lives in ``graph.extract``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from karma.cli.options import (
    DEFAULT_EXECUTOR,
    DEFAULT_SHARDS,
    EXTRACT,
    AnalysisHeightOpt,
    ExecutorOpt,
    ForceOpt,
    ProgressOpt,
    RayAddressOpt,
    SampleRateOpt,
    ShardOpt,
    ShardsOpt,
    TaggerOpt,
    WorkersOpt,
    old_spelling,
)
from karma.core.errors import InputError

ClipMode = Literal["reencode", "none"]
"""``ExtractOptions.clips`` (tests/karma/test_cli_vocabulary.py holds them equal)."""

VideoArg = Annotated[Path, typer.Argument(help="A video file, or a folder searched recursively for videos.")]
OutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Output folder: <id>_causal_features.json, <id>_transitions.json, <id>_extraction.json, "
        "clips/<id>/scene_NNN.mp4, extract_errors.jsonl.",
    ),
]
CutThresholdOpt = Annotated[
    float, typer.Option("--cut-threshold", help="ContentDetector cut threshold (HSV change).")
]
OldThresholdOpt = Annotated[float | None, old_spelling("--threshold", new="--cut-threshold")]
MinSceneOpt = Annotated[float, typer.Option("--min-scene-seconds", help="Shortest scene kept, seconds.")]
FramesPerSceneOpt = Annotated[
    int | None,
    typer.Option(
        "--frames-per-scene", help="Sample this many frame pairs per scene instead of --sample-rate."
    ),
]
ClipModeOpt = Annotated[
    ClipMode,
    typer.Option("--clip-mode", help="reencode: frame-accurate scene_NNN.mp4 clips; none: skip clips."),
]
OldClipsOpt = Annotated[ClipMode | None, old_spelling("--clips", new="--clip-mode")]


def extract(
    video_or_dir: VideoArg,
    out: OutOpt,
    workers: WorkersOpt = 0,
    force: ForceOpt = False,
    cut_threshold: CutThresholdOpt = EXTRACT.threshold,
    threshold: OldThresholdOpt = None,
    min_scene_seconds: MinSceneOpt = EXTRACT.min_scene_seconds,
    sample_rate: SampleRateOpt = EXTRACT.sample_rate_hz,
    frames_per_scene: FramesPerSceneOpt = None,
    analysis_height: AnalysisHeightOpt = EXTRACT.analysis_height,
    clip_mode: ClipModeOpt = EXTRACT.clips,
    clips: OldClipsOpt = None,
    tagger: TaggerOpt = None,
    progress: ProgressOpt = True,
    shard: ShardOpt = None,
    executor: ExecutorOpt = DEFAULT_EXECUTOR,
    shards: ShardsOpt = DEFAULT_SHARDS,
    ray_address: RayAddressOpt = None,
) -> None:
    """Detect scenes, cut clips and extract visual and audio features for one video or a folder.

    Resumable (finished videos are skipped), parallel across videos, and a broken file is recorded
    in OUT/extract_errors.jsonl without stopping the run. Feature definitions: docs/extraction.md.
    """
    from pydantic import ValidationError

    from graph.extract import ExtractOptions, find_videos

    try:
        options = ExtractOptions(
            threshold=cut_threshold if threshold is None else threshold,
            min_scene_seconds=min_scene_seconds,
            sample_rate_hz=sample_rate,
            frames_per_scene=frames_per_scene,
            analysis_height=analysis_height,
            clips=clip_mode if clips is None else clips,
            taggers=tagger or [],
        )
        if out.exists() and not out.is_dir():
            raise InputError(f"{out}: is a file, expected the output folder (--out)")
        videos = find_videos(video_or_dir)
    except (ValidationError, FileNotFoundError) as exc:
        raise InputError(f"{exc}") from exc
    if not videos:
        raise InputError(f"no video files under {video_or_dir}")
    if executor == "ray":
        _extract_on_ray(videos, out, options, shards, force, ray_address)
        return
    _extract_here(videos, out, options, shard, workers, force, progress)


def _extract_on_ray(
    videos: list[Path], out: Path, options, shards: int, force: bool, ray_address: str | None
) -> None:
    """``--executor ray``: the videos in shards as tasks on a Ray cluster."""
    from graph.extract import ERRORS_FILE
    from karma.distributed.ray_runner import run_extract_on_ray

    ray_outcomes, summary = run_extract_on_ray(videos, out, options, shards, force=force, address=ray_address)
    typer.echo(
        f"{summary['videos']} videos in {shards} Ray shards: "
        f"{sum(o['status'] == 'done' for o in ray_outcomes)} extracted, "
        f"{sum(o['status'] == 'skipped' for o in ray_outcomes)} already done, {len(summary['failed'])} failed"
    )
    if summary["failed"]:
        typer.echo(f"failed: {', '.join(summary['failed'])} (see {out / ERRORS_FILE})", err=True)
        raise typer.Exit(1)


def _extract_here(
    videos: list[Path],
    out: Path,
    options,
    shard: str | None,
    workers: int,
    force: bool,
    progress: bool,
) -> None:
    """The local executor: a process pool here, with a progress bar; ``--shard`` keeps one shard."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from graph.extract import TaggerError, extract_many
    from karma.cli.console import stderr_console

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
    console = stderr_console()
    with Progress(*columns, console=console, disable=not progress) as bar:
        task = bar.add_task("", total=len(videos))

        def advance(outcome) -> None:
            bar.update(task, advance=1, description=f"{outcome.video_id}: {outcome.status}")

        try:
            outcomes = extract_many(
                videos, out, options, workers=workers or None, force=force, on_outcome=advance
            )
        except (TaggerError, ValueError) as exc:
            raise InputError(f"{exc}") from exc

    if spec is not None:
        from graph.extract.shards import write_manifest

        write_manifest(out, spec, universe, outcomes, options)
    _summary(outcomes, out)


def _summary(outcomes, out: Path) -> None:
    """One line of counts; the failed videos on stderr, exit 1 when any failed."""
    from graph.extract import ERRORS_FILE

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
