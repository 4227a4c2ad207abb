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
from karma.core.media_write import Mp4Writer


def scene_clip_name(number: int) -> str:
    """``scene_001.mp4`` for scene number 1 (three digits, as published)."""
    return f"scene_{number:03d}.mp4"


def clip_writer(
    path: Path, fps, width: int, height: int, audio_rate: int | None, channels: int, options: ExtractOptions
) -> Mp4Writer:
    """An open writer for one clip: H.264 at the source's rate and size, AAC at the source's audio
    rate when it has audio (``cut_clips`` here and ``graph.extract.qa_clips.cut_spans``)."""
    writer = Mp4Writer(path)
    writer.add_video(
        fps,
        width,
        height,
        options={"crf": str(options.clip_crf), "preset": options.clip_preset},
        threads=max(1, options.decode_threads),
    )
    if audio_rate:
        # FFmpeg's "fast" AAC coder: about half the CPU of the default two-loop search (which was
        # the largest single cost of cutting clips) at the same bitrate; the clips feed models.
        writer.add_audio(audio_rate, "mono" if channels == 1 else "stereo", options={"aac_coder": "fast"})
    return writer


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
    writer: Mp4Writer | None = None
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
                    writer = clip_writer(
                        paths[scene], rate, frame.width, frame.height, audio_rate, channels, options
                    )
                    if audio is not None and audio_rate:
                        a0 = round(boundaries[scene] / fps * audio_rate)
                        a1 = round(boundaries[scene + 1] / fps * audio_rate)
                        writer.write_audio(audio[:, a0:a1])
                assert writer is not None
                writer.write_frame(frame)
        if writer is not None:
            writer.close()
            writer = None
    finally:
        if writer is not None:
            writer.abort()
    return paths
