"""Media I/O shared by the synthesizer, the extractor and the VLM inputs: one probe, one error.

:func:`probe` reads a file's stream facts with PyAV (no frame decoding). Every media failure is a
:class:`~karma.core.errors.MediaError` naming the file. PyAV is imported on first use, so importing
this module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from karma.core.errors import MediaError

__all__ = ["MediaError", "MediaInfo", "probe"]


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
