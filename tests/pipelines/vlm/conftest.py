"""Real mp4 scene clips for the VLM tests, written with PyAV: coloured frames and a stereo tone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from karma.records import Question, SceneRef, Transition

CLIP_FPS = 12
CLIP_FRAMES = 12
CLIP_SIZE = (96, 64)
TONE_RATE = 44_100


def write_clip(path: Path, *, tone_hz: float, shade: int) -> Path:
    """One second of H.264 video (a moving bar over a tinted background) with an AAC stereo tone."""
    import av

    width, height = CLIP_SIZE
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        video = out.add_stream("libx264", rate=CLIP_FPS)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.options = {"preset": "ultrafast"}
        audio = out.add_stream("aac", rate=TONE_RATE, layout="stereo")
        for i in range(CLIP_FRAMES):
            image = np.full((height, width, 3), shade, np.uint8)
            image[:, : (i + 1) * width // CLIP_FRAMES, 1] = 220
            for packet in video.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                out.mux(packet)
        for packet in video.encode(None):
            out.mux(packet)
        total = CLIP_FRAMES * TONE_RATE // CLIP_FPS
        tone = (0.5 * np.sin(2 * np.pi * tone_hz * np.arange(total) / TONE_RATE)).astype(np.float32)
        for start in range(0, total, 1024):
            chunk = np.ascontiguousarray(np.stack([tone[start : start + 1024]] * 2))
            frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
            frame.sample_rate, frame.pts = TONE_RATE, start
            for packet in audio.encode(frame):
                out.mux(packet)
        for packet in audio.encode(None):
            out.mux(packet)
    return path


@pytest.fixture(scope="session")
def clips_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<clips>/vidV/scene_001.mp4`` and ``scene_002.mp4`` (different tones and tints)."""
    root = tmp_path_factory.mktemp("clips")
    write_clip(root / "vidV" / "scene_001.mp4", tone_hz=330.0, shade=40)
    write_clip(root / "vidV" / "scene_002.mp4", tone_hz=660.0, shade=160)
    return root


def make_transition(qtype: str) -> Transition:
    return Transition(
        video_id="vidV",
        index=0,
        past_scene=SceneRef(name="scene_001.mp4", start_time="00:00:00.000", end_time="00:00:01.000"),
        current_scene=SceneRef(name="scene_002.mp4", start_time="00:00:01.000", end_time="00:00:02.000"),
        questions=[
            Question(
                type=qtype,
                question="How does the music change when the picture brightens?",
                options={"a": "louder", "b": "quieter", "c": "higher pitch", "d": "no change"},
                answer="c",
                index=0,
            )
        ],
    )


@pytest.fixture
def transition_factory():
    return make_transition
