"""One decoding pass over a video: PySceneDetect's ContentDetector on every frame, picture
statistics on sampled frame pairs (decord).

Frames are decoded once, scaled to the analysis size inside the decoder (decord), which is
what makes extraction fast: every frame must be decoded for cut detection anyway, so the sampled
frames for the visual features come from the same pass instead of a second seek-heavy one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graph.extract.options import ExtractOptions
from graph.extract.visual import FrameStats, frame_stats, luma
from karma.core.media import MediaError, probe

_CHUNK = 48  # frames per decord batch: bounded memory, few Python round trips


@dataclass
class Probe:
    """Container facts read with PyAV before decoding."""

    width: int
    height: int
    fps: float
    duration_s: float
    expected_frames: int
    has_audio: bool


@dataclass
class VideoScan:
    """Result of the decoding pass."""

    probe: Probe
    n_frames: int
    """Frames decoded."""
    fps: float
    analysis_size: tuple[int, int]
    """(width, height) the frames were analysed at."""
    boundaries: list[int]
    """Scene boundaries in frames: ``[0, cut_1, ..., n_frames]``."""
    samples: list[FrameStats] = field(default_factory=list)
    """Sampled frame statistics in frame order."""

    @property
    def scene_frames(self) -> list[tuple[int, int]]:
        """(first frame, end frame exclusive) of every scene."""
        return list(zip(self.boundaries[:-1], self.boundaries[1:], strict=True))

    def scene_times(self) -> list[tuple[float, float]]:
        return [(a / self.fps, b / self.fps) for a, b in self.scene_frames]


def probe_video(path: Path) -> Probe:
    """Read size, rate and duration (``karma.core.media.probe``); raise MediaError when the file is
    not a usable video."""
    info = probe(path)
    if info.fps <= 0 or info.width <= 0 or info.height <= 0:
        raise MediaError(f"{path}: video stream has no frame rate or size")
    return Probe(info.width, info.height, info.fps, info.duration_s, info.frame_count, info.has_audio)


def analysis_size(probe: Probe, options: ExtractOptions) -> tuple[int, int]:
    if options.analysis_height <= 0 or options.analysis_height >= probe.height:
        return probe.width, probe.height
    height = options.analysis_height - options.analysis_height % 2
    width = round(probe.width * height / probe.height / 2) * 2
    return width, height


def _rate_sample_indices(n_frames: int, fps: float, rate_hz: float) -> list[int]:
    step = fps / rate_hz
    count = max(1, math.floor(n_frames / step))
    return sorted({min(n_frames - 1, int((k + 0.5) * step)) for k in range(count)})


def scan_video(path: str | Path, options: ExtractOptions) -> VideoScan:
    """Decode every frame once: detect cuts and collect sampled frame statistics."""
    import cv2
    import decord
    from scenedetect import FrameTimecode
    from scenedetect.detectors import ContentDetector

    path = Path(path)
    probe = probe_video(path)
    width, height = analysis_size(probe, options)
    try:
        reader = decord.VideoReader(
            str(path), ctx=decord.cpu(0), width=width, height=height, num_threads=options.decode_threads
        )
    except Exception as exc:
        raise MediaError(f"{path}: decord cannot read the video: {exc}") from exc
    n_frames = len(reader)
    fps = probe.fps
    if n_frames < 2:
        raise MediaError(f"{path}: only {n_frames} frame(s)")
    min_len = max(1, round(options.min_scene_seconds * fps))
    detector = ContentDetector(threshold=options.threshold, min_scene_len=min_len)
    wanted = (
        set(_rate_sample_indices(n_frames, fps, options.sample_rate_hz))
        if options.frames_per_scene is None
        else set()
    )
    samples: list[FrameStats] = []
    pending: tuple[FrameStats, np.ndarray] | None = None  # sample waiting for its next frame
    cuts: list[int] = []
    for start in range(0, n_frames, _CHUNK):
        indices = list(range(start, min(n_frames, start + _CHUNK)))
        try:
            batch = reader.get_batch(indices).asnumpy()
        except Exception as exc:
            raise MediaError(f"{path}: decoding failed near frame {start} of {n_frames}: {exc}") from exc
        for offset, rgb in enumerate(batch):
            index = start + offset
            bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)  # the detector expects OpenCV's BGR order
            cuts += [tc.frame_num for tc in detector.process_frame(FrameTimecode(index, fps), bgr)]
            if pending is not None:
                stats, previous = pending
                stats.motion = float(np.abs(luma(rgb) - previous).mean())
                pending = None
            if index in wanted:
                y = luma(rgb)
                stats = frame_stats(index, rgb, y)
                samples.append(stats)
                pending = (stats, y)
    cuts += [tc.frame_num for tc in detector.post_process(FrameTimecode(n_frames, fps))]
    cut_frames = sorted({c for c in cuts if 0 < c < n_frames})
    boundaries = [0, *cut_frames, n_frames]
    scan = VideoScan(
        probe=probe, n_frames=n_frames, fps=fps, analysis_size=(width, height), boundaries=boundaries
    )
    if options.frames_per_scene is not None:
        samples = _sample_per_scene(reader, scan, options.frames_per_scene, path, scan.scene_frames)
    else:
        # Scenes shorter than the sampling step still get one frame pair.
        bare = [
            (first, end)
            for first, end in scan.scene_frames
            if not any(first <= s.index < end for s in samples)
        ]
        if bare:
            samples = sorted(samples + _sample_per_scene(reader, scan, 1, path, bare), key=lambda s: s.index)
    # A motion pair must not straddle a cut.
    cut_set = set(cut_frames)
    for stats in samples:
        if stats.index + 1 in cut_set:
            stats.motion = math.nan
    scan.samples = samples
    return scan


def _sample_per_scene(
    reader, scan: VideoScan, per_scene: int, path: Path, scenes: list[tuple[int, int]]
) -> list[FrameStats]:
    """Second pass: ``per_scene`` evenly spread frame pairs in each of ``scenes``."""
    firsts: list[int] = []
    for first, end in scenes:
        usable = max(1, end - first - 1)
        count = min(per_scene, usable)
        firsts += [first + int((k + 0.5) * usable / count) for k in range(count)]
    wanted = sorted({i for f in firsts for i in (f, min(f + 1, scan.n_frames - 1))})
    frames: dict[int, np.ndarray] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        try:
            batch = reader.get_batch(chunk).asnumpy()
        except Exception as exc:
            raise MediaError(f"{path}: decoding sampled frames failed: {exc}") from exc
        frames.update(zip(chunk, batch, strict=True))
    samples = []
    for first in sorted(set(firsts)):
        y = luma(frames[first])
        stats = frame_stats(first, frames[first], y)
        if first + 1 in frames and first + 1 < scan.n_frames:
            stats.motion = float(np.abs(luma(frames[first + 1]) - y).mean())
        samples.append(stats)
    return samples


def read_scene_frames(
    path: str | Path, scan: VideoScan, per_scene: int, scenes: list[tuple[int, int]] | None = None
) -> list[list[np.ndarray]]:
    """Evenly spread RGB frames of every scene (default: the scan's own) at the analysis size (for taggers)."""
    import decord

    width, height = scan.analysis_size
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0), width=width, height=height)
    out = []
    for first, end in scan.scene_frames if scenes is None else scenes:
        count = min(per_scene, end - first)
        indices = [first + int((k + 0.5) * (end - first) / count) for k in range(count)]
        out.append(list(reader.get_batch(indices).asnumpy()))
    return out
