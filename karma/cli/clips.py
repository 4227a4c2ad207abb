"""``karma clips``: cut the scenes the QA files name, at their own times, from the raw videos.

Only parsing and delegation: the work lives in ``graph.extract.qa_clips``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from karma.cli.options import (
    EXTRACT,
    QA_CLIPS,
    AnalysisHeightOpt,
    ForceOpt,
    SampleRateOpt,
    TaggerOpt,
    WorkersOpt,
    old_spelling,
)

VideoDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--video-dir",
        help="Folder of raw videos named <video_id>.mp4 (or .mkv, .webm, ...; case-insensitive). Required.",
    ),
]
OldVideosOpt = Annotated[Path | None, old_spelling("--videos", new="--video-dir")]
QaFilesOpt = Annotated[
    Path | None,
    typer.Option(
        "--qa-files", help="The QA files: one <video_id>_qa.json, or a folder searched for them. Required."
    ),
]
OldQaOpt = Annotated[Path | None, old_spelling("--qa", new="--qa-files")]
"""``--qa`` is a single file in ask and retrieve; here it also took a folder, so it was renamed."""


def clips(
    qa_files: QaFilesOpt = None,
    qa: OldQaOpt = None,
    video_dir: VideoDirOpt = None,
    videos: OldVideosOpt = None,
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output folder: clips/<video_id>/scene_NNN.mp4, <video_id>_causal_features.json, "
        "<video_id>_clips.json, a copy of each QA file, clips_errors.jsonl.",
    ),
    force: ForceOpt = False,
    workers: WorkersOpt = QA_CLIPS.workers,
    sample_rate: SampleRateOpt = EXTRACT.sample_rate_hz,
    analysis_height: AnalysisHeightOpt = EXTRACT.analysis_height,
    tagger: TaggerOpt = None,
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

    qa_source = qa_files or qa
    if qa_source is None:
        raise typer.BadParameter("give the QA file or folder with --qa-files", param_hint="--qa-files")
    source = video_dir or videos
    if source is None:
        raise typer.BadParameter("give the folder of raw videos with --video-dir", param_hint="--video-dir")
    console = stderr_console()
    options = ExtractOptions(
        sample_rate_hz=sample_rate, analysis_height=analysis_height, taggers=tagger or []
    )

    def report(outcome: QaClipsOutcome) -> None:
        if outcome.status == "error":
            console.print(f"[red]error[/red] {outcome.video_id}: {outcome.error}")
            return
        console.print(
            f"{outcome.status} {outcome.video_id}: {len(outcome.scenes)} clips ({outcome.seconds:.1f} s)"
        )
        for problem in outcome.problems:
            console.print(f"  [yellow]warning[/yellow] {problem}")

    outcomes = cut_qa_clips(qa_source, source, out, options, force=force, workers=workers, report=report)
    failed = sum(o.status == "error" for o in outcomes)
    console.print(
        f"videos: {len(outcomes) - failed} ok ({sum(o.status == 'skipped' for o in outcomes)} already done), "
        f"{failed} failed" + (f" (see {out / ERRORS_FILE})" if failed else "") + f" -> {out}"
    )
    if failed == len(outcomes):
        raise typer.Exit(1)
