"""``karma clips``: cut the scenes the QA files name, at their own times, from the raw videos.

Only parsing and delegation: the work lives in ``graph.extract.qa_clips``.
"""

from __future__ import annotations

from pathlib import Path

import typer


def clips(
    qa: Path = typer.Option(..., "--qa", help="A <video_id>_qa.json file, or a folder searched for them."),
    videos: Path = typer.Option(
        ...,
        "--videos",
        help="Folder of raw videos named <video_id>.mp4 (or .mkv, .webm, ...; case-insensitive).",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output folder: clips/<video_id>/scene_NNN.mp4, <video_id>_causal_features.json, "
        "<video_id>_clips.json, a copy of each QA file, clips_errors.jsonl.",
    ),
    force: bool = typer.Option(False, "--force", help="Redo videos already cut."),
    workers: int = typer.Option(1, "--workers", "-j", help="Videos cut in parallel (0 = all cores)."),
    sample_rate: float = typer.Option(4.0, "--sample-rate", help="Visual samples (frame pairs) per second."),
    analysis_height: int = typer.Option(
        180, "--analysis-height", help="Decode frames scaled to this height for analysis (0 = native)."
    ),
    tagger: list[str] = typer.Option(
        [], "--tagger", help="Optional learned tagger KIND:PATH (see karma extract)."
    ),
) -> None:
    """Cut every scene the QA files name at exactly its start/end time, named as the QA files name it,
    and extract its features over the same frames.

    Use this when you have the raw videos but not the dataset authors' clips: karma extract would
    detect scenes again and number them its own way. OUT is then a complete folder for
    `karma eval --data OUT --clips OUT/clips`. A video that fails is recorded in
    OUT/clips_errors.jsonl and the others go on; finished videos are skipped on a rerun.
    """
    from graph.extract import ExtractOptions
    from graph.extract.qa_clips import ERRORS_FILE, QaClipsOutcome, cut_qa_clips
    from karma.cli.console import stderr_console

    console = stderr_console()
    options = ExtractOptions(sample_rate_hz=sample_rate, analysis_height=analysis_height, taggers=tagger)

    def report(outcome: QaClipsOutcome) -> None:
        if outcome.status == "error":
            console.print(f"[red]error[/red] {outcome.video_id}: {outcome.error}")
            return
        console.print(
            f"{outcome.status} {outcome.video_id}: {len(outcome.scenes)} clips ({outcome.seconds:.1f} s)"
        )
        for problem in outcome.problems:
            console.print(f"  [yellow]warning[/yellow] {problem}")

    outcomes = cut_qa_clips(qa, videos, out, options, force=force, workers=workers, report=report)
    failed = sum(o.status == "error" for o in outcomes)
    console.print(
        f"videos: {len(outcomes) - failed} ok ({sum(o.status == 'skipped' for o in outcomes)} already done), "
        f"{failed} failed" + (f" (see {out / ERRORS_FILE})" if failed else "") + f" -> {out}"
    )
    if failed == len(outcomes):
        raise typer.Exit(1)
