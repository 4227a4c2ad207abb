"""Configuration of feature extraction (one pydantic model, defaults in one place)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ExtractOptions(BaseModel):
    """How ``karma extract`` detects scenes, samples frames and analyses audio."""

    threshold: float = Field(default=27.0, gt=0)
    """PySceneDetect ContentDetector threshold on the mean HSV change between frames (0-255)."""
    min_scene_seconds: float = Field(default=0.6, ge=0)
    """Minimum scene length; a cut closer than this to the previous one is merged."""
    analysis_height: int = Field(default=180, ge=0)
    """Frames are decoded scaled to this height (width keeps the aspect, even); 0 = native size.
    Cut detection and every visual feature are computed at this size."""
    sample_rate_hz: float = Field(default=4.0, gt=0)
    """Visual feature samples per second of video (each sample is a pair of consecutive frames)."""
    frames_per_scene: int | None = Field(default=None, ge=1)
    """If set, sample this many frame pairs per scene, evenly spread (a second decoding pass)
    instead of ``sample_rate_hz``."""
    audio_sample_rate: int = Field(default=22050, ge=8000)
    """Audio is decoded and resampled to this rate for every audio feature."""
    clips: Literal["reencode", "none"] = "reencode"
    """``reencode``: write frame-accurate ``scene_NNN.mp4`` clips (H.264 + AAC); ``none``: no clips."""
    clip_crf: int = Field(default=23, ge=0, le=51)
    """x264 quality of re-encoded clips."""
    clip_preset: str = "ultrafast"
    """x264 preset of re-encoded clips (speed vs. size)."""
    decode_threads: int = Field(default=1, ge=0)
    """Decoder threads per video (0 = FFmpeg's choice); parallelism comes from one process per video."""
    taggers: list[str] = Field(default_factory=list)
    """Tagger specs ``kind:path`` (e.g. ``objects:yolov8n.pt``, ``action:/models/videomae``,
    ``moods:/models/ast``); empty = no taggers, and the feature file says so."""
