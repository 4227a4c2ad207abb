"""Session fixtures for the extraction tests: media rendered once by karma's own generator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from karma.core.records import SceneFeatures
from karma.synth.media import MediaOptions, MediaResult, ScenePlan, render_scenes

# Ten scenes with spread-out values; keys cover majors and minors on several tonics.
KEYS = [
    "C major",
    "A minor",
    "G major",
    "E minor",
    "F# major",
    "D minor",
    "Bb major",
    "C# minor",
    "Eb major",
    "B minor",
]


@dataclass
class RenderedVideo:
    result: MediaResult
    truth: list[SceneFeatures]
    options: MediaOptions

    @property
    def video_path(self) -> Path:
        assert self.result.video_path is not None
        return Path(self.result.video_path)


def _scene_features(rng: np.random.Generator, n: int) -> list[SceneFeatures]:
    # Shuffled evenly spaced levels: every pair of scenes differs clearly in each variable.
    def levels(lo: float, hi: float) -> np.ndarray:
        return rng.permutation(np.linspace(lo, hi, n))

    brightness, contrast = levels(60, 190), levels(15, 40)
    saturation, motion = levels(40, 200), levels(1, 20)
    loudness, tempo = levels(-32, -10), levels(80, 150)
    return [
        SceneFeatures.model_validate(
            {
                "Brightness": round(float(brightness[i]), 2),
                "Contrast": round(float(contrast[i]), 2),
                "Saturation": round(float(saturation[i]), 2),
                "Motion": round(float(motion[i]), 2),
                "Average Loudness (dB)": round(float(loudness[i]), 2),
                "Key": KEYS[i % len(KEYS)],
                "Tempo (BPM)": round(float(tempo[i]), 1),
            }
        )
        for i in range(n)
    ]


@pytest.fixture(scope="session")
def rendered_video(tmp_path_factory: pytest.TempPathFactory) -> RenderedVideo:
    """A 10-scene concatenated video (about 20 s, 320x180) with its clips and true values."""
    rng = np.random.default_rng(7)
    truth = _scene_features(rng, len(KEYS))
    frames = rng.integers(40, 60, size=len(truth))
    plans = [
        ScenePlan(scene_id=f"scene_{i + 1:03d}", features=f, n_frames=int(n))
        for i, (f, n) in enumerate(zip(truth, frames, strict=True))
    ]
    options = MediaOptions(seed=3)
    result = render_scenes("synthExtract", plans, tmp_path_factory.mktemp("media"), options)
    return RenderedVideo(result=result, truth=truth, options=options)


@pytest.fixture(scope="session")
def extraction(rendered_video: RenderedVideo, tmp_path_factory: pytest.TempPathFactory):
    """``extract_video`` on the concatenated video, clips included (librosa compiles once here)."""
    from graph.extract import ExtractOptions, extract_video

    clip_dir = tmp_path_factory.mktemp("extracted_clips")
    return extract_video(rendered_video.video_path, ExtractOptions(), clip_dir=clip_dir)
