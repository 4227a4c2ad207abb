"""``karma extract`` over one video or a folder: parallel, resumable, failure-tolerant.

Output layout under ``out_dir``:

- ``<video_id>_causal_features.json``: the published feature file (written last: its presence
  marks the video done, so a rerun skips it unless ``force``);
- ``<video_id>_transitions.json``: consecutive scene pairs in the QA layout (no questions);
- ``<video_id>_extraction.json``: manifest (scene spans in frames and times, options, timings);
- ``clips/<video_id>/scene_NNN.mp4``: the scene clips;
- ``extract_errors.jsonl``: one line per video that failed (video, source, error), appended.

Every file is written to a temporary name and renamed, so an interrupted run never leaves a
half-written file under a final name.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from graph.extract.options import ExtractOptions
from karma.core.errors import InputError

VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v")
ERRORS_FILE = "extract_errors.jsonl"


class VideoOutcome(BaseModel):
    """What happened to one input video."""

    video_id: str
    """File name without extension."""
    source: str
    """The input file."""
    status: Literal["done", "skipped", "error"]
    """``skipped`` = already extracted (resume)."""
    error: str | None = None
    """Error type and message when ``status == "error"``."""
    n_scenes: int = 0
    """Scenes detected."""
    duration_s: float = 0.0
    """Video duration."""
    seconds: float = 0.0
    """Wall time spent on this video."""
    cpu_seconds: float = 0.0
    """CPU time of the worker process (all its threads) spent on this video."""


def find_videos(path: str | Path) -> list[Path]:
    """The video itself, or the videos in a folder (recursively, sorted)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)


def features_path(out_dir: Path, video_id: str) -> Path:
    return out_dir / f"{video_id}_causal_features.json"


def write_json_atomic(path: Path, document: object) -> None:
    """Write JSON to ``path`` via a temporary file in the same folder and an atomic rename."""
    from karma.core.atomic import atomic_write_text

    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def _extract_one(source: str, out_dir: str, options: ExtractOptions) -> VideoOutcome:
    """Worker body: never raises for a bad video (the outcome carries the error)."""
    from graph.extract.taggers import load_tagger
    from graph.extract.video import extract_video

    started, cpu = time.perf_counter(), time.process_time()
    src, out = Path(source), Path(out_dir)
    video_id = src.stem
    try:
        taggers = [load_tagger(spec) for spec in options.taggers]
        extraction = extract_video(src, options, clip_dir=out / "clips" / video_id, taggers=taggers)
        write_json_atomic(out / f"{video_id}_transitions.json", extraction.transitions_document())
        write_json_atomic(out / f"{video_id}_extraction.json", extraction.model_dump(mode="json"))
        write_json_atomic(features_path(out, video_id), extraction.features_document())
    except Exception as exc:
        last = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        where = f" (at {Path(last.filename).name}:{last.lineno})" if last else ""
        return VideoOutcome(
            video_id=video_id,
            source=source,
            status="error",
            error=f"{type(exc).__name__}: {exc}{where}",
            seconds=time.perf_counter() - started,
            cpu_seconds=time.process_time() - cpu,
        )
    return VideoOutcome(
        video_id=video_id,
        source=source,
        status="done",
        n_scenes=len(extraction.scenes),
        duration_s=extraction.duration_s,
        seconds=time.perf_counter() - started,
        cpu_seconds=time.process_time() - cpu,
    )


def _record_error(out_dir: Path, outcome: VideoOutcome) -> None:
    line = {
        "video_id": outcome.video_id,
        "source": outcome.source,
        "error": outcome.error,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with (out_dir / ERRORS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def extract_many(
    inputs: Iterable[str | Path],
    out_dir: str | Path,
    options: ExtractOptions | None = None,
    *,
    workers: int | None = None,
    force: bool = False,
    on_outcome: Callable[[VideoOutcome], None] | None = None,
) -> list[VideoOutcome]:
    """Extract every video (one process per video, ``workers`` at a time; default all cores).

    Videos whose feature file exists are skipped unless ``force``. A video that fails is recorded
    in ``extract_errors.jsonl`` and the run goes on; a worker process that crashes (a decoder
    segfault on a corrupt file) is retried alone so the crash is pinned on the right video.
    """
    from graph.extract.taggers import check_tagger_specs

    options = options or ExtractOptions()
    check_tagger_specs(options.taggers)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sources = [Path(p) for p in inputs]
    ids = [p.stem for p in sources]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(f"several input videos share the video id(s) {duplicates}; ids come from file names")
    outcomes: list[VideoOutcome] = []

    def report(outcome: VideoOutcome) -> None:
        if outcome.status == "error":
            _record_error(out, outcome)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    todo: list[Path] = []
    for src in sources:
        if not force and features_path(out, src.stem).exists():
            report(VideoOutcome(video_id=src.stem, source=str(src), status="skipped"))
        else:
            todo.append(src)
    workers = max(1, workers or os.cpu_count() or 1)
    if workers == 1 or len(todo) <= 1:
        for src in todo:
            report(_extract_one(str(src), str(out), options))
        return outcomes
    _run_pool(todo, out, options, min(workers, len(todo)), report)
    return outcomes


def _run_pool(todo: list[Path], out: Path, options: ExtractOptions, workers: int, report) -> None:
    # forkserver, not fork: decord and FFmpeg start threads, and forking a threaded parent can
    # deadlock. The server preloads the analysis stack once, so workers start warm.
    context = get_context("forkserver")
    context.set_forkserver_preload(["graph.extract._warm"])
    crashed: list[Path] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures: dict[Future, Path] = {pool.submit(_extract_one, str(s), str(out), options): s for s in todo}
        for future in as_completed(futures):
            src = futures[future]
            try:
                report(future.result())
            except BrokenProcessPool:
                crashed.append(src)
    for src in crashed:  # one at a time, so a second crash names its video
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            try:
                report(pool.submit(_extract_one, str(src), str(out), options).result())
            except BrokenProcessPool:
                report(
                    VideoOutcome(
                        video_id=src.stem,
                        source=str(src),
                        status="error",
                        error="worker process crashed while decoding this file",
                    )
                )
