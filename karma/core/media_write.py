"""Media writing shared by the synthesizer, the clip cutter, the VLM inputs and the task media.

:class:`Mp4Writer` is the one place karma writes mp4 files: an encoded H.264 video stream
(:meth:`~Mp4Writer.add_video`) or one copied packet for packet from a source stream
(:meth:`~Mp4Writer.copy_video`), an optional AAC stream (:meth:`~Mp4Writer.add_audio`), frames and
samples encoded in order, and on :meth:`~Mp4Writer.close` every encoder flushed and the file
published. :func:`write_wav` writes a wav. Both go through FFmpeg's libraries in process (PyAV,
soundfile): no ``ffmpeg`` executable and no shell is ever run (``tests/karma/core/test_media_write.py``
checks that no other module of karma, graph, retrieval or pipelines writes media itself).

Every file is written under a temporary name beside the target (:func:`karma.core.atomic.temporary_path`)
and renamed over it only when complete (:func:`karma.core.atomic.publish`), so a kill never leaves a
torn file under the real name; :meth:`~Mp4Writer.abort` (or leaving the ``with`` block on an
exception) removes the temporary file instead. PyAV is imported on first use.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karma.core.atomic import atomic_path, publish, temporary_path

if TYPE_CHECKING:
    from types import TracebackType

    import numpy as np

__all__ = ["Mp4Writer", "write_wav"]


class Mp4Writer:
    """An mp4 being written at a temporary path beside ``path``; published by :meth:`close`.

    Use as a context manager (close on success, abort on an exception) or call :meth:`close` /
    :meth:`abort` yourself.
    """

    def __init__(self, path: str | Path) -> None:
        import av

        self.path = Path(path)
        self.tmp = temporary_path(self.path)
        self.container = av.open(str(self.tmp), mode="w", format="mp4")
        self.video: Any = None
        """The video stream (encoded or copied); None until added."""
        self.audio: Any = None
        """The AAC stream; None when the file has no audio."""
        self._encoding: list[Any] = []  # streams flushed on close, in the order added
        self._frames = 0
        self._audio_pts = 0

    def add_video(
        self,
        rate: Any,
        width: int,
        height: int,
        *,
        options: dict[str, str] | None = None,
        threads: int | None = None,
    ) -> Any:
        """An H.264 (libx264, yuv420p) stream of ``rate`` frames per second (int or Fraction).

        ``options`` are x264's (``crf``, ``preset``); ``threads`` the encoder's thread count (None
        keeps x264's default; 1 makes the bitstream independent of timing).
        """
        self.video = self.container.add_stream("libx264", rate=rate, options=options)
        self.video.width, self.video.height, self.video.pix_fmt = width, height, "yuv420p"
        if threads is not None:
            self.video.codec_context.thread_count = threads
        self._encoding.append(self.video)
        return self.video

    def copy_video(self, template: Any) -> Any:
        """A video stream with the parameters of ``template`` (an input stream) for
        :meth:`copy_packet`: the packets are muxed as they are, no re-encode."""
        self.video = self.container.add_stream_from_template(template)
        return self.video

    def add_audio(self, rate: int, layout: str, *, options: dict[str, str] | None = None) -> Any:
        """An AAC stream at ``rate`` Hz, ``layout`` ``"mono"`` or ``"stereo"``; ``options`` are the
        encoder's (``{"aac_coder": "fast"}``)."""
        self.audio = self.container.add_stream("aac", rate=rate, layout=layout, options=options)
        self._encoding.append(self.audio)
        return self.audio

    def write_frame(self, frame: Any, *, format: str = "rgb24") -> None:
        """Encode one frame: an ``av.VideoFrame`` or an array in pixel ``format``.

        Frames are numbered from 0 in the encoder's time base whatever timestamps a decoded frame
        carried (PyAV numbers a frame without one the same way). The encoder is opened first: its
        time base is fixed only then (before, it reads as None), and a file without audio has
        nothing else that opens it before its first frame.
        """
        import av

        if not isinstance(frame, av.VideoFrame):
            frame = av.VideoFrame.from_ndarray(frame, format=format)
        context = self.video.codec_context
        context.open(strict=False)
        frame.pts = self._frames
        frame.time_base = context.time_base
        self._frames += 1
        for packet in self.video.encode(frame):
            self.container.mux(packet)

    def write_audio(self, samples: np.ndarray) -> None:
        """Encode ``(channels, n)`` float samples (planar), stamped right after the previous ones;
        nothing for an empty block."""
        import av
        import numpy as np

        if samples.shape[1] == 0:
            return
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples, dtype=np.float32), format="fltp", layout=self.audio.layout.name
        )
        frame.sample_rate = self.audio.rate
        frame.pts = self._audio_pts
        self._audio_pts += samples.shape[1]
        for packet in self.audio.encode(frame):
            self.container.mux(packet)

    def copy_packet(self, packet: Any) -> None:
        """Mux a packet of the :meth:`copy_video` template's stream unchanged (packets without a
        decoding timestamp, the demuxer's flush packets, are skipped)."""
        if packet.dts is None:
            return
        packet.stream = self.video
        self.container.mux(packet)

    def close(self) -> Path:
        """Flush the encoders, finish the file and rename it over :attr:`path`; returns the path."""
        for stream in self._encoding:
            for packet in stream.encode():
                self.container.mux(packet)
        self.container.close()
        return publish(self.tmp, self.path)

    def abort(self) -> None:
        """Drop the file: close the container and remove the temporary file."""
        try:
            self.container.close()
        finally:
            self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            try:
                self.close()
            except BaseException:
                self.tmp.unlink(missing_ok=True)
                raise
        else:
            with contextlib.suppress(Exception):
                self.abort()


def write_wav(path: str | Path, samples: np.ndarray, rate: int, subtype: str = "FLOAT") -> Path:
    """Write ``samples`` (``(n,)`` or ``(n, channels)``) as a wav at ``rate`` Hz, atomically.

    ``subtype`` is soundfile's (``"FLOAT"`` keeps float32 samples exactly, ``"PCM_16"``...).
    """
    import soundfile

    target = Path(path)
    with atomic_path(target) as tmp:
        soundfile.write(str(tmp), samples, rate, subtype=subtype, format="WAV")
    return target
