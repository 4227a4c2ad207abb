"""Media I/O shared by the synthesizer, the extractor and the VLM inputs: one probe, one error.

:func:`probe` reads a file's stream facts with PyAV (no frame decoding); :func:`decode_audio` decodes
and resamples its audio. Every media failure is a
:class:`~karma.core.errors.MediaError` naming the file. PyAV is imported on first use, so importing
this module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from karma.core.errors import MediaError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MediaError", "MediaInfo", "decode_audio", "probe"]


@dataclass(frozen=True)
class MediaInfo:
    """What the container says about a video file."""

    path: Path
    """The file probed."""
    width: int
    """Frame width in pixels."""
    height: int
    """Frame height in pixels."""
    fps: float
    """Average (else guessed) frame rate; 0.0 when the container gives none."""
    frame_count: int
    """Frames in the video stream (from the header, else duration x fps)."""
    duration_s: float
    """Video stream duration (else the container's), seconds."""
    has_audio: bool
    """Whether there is an audio stream."""
    audio_rate: int | None
    """Sample rate of the first audio stream."""
    audio_channels: int | None
    """Channels of the first audio stream."""


def probe(path: str | Path) -> MediaInfo:
    """Stream facts of a video file; :class:`MediaError` when it is missing, unreadable or has no
    video stream."""
    import av

    path = Path(path)
    if not path.is_file():
        raise MediaError(f"media file not found: {path}")
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise MediaError(f"{path}: no video stream")
            video = container.streams.video[0]
            fps = float(video.average_rate or video.guessed_rate or 0.0)
            if video.duration is not None and video.time_base is not None:
                duration = float(video.duration * video.time_base)
            else:
                duration = float(container.duration or 0) / 1_000_000
            frames = video.frames or round(duration * fps)
            audio = container.streams.audio[0] if container.streams.audio else None
            return MediaInfo(
                path=path,
                width=video.codec_context.width,
                height=video.codec_context.height,
                fps=fps,
                frame_count=int(frames),
                duration_s=duration,
                has_audio=audio is not None,
                audio_rate=audio.rate if audio is not None else None,
                audio_channels=audio.channels if audio is not None else None,
            )
    except MediaError:
        raise
    except Exception as exc:  # PyAV raises many FFmpeg error classes; all mean "unreadable"
        raise MediaError(f"{path}: cannot open as video: {type(exc).__name__}: {exc}") from exc


def decode_audio(
    path: str | Path, sample_rate: int, layout: str | None = None
) -> tuple[np.ndarray, float | None] | None:
    """The first audio stream resampled to ``sample_rate``: ``(samples (channels, n) float32, stream
    duration in seconds or None)``; None when the file has no audio stream.

    ``layout`` is ``"mono"`` or ``"stereo"``; by default the stream's own (mono for one channel, else
    stereo). PyAV decodes AAC in whole 1,024-sample frames, so callers trim to the duration.
    """
    import av
    import numpy as np

    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                return None
            stream = container.streams.audio[0]
            if layout is None:
                layout = "mono" if stream.codec_context.channels == 1 else "stereo"
            resampler = av.AudioResampler(format="fltp", layout=layout, rate=sample_rate)
            chunks = [
                out.to_ndarray() for frame in container.decode(stream) for out in resampler.resample(frame)
            ]
            chunks += [out.to_ndarray() for out in resampler.resample(None)]
            duration = None
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
    except av.error.FFmpegError as exc:
        raise MediaError(f"{path}: cannot decode the audio: {exc}") from exc
    channels = 1 if layout == "mono" else 2
    samples = np.concatenate(chunks, axis=1) if chunks else np.zeros((channels, 0), dtype=np.float32)
    return samples.astype(np.float32), duration
