"""Extract everything for one video: scenes, clips, visual and audio features, optional tags."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field

from graph.extract.audio import KEY_KEY_CONFIDENCE, decode_audio, scene_audio_features
from graph.extract.options import ExtractOptions
from graph.extract.scan import VideoScan, read_scene_frames, scan_video
from graph.extract.taggers import TAGGED_KEYS, SceneInput, Tagger
from graph.extract.visual import scene_visual, shot_rhythm
from karma.core.records import (
    KEY_AROUSAL,
    KEY_BRIGHTNESS,
    KEY_CONTRAST,
    KEY_KEY,
    KEY_LOUDNESS,
    KEY_MOTION,
    KEY_NOT_COMPUTED,
    KEY_ONSET_RATE,
    KEY_SATURATION,
    KEY_SPECTRAL_CENTROID,
    KEY_TEMPO,
    KEY_VALENCE,
    KEY_VISUAL_INTENSITY,
    seconds_to_time,
)

PUBLISHED_ORDER: tuple[str, ...] = (
    KEY_BRIGHTNESS,
    KEY_VISUAL_INTENSITY,
    KEY_MOTION,
    KEY_SATURATION,
    KEY_CONTRAST,
    KEY_LOUDNESS,
    KEY_KEY,
    *TAGGED_KEYS,
)
AUDIO_KEYS: tuple[str, ...] = (
    KEY_LOUDNESS,
    KEY_KEY,
    KEY_KEY_CONFIDENCE,
    KEY_TEMPO,
    KEY_ONSET_RATE,
    KEY_SPECTRAL_CENTROID,
    KEY_VALENCE,
    KEY_AROUSAL,
)
TAGGER_FRAMES = 16


class SceneSpan(BaseModel):
    """Where a detected scene lies in the source video."""

    scene_id: str
    """``scene_NNN`` (numbered from 001 in time order)."""
    start_time: str
    """Start, ``HH:MM:SS.mmm``."""
    end_time: str
    """End, ``HH:MM:SS.mmm`` (the next scene's start)."""
    start_frame: int
    """First frame."""
    end_frame: int
    """One past the last frame."""
    n_samples: int = 0
    """Frame pairs the visual features averaged."""


class VideoExtraction(BaseModel):
    """Everything extracted from one video (the run manifest holds this, the feature file a part)."""

    video_id: str
    """File name without extension."""
    source: str
    """The video read."""
    fps: float
    """Frame rate."""
    n_frames: int
    """Frames decoded."""
    duration_s: float
    """``n_frames / fps``."""
    analysis_size: tuple[int, int]
    """(width, height) frames were analysed at."""
    has_audio: bool
    """Whether the file has an audio stream."""
    scenes: list[SceneSpan]
    """Detected scenes in time order; consecutive scenes share boundaries."""
    features: dict[str, dict[str, object]]
    """Scene id -> feature object exactly as written to ``_causal_features.json``."""
    clips: list[str] = Field(default_factory=list)
    """Clip files written (empty when clips are off)."""
    options: ExtractOptions
    """The options used."""
    seconds: dict[str, float] = Field(default_factory=dict)
    """Wall time per stage."""

    @property
    def cut_times(self) -> list[float]:
        return [span.start_frame / self.fps for span in self.scenes[1:]]

    def features_document(self) -> dict[str, object]:
        """The ``<video_id>_causal_features.json`` document."""
        return {"Scenes": self.features}

    def transitions_document(self) -> list[dict[str, object]]:
        """Consecutive scene pairs in the QA file's transition layout (without questions)."""
        out = []
        for past, current in zip(self.scenes, self.scenes[1:], strict=False):
            out.append(
                {
                    "current_scene": _scene_ref(current),
                    "past_scene": _scene_ref(past),
                }
            )
        return out


def _scene_ref(span: SceneSpan) -> dict[str, str]:
    return {"name": f"{span.scene_id}.mp4", "start_time": span.start_time, "end_time": span.end_time}


def extract_video(
    path: str | Path,
    options: ExtractOptions | None = None,
    *,
    clip_dir: str | Path | None = None,
    taggers: list[Tagger] | None = None,
) -> VideoExtraction:
    """Detect scenes, compute features, and (when ``clip_dir`` is given and clips are on) cut clips.

    Raises ``graph.extract.scan.MediaError`` for a file that cannot be decoded.
    """
    options = options or ExtractOptions()
    taggers = taggers or []
    path = Path(path)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    scan = scan_video(path, options)
    seconds["scan"] = time.perf_counter() - t0
    spans = _spans(scan)

    features, has_audio = scene_features(
        path, scan, [span.scene_id for span in spans], scan.scene_frames, options, taggers, seconds
    )
    for span, n in zip(spans, _sample_counts(scan, scan.scene_frames), strict=True):
        span.n_samples = n

    clips: list[str] = []
    if clip_dir is not None and options.clips == "reencode":
        from graph.extract.clips import cut_clips

        t0 = time.perf_counter()
        clips = [str(p) for p in cut_clips(path, scan.boundaries, scan.fps, clip_dir, options)]
        seconds["clips"] = time.perf_counter() - t0

    return VideoExtraction(
        video_id=path.stem,
        source=str(path),
        fps=scan.fps,
        n_frames=scan.n_frames,
        duration_s=scan.n_frames / scan.fps,
        analysis_size=scan.analysis_size,
        has_audio=has_audio,
        scenes=spans,
        features=features,
        clips=clips,
        options=options,
        seconds={k: round(v, 3) for k, v in seconds.items()},
    )


def _sample_counts(scan: VideoScan, frame_spans: list[tuple[int, int]]) -> list[int]:
    return [sum(1 for s in scan.samples if first <= s.index < end) for first, end in frame_spans]


def scene_features(
    path: Path,
    scan: VideoScan,
    scene_ids: list[str],
    frame_spans: list[tuple[int, int]],
    options: ExtractOptions,
    taggers: list[Tagger],
    seconds: dict[str, float],
) -> tuple[dict[str, dict[str, object]], bool]:
    """The feature object of every scene given as ``(first frame, end frame)`` in time order, from
    one scan's frame samples and the file's audio; also whether the file had audio.

    The scenes are the scan's own (``karma extract``) or any others (``karma clips``: the QA files'
    spans), so features, clips and questions can share one set of boundaries.
    """
    times = [(first / scan.fps, end / scan.fps) for first, end in frame_spans]
    t0 = time.perf_counter()
    track = decode_audio(path, options.audio_sample_rate) if scan.probe.has_audio else None
    audio_values = scene_audio_features(track, times) if track is not None else [{} for _ in times]
    seconds["audio"] = time.perf_counter() - t0

    by_scene: list[list] = [[] for _ in frame_spans]
    for stats in scan.samples:
        for i, (first, end) in enumerate(frame_spans):
            if first <= stats.index < end:
                by_scene[i].append(stats)
    rhythm = shot_rhythm([b - a for a, b in times])

    tags: list[dict[str, object]] = [{} for _ in frame_spans]
    if taggers:
        t0 = time.perf_counter()
        frames = read_scene_frames(path, scan, TAGGER_FRAMES, frame_spans)
        for i, (start, end) in enumerate(times):
            audio = None
            if track is not None:
                sr = track.sample_rate
                audio = track.mono[round(start * sr) : round(end * sr)]
            scene_input = SceneInput(frames=frames[i], audio=audio, sample_rate=options.audio_sample_rate)
            for tagger in taggers:
                tags[i][tagger.feature_key] = [ls.model_dump() for ls in tagger.tag(scene_input)]
        seconds["taggers"] = time.perf_counter() - t0

    features: dict[str, dict[str, object]] = {}
    for i, scene_id in enumerate(scene_ids):
        visual = scene_visual(by_scene[i])
        merged: dict[str, object] = {**visual.values, **audio_values[i], **tags[i], **rhythm[i]}
        scene: dict[str, object] = {k: merged.pop(k) for k in PUBLISHED_ORDER if k in merged}
        scene.update(merged)
        # Say what is absent and why it is absent instead of inventing values: tags without a
        # tagger, audio features without an audio stream, key of silence, tempo of < 1 s scenes.
        missing = [k for k in TAGGED_KEYS if k not in scene]
        if track is None:
            missing += list(AUDIO_KEYS)
        else:
            missing += [k for k in (KEY_KEY, KEY_TEMPO) if k not in scene]
        if missing:
            scene[KEY_NOT_COMPUTED] = missing
        features[scene_id] = scene
    return features, track is not None


def _spans(scan: VideoScan) -> list[SceneSpan]:
    return [
        SceneSpan(
            scene_id=f"scene_{i + 1:03d}",
            start_time=seconds_to_time(first / scan.fps),
            end_time=seconds_to_time(end / scan.fps),
            start_frame=first,
            end_frame=end,
        )
        for i, (first, end) in enumerate(scan.scene_frames)
    ]
