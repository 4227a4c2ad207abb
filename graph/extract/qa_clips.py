"""Clips and features at the QA files' own scene times (``karma clips``).

The QA files' ``scene_NNN`` come from the dataset authors' scene detection, not karma's. With only
the raw videos, ``karma extract`` would detect scenes again (other boundaries, other numbering) and
the VLM would be fed other clips under the same names. Here every scene a QA file names is cut at
exactly its ``start_time``/``end_time`` (to the nearest frame), named as the QA file names it, and
its features are computed over the same frames, so clips, features and questions line up by
construction.

Output under ``out``: ``clips/<video_id>/scene_NNN.mp4``, ``<video_id>_causal_features.json``,
``<video_id>_clips.json`` (a manifest: every scene's QA span, the frames cut, the clip's duration),
a copy of the QA file (so ``out`` is a complete ``--data`` folder), and ``clips_errors.jsonl`` (one
line per video that failed). A video whose features file and clips all exist is skipped (resume).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from graph.extract.options import ExtractOptions
from karma.core.errors import InputError, MediaError
from karma.core.media_write import Mp4Writer
from karma.core.records import seconds_to_time

QA_SUFFIX = "_qa.json"
ERRORS_FILE = "clips_errors.jsonl"


class QaScene(BaseModel):
    """One scene as the QA files name it."""

    name: str
    """Clip name, ``scene_NNN.mp4``."""
    start_s: float
    """QA start time, seconds."""
    end_s: float
    """QA end time, seconds."""

    @property
    def scene_id(self) -> str:
        return self.name.removesuffix(".mp4")

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


class QaVideoPlan(BaseModel):
    """Every scene one QA file names, with its times, in time order."""

    video_id: str
    """Video id (the QA file's)."""
    qa_file: str
    """The QA file read."""
    scenes: list[QaScene] = Field(default_factory=list)
    """Scenes to cut, sorted by start time."""
    problems: list[str] = Field(default_factory=list)
    """Scenes that cannot be cut (no times, contradicting times), one line each."""


class CutScene(BaseModel):
    """What was cut for one scene (the manifest's rows)."""

    name: str
    """Clip name."""
    start_time: str
    """QA start time as written in the QA file's form."""
    end_time: str
    """QA end time."""
    start_frame: int
    """First frame cut (``round(start * fps)``)."""
    end_frame: int
    """One past the last frame cut (``round(end * fps)``)."""
    qa_duration_s: float
    """``end - start`` from the QA file."""
    clip_duration_s: float
    """``(end_frame - start_frame) / fps``: within half a frame of each QA time."""


class QaClipsOutcome(BaseModel):
    """What happened to one video."""

    video_id: str
    """Video id."""
    status: Literal["done", "skipped", "error"]
    """``skipped``: already cut (resume)."""
    source: str | None = None
    """The raw video used."""
    error: str | None = None
    """Why the video failed."""
    scenes: list[CutScene] = Field(default_factory=list)
    """Scenes cut."""
    problems: list[str] = Field(default_factory=list)
    """Scenes left out, one line each."""
    seconds: float = 0.0
    """Wall time."""


def plan_video(qa_path: str | Path) -> QaVideoPlan:
    """The scenes a QA file names (past and current of every valid transition) with their times."""
    from karma.data.qa_loader import load_qa_file

    result = load_qa_file(qa_path)
    plan = QaVideoPlan(video_id=result.video_id, qa_file=str(qa_path))
    found: dict[str, QaScene] = {}
    for transition in result.transitions:
        for field, ref in (
            ("past_scene", transition.past_scene),
            ("current_scene", transition.current_scene),
        ):
            start, end = ref.start_seconds, ref.end_seconds
            where = f"{qa_path}, transition {transition.index}, {field} {ref.name}"
            if start is None or end is None:
                plan.problems.append(f"{where}: no start_time/end_time, cannot be cut")
                continue
            if end <= start:
                plan.problems.append(
                    f"{where}: end_time {ref.end_time} is not after start_time {ref.start_time}"
                )
                continue
            scene = QaScene(name=ref.name, start_s=start, end_s=end)
            old = found.setdefault(ref.name, scene)
            if (old.start_s, old.end_s) != (start, end):
                plan.problems.append(
                    f"{where}: times {ref.start_time}-{ref.end_time} contradict "
                    f"{seconds_to_time(old.start_s)}-{seconds_to_time(old.end_s)} given earlier; the first are used"
                )
    plan.scenes = sorted(found.values(), key=lambda s: (s.start_s, s.name))
    return plan


def find_video(videos: Path, video_id: str) -> Path | None:
    """The raw video of ``video_id`` in ``videos`` (any video suffix; case-insensitive, as the
    published scripts look clips up), or None."""
    from graph.extract.runner import VIDEO_SUFFIXES

    exact = [videos / f"{video_id}{suffix}" for suffix in VIDEO_SUFFIXES]
    for path in exact:
        if path.is_file():
            return path
    wanted = video_id.lower()
    matches = sorted(
        p
        for p in videos.rglob("*")
        if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES and p.stem.lower() == wanted
    )
    return matches[0] if matches else None


def frame_spans(scenes: list[QaScene], fps: float, n_frames: int, source: Path) -> list[tuple[int, int]]:
    """``(round(start * fps), round(end * fps))`` of each scene; a span outside the video or shorter
    than one frame is an :class:`InputError` naming the scene."""
    spans = []
    duration = n_frames / fps
    for scene in scenes:
        first, end = round(scene.start_s * fps), min(round(scene.end_s * fps), n_frames)
        if scene.start_s >= duration or end - first < 1:
            raise InputError(
                f"{source}: {scene.name} spans {seconds_to_time(scene.start_s)}-{seconds_to_time(scene.end_s)} "
                f"but the video has {n_frames} frames ({duration:.3f} s at {fps:g} fps)"
            )
        if scene.end_s > duration + 1.0 / fps:
            raise InputError(
                f"{source}: {scene.name} ends at {seconds_to_time(scene.end_s)}, after the video's end "
                f"({duration:.3f} s): is this the video the QA file was made from?"
            )
        spans.append((first, end))
    return spans


def cut_spans(
    path: Path, names: list[str], spans: list[tuple[int, int]], clip_dir: Path, options: ExtractOptions
) -> list[Path]:
    """One decoding pass writing each ``names[i]`` as frames ``spans[i]`` (spans may touch or
    overlap); re-encoded like ``karma extract``'s clips, audio cut at the sample. Atomic per clip."""
    import av

    from graph.extract.clips import _source_audio, clip_writer

    clip_dir.mkdir(parents=True, exist_ok=True)
    audio, audio_rate = _source_audio(path)
    channels = 1 if audio is None else audio.shape[0]
    order = sorted(range(len(spans)), key=lambda i: spans[i])
    paths = [clip_dir / name for name in names]
    active: dict[int, Mp4Writer] = {}
    pending = list(order)
    last = max(end for _, end in spans)
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO" if options.decode_threads != 1 else "SLICE"
            rate = stream.average_rate
            fps = float(rate)
            for index, frame in enumerate(container.decode(stream)):
                if index >= last:
                    break
                while pending and spans[pending[0]][0] <= index:
                    i = pending.pop(0)
                    writer = clip_writer(
                        paths[i], rate, frame.width, frame.height, audio_rate, channels, options
                    )
                    if audio is not None and audio_rate:
                        a0, a1 = (round(f / fps * audio_rate) for f in spans[i])
                        writer.write_audio(audio[:, a0:a1])
                    active[i] = writer
                for i, writer in list(active.items()):
                    writer.write_frame(frame)
                    if index + 1 >= spans[i][1]:
                        writer.close()
                        del active[i]
        for i in list(active):
            active.pop(i).close()
    finally:
        for writer in active.values():
            writer.abort()
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise MediaError(f"{path}: decoding ended before {', '.join(p.name for p in missing)} could be cut")
    return paths


def _top_up_samples(path: Path, scan, spans: list[tuple[int, int]]) -> None:
    """Every QA span gets at least one sampled frame pair; no motion pair straddles a QA boundary."""
    import decord

    from graph.extract.scan import _sample_per_scene

    bare = [(a, b) for a, b in spans if not any(a <= s.index < b for s in scan.samples)]
    if bare:
        width, height = scan.analysis_size
        reader = decord.VideoReader(str(path), ctx=decord.cpu(0), width=width, height=height)
        scan.samples = sorted(
            scan.samples + _sample_per_scene(reader, scan, 1, path, bare), key=lambda s: s.index
        )
    boundaries = {b for span in spans for b in span}
    for stats in scan.samples:
        if stats.index + 1 in boundaries:
            stats.motion = math.nan


def cut_video(
    plan: QaVideoPlan, source: Path, out: Path, options: ExtractOptions, taggers=None
) -> QaClipsOutcome:
    """Cut one video's QA scenes and write its feature file, manifest and QA copy."""
    from graph.extract.runner import features_path, write_json_atomic
    from graph.extract.scan import scan_video
    from graph.extract.video import scene_features

    t0 = time.perf_counter()
    if not plan.scenes:
        raise InputError(f"{plan.qa_file}: no scene with start/end times to cut")
    scan = scan_video(source, options)
    spans = frame_spans(plan.scenes, scan.fps, scan.n_frames, source)
    _top_up_samples(source, scan, spans)
    seconds: dict[str, float] = {}
    features, _ = scene_features(
        source, scan, [s.scene_id for s in plan.scenes], spans, options, list(taggers or []), seconds
    )
    cut_spans(source, [s.name for s in plan.scenes], spans, out / "clips" / plan.video_id, options)
    rows = [
        CutScene(
            name=scene.name,
            start_time=seconds_to_time(scene.start_s),
            end_time=seconds_to_time(scene.end_s),
            start_frame=first,
            end_frame=end,
            qa_duration_s=round(scene.duration_s, 6),
            clip_duration_s=round((end - first) / scan.fps, 6),
        )
        for scene, (first, end) in zip(plan.scenes, spans, strict=True)
    ]
    write_json_atomic(
        out / f"{plan.video_id}_clips.json",
        {
            "video_id": plan.video_id,
            "source": str(source),
            "qa_file": plan.qa_file,
            "fps": scan.fps,
            "scenes": [row.model_dump() for row in rows],
            "options": options.model_dump(),
        },
    )
    qa_copy = out / Path(plan.qa_file).name
    if Path(plan.qa_file).resolve() != qa_copy.resolve():
        shutil.copyfile(plan.qa_file, qa_copy)
    write_json_atomic(features_path(out, plan.video_id), {"Scenes": features})  # last: marks done
    return QaClipsOutcome(
        video_id=plan.video_id,
        status="done",
        source=str(source),
        scenes=rows,
        problems=plan.problems,
        seconds=round(time.perf_counter() - t0, 3),
    )


def _done(plan: QaVideoPlan, out: Path) -> bool:
    from graph.extract.runner import features_path

    clips = out / "clips" / plan.video_id
    return features_path(out, plan.video_id).is_file() and all(
        (clips / s.name).is_file() for s in plan.scenes
    )


def qa_files(path: Path) -> list[Path]:
    """The QA file itself, or every ``*_qa.json`` under a folder (sorted)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such QA file or folder")
    return sorted(p for p in path.rglob(f"*{QA_SUFFIX}") if p.is_file())


def _process(qa_path: Path, videos: Path, out: Path, options: ExtractOptions, force: bool) -> QaClipsOutcome:
    """One QA file, start to end; never raises for a bad video (the outcome carries the error)."""
    from graph.extract.taggers import load_tagger

    plan = plan_video(qa_path)
    source = find_video(videos, plan.video_id)
    if not force and _done(plan, out):
        return QaClipsOutcome(
            video_id=plan.video_id, status="skipped", source=str(source) if source else None
        )
    if source is None:
        return QaClipsOutcome(
            video_id=plan.video_id, status="error", error=f"no raw video named {plan.video_id}.* in {videos}"
        )
    try:
        taggers = [load_tagger(spec) for spec in options.taggers]
        return cut_video(plan, source, out, options, taggers)
    except (InputError, MediaError) as exc:
        return QaClipsOutcome(video_id=plan.video_id, status="error", source=str(source), error=str(exc))


def _record_error(out: Path, qa_path: Path, outcome: QaClipsOutcome) -> None:
    row = {"video_id": outcome.video_id, "qa_file": str(qa_path), "error": outcome.error}
    with (out / ERRORS_FILE).open("a") as handle:
        handle.write(json.dumps({**row, "at": datetime.now(UTC).isoformat(timespec="seconds")}) + "\n")


def cut_qa_clips(
    qa: str | Path,
    videos: str | Path,
    out: str | Path,
    options: ExtractOptions | None = None,
    *,
    force: bool = False,
    workers: int = 1,
    report=None,
) -> list[QaClipsOutcome]:
    """Cut every QA file's scenes from its raw video in ``videos``; one outcome per QA file, in QA
    file order.

    A failing video (no raw video, a span outside it, undecodable) is recorded in ``clips_errors.jsonl``
    and the others go on. ``workers`` > 1 cuts that many videos at once (one process each; 0 = all
    cores). ``report(outcome)`` is called after each video, in completion order.
    """
    options = options or ExtractOptions()
    qa, videos, out = Path(qa), Path(videos), Path(out)
    if not videos.is_dir():
        raise InputError(f"{videos}: the raw-video folder does not exist")
    files = qa_files(qa)
    if not files:
        raise InputError(f"{qa}: no *{QA_SUFFIX} files")
    out.mkdir(parents=True, exist_ok=True)
    workers = workers or (os.cpu_count() or 1)
    outcomes: dict[Path, QaClipsOutcome] = {}

    def finish(qa_path: Path, outcome: QaClipsOutcome) -> None:
        if outcome.status == "error":
            _record_error(out, qa_path, outcome)
        outcomes[qa_path] = outcome
        if report is not None:
            report(outcome)

    if workers <= 1 or len(files) == 1:
        for qa_path in files:
            finish(qa_path, _process(qa_path, videos, out, options, force))
    else:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(files)), mp_context=get_context("spawn")
        ) as pool:
            futures = {pool.submit(_process, q, videos, out, options, force): q for q in files}
            for future in as_completed(futures):
                finish(futures[future], future.result())
    return [outcomes[qa_path] for qa_path in files]
