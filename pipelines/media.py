"""Media for the VLM pipeline: frames sampled with decord, audio read with PyAV, and derived clips
whose audio is removed or replaced by silence (for predictive questions), written with
``karma.core.media_write`` and cached under a content-addressed path.

Why two libraries: decord is the fast, seekable frame reader the VLM tooling expects, but its stereo
audio output is corrupt, so audio is read (and written) with PyAV. Derived clips copy the video
packets unchanged (no re-encode), so their frames are bit-identical to the source clip's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np

from karma.core.cache_health import record_sidecar, reusable
from karma.core.errors import InputError
from karma.core.hashing import file_sha256
from karma.core.media import MediaError, MediaInfo, decode_audio
from karma.core.media import probe as probe
from karma.core.media_write import Mp4Writer, write_wav
from karma.core.paths import cache_root

MEDIA_CACHE_VERSION = "1"
"""Bumped when the way derived clips are written changes (part of every cache key)."""
AAC_FRAME_SAMPLES = 1024
"""AAC encodes whole frames of 1,024 samples per channel."""
DEFAULT_SILENCE_RATE = 44_100
"""Sample rate of the silent track when the source clip has no audio to copy the rate from."""


class AudioMode(StrEnum):
    """What a clip's audio becomes before it reaches the model."""

    keep = "keep"
    """The original audio (evidential and counterfactual questions)."""
    remove = "remove"
    """No audio stream at all."""
    silence = "silence"
    """A silent AAC track of the clip's duration (models that require an audio stream)."""


default_cache_dir = cache_root
"""karma's one cache root (``karma.core.paths.cache_root``); derived clips go to its ``media/``."""


ClipInfo = MediaInfo
"""What the container says about a clip (``karma.core.media.MediaInfo``)."""


@dataclass(frozen=True)
class FrameSampling:
    """How many frames to take and how large: a count OR a rate, and a cap on the longer side."""

    num_frames: int | None = 8
    """Evenly spaced frames over the clip (ignored when ``fps`` is set)."""
    fps: float | None = None
    """Frames per second of clip time; wins over ``num_frames`` when set."""
    max_frames: int = 64
    """Upper bound on frames from one clip (rate sampling of a long clip)."""
    max_side: int | None = 448
    """Longer side cap in pixels (aspect kept, even sizes); None keeps the source size."""

    def indices(self, frame_count: int, source_fps: float) -> np.ndarray:
        """Frame indices to decode: segment centres for a count, a fixed step for a rate."""
        if frame_count <= 0:
            return np.zeros(0, dtype=np.int64)
        if self.fps is not None:
            if self.fps <= 0:
                raise InputError(f"fps must be positive, got {self.fps}")
            step = max(source_fps / self.fps, 1.0) if source_fps > 0 else 1.0
            picked = np.arange(0.0, frame_count, step)
        else:
            count = self.num_frames or 1
            if count <= 0:
                raise InputError(f"num_frames must be positive, got {count}")
            picked = (np.arange(count) + 0.5) * frame_count / count
        picked = np.unique(np.clip(np.floor(picked), 0, frame_count - 1).astype(np.int64))
        if len(picked) > self.max_frames:
            keep = np.linspace(0, len(picked) - 1, self.max_frames).round().astype(np.int64)
            picked = picked[keep]
        return picked

    def size(self, width: int, height: int) -> tuple[int, int]:
        """Output (width, height) under the cap, aspect kept, rounded to even numbers."""
        if self.max_side is None or max(width, height) <= self.max_side:
            return width, height
        scale = self.max_side / max(width, height)
        return max(2, round(width * scale / 2) * 2), max(2, round(height * scale / 2) * 2)


@dataclass(frozen=True)
class SampledFrames:
    """Frames of one clip: ``frames`` is (T, H, W, 3) uint8 RGB."""

    path: Path
    frames: np.ndarray
    indices: np.ndarray
    timestamps_s: np.ndarray
    source_fps: float

    @property
    def sample_fps(self) -> float:
        """Effective rate of the sampled frames (what a video model should be told)."""
        if len(self.timestamps_s) < 2:
            return self.source_fps or 1.0
        span = float(self.timestamps_s[-1] - self.timestamps_s[0])
        return (len(self.timestamps_s) - 1) / span if span > 0 else self.source_fps


def sample_frames(path: str | Path, sampling: FrameSampling | None = None) -> SampledFrames:
    """Decode the sampled frames of a clip with decord, then resize them under the cap.

    Resizing happens after decoding (with OpenCV's area filter) because decord's own resize fails on
    some small output widths (a buffer-size check error, e.g. at 48 x 32).
    """
    import decord

    sampling = sampling or FrameSampling()
    info = probe(path)
    width, height = sampling.size(info.width, info.height)
    try:
        reader = decord.VideoReader(str(info.path), ctx=decord.cpu(0), num_threads=1)
    except decord.DECORDError as exc:
        raise MediaError(f"{info.path}: decord cannot read the clip: {exc}") from exc
    count = len(reader)
    fps = float(reader.get_avg_fps()) or info.fps
    indices = sampling.indices(count, fps)
    if len(indices) == 0:
        raise MediaError(f"{info.path}: the clip has no frames")
    frames = reader.get_batch(list(indices.tolist())).asnumpy()
    if (width, height) != (frames.shape[2], frames.shape[1]):
        import cv2

        frames = np.stack(
            [cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA) for frame in frames]
        )
    return SampledFrames(
        path=info.path,
        frames=frames,
        indices=indices,
        timestamps_s=indices / fps if fps > 0 else indices.astype(float),
        source_fps=fps,
    )


def read_audio(path: str | Path, sample_rate: int = 16_000, mono: bool = True) -> np.ndarray:
    """The clip's audio as float32 in [-1, 1]: (samples,) when mono else (channels, samples).

    Returns an empty array when the clip has no audio stream. PyAV decodes AAC in whole frames, so the
    result is trimmed to the stream's duration.
    """
    info = probe(path)
    channels = 1 if mono else (info.audio_channels or 1)
    if not info.has_audio:
        return np.zeros(0 if mono else (channels, 0), dtype=np.float32)
    decoded = decode_audio(info.path, sample_rate, "mono" if channels == 1 else "stereo")
    assert decoded is not None  # probe saw an audio stream
    audio, duration = decoded
    audio = audio[:, : round((duration or info.duration_s) * sample_rate)]
    return audio[0] if mono else audio


def derived_clip_path(source: Path, mode: AudioMode, cache_dir: Path) -> Path:
    """Content-addressed location: the source's bytes, the mode and the writer version."""
    key = hashlib.sha256(f"{file_sha256(source)}|{mode}|{MEDIA_CACHE_VERSION}".encode()).hexdigest()
    return cache_dir / "media" / key[:2] / f"{key}.mp4"


def derive_clip(path: str | Path, mode: AudioMode | str, cache_dir: str | Path | None = None) -> Path:
    """The clip with its audio handled per ``mode``; ``keep`` returns the source path itself.

    Derived clips are written once (atomically) and reused: the path depends only on the source bytes,
    the mode and ``MEDIA_CACHE_VERSION``; a reuse first checks the clip against the sha256 written
    beside it (``karma.core.cache_health.reusable``), so a corrupt cached clip is written again, never
    sent.
    """
    mode = AudioMode(mode)
    source = Path(path)
    if mode == AudioMode.keep:
        probe(source)
        return source
    target = derived_clip_path(source, mode, Path(cache_dir) if cache_dir else default_cache_dir())
    if reusable(target):
        return target
    _write_derived(source, target, mode)
    record_sidecar(target)
    return target


WAV_RATE = 16_000
"""Sample rate of derived audio parts (the Whisper feature extractor rate of Qwen2.5-Omni)."""


def derived_wav_path(source: Path, cache_dir: Path) -> Path:
    """Content-addressed location of a clip's audio as a wav (source bytes, rate, writer version)."""
    key = hashlib.sha256(f"{file_sha256(source)}|wav{WAV_RATE}|{MEDIA_CACHE_VERSION}".encode()).hexdigest()
    return cache_dir / "media" / key[:2] / f"{key}.wav"


def derive_audio_wav(path: str | Path, cache_dir: str | Path | None = None) -> Path | None:
    """The clip's audio track as a mono 16 kHz float32 wav (cached), or None when the clip has none.

    This is the audio part sent beside a video part: any server reads a wav (soundfile), while reading
    the audio out of an mp4 needs FFmpeg on the server. Float32 keeps the samples exactly as
    ``read_audio`` returns them, so every backend hears the same waveform.
    """
    source = Path(path)
    if not probe(source).has_audio:
        return None
    target = derived_wav_path(source, Path(cache_dir) if cache_dir else default_cache_dir())
    if reusable(target):
        return target
    write_wav(target, read_audio(source, sample_rate=WAV_RATE), WAV_RATE, subtype="FLOAT")
    record_sidecar(target)
    return target


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """A wav file as (float32 mono samples, sample rate)."""
    import soundfile

    try:
        audio, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except RuntimeError as exc:
        raise MediaError(f"{path}: cannot read as audio: {exc}") from exc
    return np.ascontiguousarray(audio.mean(axis=1), dtype=np.float32), int(rate)


def _write_derived(source: Path, target: Path, mode: AudioMode) -> None:
    import av

    info = probe(source)
    with av.open(str(source)) as inp, Mp4Writer(target) as out:
        video_in = inp.streams.video[0]
        out.copy_video(video_in)
        if mode == AudioMode.silence:
            rate = info.audio_rate or DEFAULT_SILENCE_RATE
            out.add_audio(rate, "mono" if (info.audio_channels or 2) == 1 else "stereo")
        # Copy the video packets as they are: the derived clip's frames equal the source's exactly.
        for packet in inp.demux(video_in):
            out.copy_packet(packet)
        if out.audio is not None:
            _encode_silence(out, info.duration_s)


def _encode_silence(out: Mp4Writer, duration_s: float) -> None:
    rate = out.audio.rate
    channels = out.audio.layout.nb_channels
    total = max(round(duration_s * rate), AAC_FRAME_SAMPLES)
    for start in range(0, total, AAC_FRAME_SAMPLES):
        out.write_audio(np.zeros((channels, min(AAC_FRAME_SAMPLES, total - start)), dtype=np.float32))
