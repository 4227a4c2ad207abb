"""``karma synth``: generate a synthetic world with known causes (features, QA, ground truth, media)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import typer

from karma.cli.options import GENERATE, MEDIA, SeedOpt, WorkersOpt, old_spelling
from karma.core.errors import InputError, RunError
from karma.core.paths import project_file

DEFAULT_WORLD = ("data", "worlds", "default.yaml")
"""The default world config, a file of the source checkout (``karma.core.paths.project_file``)."""
MEDIA_DEFAULT_VIDEOS = 3


def _scene_seconds(value: str) -> tuple[float, float]:
    low, sep, high = value.partition("-")
    try:
        lo = float(low)
        hi = float(high) if sep else lo
    except ValueError as exc:
        raise typer.BadParameter(f"expected SECONDS or MIN-MAX, got {value!r}") from exc
    if lo <= 0 or hi < lo:
        raise typer.BadParameter(f"expected positive seconds with MIN <= MAX, got {value!r}")
    return lo, hi


OutOpt = Annotated[
    Path | None, typer.Option("--out", help="Output folder, required (created; files are overwritten).")
]
OldOutOpt = Annotated[Path | None, old_spelling("-o", new="--out")]
"""``-o`` stood for --out here only (and for --backend-option in ask): one short flag, one meaning."""
WorldOpt = Annotated[
    Path | None,
    typer.Option(
        "--world",
        "-w",
        help="World config (YAML or JSON).",
        show_default="data/worlds/default.yaml",
    ),
]
NVideosOpt = Annotated[
    int | None,
    typer.Option(
        "--n-videos",
        "-n",
        min=1,
        help=f"Number of videos (default: the world's count; {MEDIA_DEFAULT_VIDEOS} with --media).",
    ),
]
OldVideosOpt = Annotated[int | None, old_spelling("--videos", new="--n-videos", min=1)]
MediaOpt = Annotated[
    bool, typer.Option("--media", help="Also render mp4 scene clips with audio and one full video per id.")
]
WidthOpt = Annotated[int, typer.Option("--width", min=32, help="Media frame width in pixels.")]
HeightOpt = Annotated[int, typer.Option("--height", min=32, help="Media frame height in pixels.")]
FpsOpt = Annotated[int, typer.Option("--fps", min=1, max=120, help="Media frames per second.")]
OldJobsOpt = Annotated[int | None, old_spelling("--jobs", new="--workers", min=1)]
SceneSecondsOpt = Annotated[
    str | None,
    typer.Option(
        "--scene-seconds",
        help="Scene duration, SECONDS or MIN-MAX (overrides the world's scene_seconds).",
    ),
]
WordingOpt = Annotated[
    Literal["templated", "free"] | None,
    typer.Option(
        "--wording",
        help="templated (event titles, fixed question templates) or free (every question and option "
        "worded afresh from a paraphrase grammar; docs/synth.md). Default: the world's wording.",
        show_default="the world's",
    ),
]
FamilyOpt = Annotated[
    bool,
    typer.Option(
        "--family",
        help="Draw the world's rule set from --seed (karma.synth.family: two numeric rules of unequal "
        "strength with random signs, a key-state rule, an action-state rule, an action and an object rule, a "
        "non-causal trend, "
        "one independent visual variable) on the world file's variables.",
    ),
]
UnitsOpt = Annotated[
    Literal["luma", "published", "unit"] | None,
    typer.Option(
        "--units",
        help="Visual feature scales: luma (karma's own), published (motion in pixels per frame) or unit "
        "(0-1). Default: the world's.",
        show_default="the world's",
    ),
]
MusicLagOpt = Annotated[
    float | None,
    typer.Option(
        "--music-lag",
        min=0.0,
        max=0.9,
        help="Share of every musical change that shows up one transition late (0: at the cut). "
        "Default: the world's.",
        show_default="the world's",
    ),
]
VisualDriftOpt = Annotated[
    float | None,
    typer.Option(
        "--visual-drift",
        min=0.0,
        max=0.95,
        help="Correlation of each visual step with the previous one (0: independent steps). "
        "Default: the world's.",
        show_default="the world's",
    ),
]


def synth(
    out: OutOpt = None,
    out_short: OldOutOpt = None,
    world: WorldOpt = None,
    n_videos: NVideosOpt = None,
    videos: OldVideosOpt = None,
    seed: SeedOpt = GENERATE.seed,
    media: MediaOpt = False,
    width: WidthOpt = MEDIA.width,
    height: HeightOpt = MEDIA.height,
    fps: FpsOpt = MEDIA.fps,
    workers: WorkersOpt = GENERATE.jobs,
    jobs: OldJobsOpt = None,
    scene_seconds: SceneSecondsOpt = None,
    wording: WordingOpt = None,
    family: FamilyOpt = False,
    units: UnitsOpt = None,
    music_lag: MusicLagOpt = None,
    visual_drift: VisualDriftOpt = None,
) -> None:
    """Generate a synthetic Karma-MV world whose causal rules are known.

    Writes <video_id>_qa.json and <video_id>_causal_features.json (published formats),
    ground_truth.json (true causal edges, planted non-causal pairs), rules.json (the same truth rule
    by rule, for karma graph score --truth), question_truth.jsonl (each question's true cause and
    effect events) and world.json. data/worlds/contrary.yaml is a second world with other conventions
    (state effects, an aggregated action rule, aliased feature keys, paraphrased options).

    With --media, also mp4 scene clips with audio (clips/<video_id>/scene_NNN.mp4) and full
    videos with hard cuts (videos/<video_id>.mp4). See docs/synth.md.
    """
    from karma.cli.console import stderr_console

    out = out or out_short
    if out is None:
        raise typer.BadParameter("give the output folder with --out", param_hint="--out")
    console = stderr_console()
    config = _world_config(world, scene_seconds)
    config = _family_settings(config, seed, family, wording, units, music_lag, visual_drift)
    videos = n_videos if videos is None else videos
    jobs = (workers or os.cpu_count() or 1) if jobs is None else jobs
    if videos is None and media:
        videos = MEDIA_DEFAULT_VIDEOS
    media_options = None
    if media:
        from karma.synth.media import MediaOptions

        media_options = MediaOptions(width=width, height=height, fps=fps, seed=seed)
    summary = _generate(config, out, videos, seed, media_options, jobs, console)
    console.print(
        f"world [bold]{summary.world}[/bold] seed {summary.seed}: {summary.videos} videos, "
        f"{summary.transitions} transitions, {summary.questions} questions, "
        f"{summary.causal_edges} true causal edges"
        + (f", {summary.media_files} mp4 files" if media else "")
        + f" in {summary.seconds:.1f} s -> {summary.out_dir}"
    )


def _world_config(world: Path | None, scene_seconds: str | None):
    """The world config (exit 2 when it is invalid), with ``--scene-seconds`` applied."""
    from karma.synth import WorldConfigError, load_world

    try:
        config = load_world(world or project_file(*DEFAULT_WORLD))
    except WorldConfigError as exc:
        raise InputError(f"{exc}") from exc
    if scene_seconds is not None:
        low, high = _scene_seconds(scene_seconds)
        config = config.model_copy(
            update={"scene_seconds": config.scene_seconds.model_copy(update={"min": low, "max": high})}
        )
    return config


def _family_settings(config, seed: int, family: bool, wording, units, music_lag, visual_drift):  # type: ignore[no-untyped-def]
    """The world with ``--family`` (rules drawn from the seed) and the setting options applied; exit 2
    on a value that is not a setting."""
    if family:
        from karma.synth.family import draw_family_world

        try:
            config = draw_family_world(config, seed)
        except ValueError as exc:
            raise InputError(f"--family: {exc}") from exc
    update: dict[str, object] = {}
    if wording is not None:
        update["wording"] = wording
    if units is not None:
        update["units"] = units
    timing: dict[str, float] = {}
    if music_lag is not None:
        timing["music_lag"] = music_lag
    if visual_drift is not None:
        timing["visual_drift"] = visual_drift
    if timing:
        update["timing"] = config.timing.model_copy(update=timing)
    return config.model_copy(update=update) if update else config


def _generate(config, out: Path, videos: int | None, seed: int, media_options, jobs: int, console):
    """Generate the world with a progress bar per stage; exit 1 when it cannot."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from karma.synth import WorldTooQuietError, generate

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        tasks: dict[str, int] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                label = "videos (features + QA)" if stage == "features" else "videos (mp4 media)"
                tasks[stage] = progress.add_task(label, total=total)
            progress.update(tasks[stage], completed=done)

        try:
            return generate(
                config,
                out,
                videos=videos,
                seed=seed,
                media=media_options is not None,
                media_options=media_options,
                progress=report,
                jobs=jobs,
            )
        except (ValueError, WorldTooQuietError) as exc:
            raise RunError(f"{exc}") from exc
