"""Cutting a video into frame-accurate ``scene_NNN.mp4`` clips (H.264 + AAC, re-encoded).

Stream copy would be faster but can only start a clip on a keyframe, which would leak frames of
the previous scene into a clip; the VLM pipeline compares past and current clips, so clips are
re-encoded (x264 ``ultrafast`` by default) in one decoding pass that routes every frame to its
scene's file. Audio is cut at the sample and re-encoded at the source rate (AAC, FFmpeg's fast coder).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graph.extract.options import ExtractOptions
from karma.core.atomic import publish


def scene_clip_name(number: int) -> str:
    """``scene_001.mp4`` for scene number 1 (three digits, as published)."""
    return f"scene_{number:03d}.mp4"


class _ClipWriter:
    def __init__(
        self,
        path: Path,
        fps,
        width: int,
        height: int,
        audio_rate: int | None,
        channels: int,
        options: ExtractOptions,
    ):
        import av

        self.path = path
        self.tmp = path.with_name(f".{path.name}.tmp")
        self.container = av.open(str(self.tmp), mode="w", format="mp4")
        self.video = self.container.add_stream(
            "libx264", rate=fps, options={"crf": str(options.clip_crf), "preset": options.clip_preset}
        )
        self.video.width, self.video.height, self.video.pix_fmt = width, height, "yuv420p"
        self.video.codec_context.thread_count = max(1, options.decode_threads)
        self.audio = None
        self.layout = "mono" if channels == 1 else "stereo"
        if audio_rate:
            # FFmpeg's "fast" AAC coder: about half the CPU of the default two-loop search (which was
            # the largest single cost of cutting clips) at the same bitrate; the clips feed models.
            self.audio = self.container.add_stream(
                "aac", rate=audio_rate, layout=self.layout, options={"aac_coder": "fast"}
            )
        self.audio_rate = audio_rate
        self.frames = 0

    def add_frame(self, frame) -> None:
        # Number frames from 0 in the encoder's time base. (pts=None is not "let the encoder number
        # them": PyAV then stamps every frame alike and the clip lasts one frame's time.)
        frame.pts = self.frames
        frame.time_base = self.video.codec_context.time_base
        self.frames += 1
        for packet in self.video.encode(frame):
            self.container.mux(packet)

    def add_audio(self, samples: np.ndarray) -> None:
        import av

        if self.audio is None or samples.shape[1] == 0:
            return
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples, dtype=np.float32), format="fltp", layout=self.layout
        )
        frame.sample_rate = self.audio_rate
        frame.pts = 0
        for packet in self.audio.encode(frame):
            self.container.mux(packet)

    def close(self) -> None:
        for stream in (self.video, self.audio):
            if stream is not None:
                for packet in stream.encode():
                    self.container.mux(packet)
        self.container.close()
        publish(self.tmp, self.path)

    def abort(self) -> None:
        try:
            self.container.close()
        finally:
            self.tmp.unlink(missing_ok=True)


def _source_audio(path: Path) -> tuple[np.ndarray | None, int | None]:
    import av

    from graph.extract.audio import decode_audio

    with av.open(str(path)) as container:
        if not container.streams.audio:
            return None, None
        rate = container.streams.audio[0].codec_context.sample_rate
    track = decode_audio(path, rate)
    return (None, None) if track is None else (track.samples, rate)


def cut_clips(
    path: str | Path, boundaries: list[int], fps: float, clip_dir: str | Path, options: ExtractOptions
) -> list[Path]:
    """Write one clip per scene (``boundaries`` in frames, ``[0, cut_1, ..., n]``); returns the paths.

    Each clip is written to a hidden temporary file and renamed when complete.
    """
    import av

    path, clip_dir = Path(path), Path(clip_dir)
    clip_dir.mkdir(parents=True, exist_ok=True)
    audio, audio_rate = _source_audio(path)
    channels = 1 if audio is None else audio.shape[0]
    paths = [clip_dir / scene_clip_name(i + 1) for i in range(len(boundaries) - 1)]
    writer: _ClipWriter | None = None
    scene = -1
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO" if options.decode_threads != 1 else "SLICE"
            rate = stream.average_rate
            for index, frame in enumerate(container.decode(stream)):
                if index >= boundaries[-1]:
                    break
                while index >= boundaries[scene + 1]:
                    if writer is not None:
                        writer.close()
                    scene += 1
                    writer = _ClipWriter(
                        paths[scene], rate, frame.width, frame.height, audio_rate, channels, options
                    )
                    if audio is not None and audio_rate:
                        a0 = round(boundaries[scene] / fps * audio_rate)
                        a1 = round(boundaries[scene + 1] / fps * audio_rate)
                        writer.add_audio(audio[:, a0:a1])
                assert writer is not None
                writer.add_frame(frame)
        if writer is not None:
            writer.close()
            writer = None
    finally:
        if writer is not None:
            writer.abort()
    return paths
