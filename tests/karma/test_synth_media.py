"""karma synth --media: real mp4 clips (decord-readable, with an audio stream) and a full video."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from karma.cli.main import app

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth_media") / "world"
    result = CliRunner().invoke(
        app,
        [
            "synth", "--world", str(TINY), "--out", str(out), "--videos", "1", "--seed", "5", "--media",
            "--width", "96", "--height", "64", "--fps", "12", "--scene-seconds", "0.6-1.0",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_clips_decode_with_decord_and_carry_audio(media_dir: Path) -> None:
    import av
    import decord
    import pyloudnorm

    (qa_path,) = media_dir.glob("*_qa.json")
    video_id = qa_path.name.removesuffix("_qa.json")
    scenes = json.loads((media_dir / f"{video_id}_causal_features.json").read_text())["Scenes"]
    clips = sorted((media_dir / "clips" / video_id).glob("scene_*.mp4"))
    assert [c.stem for c in clips] == sorted(scenes)
    total_frames = 0
    for clip in clips:
        reader = decord.VideoReader(str(clip))
        frames = reader.get_batch(list(range(len(reader)))).asnumpy()
        assert frames.shape[1:] == (64, 96, 3) and 7 <= len(reader) <= 12
        total_frames += len(reader)
        luma = frames.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
        features = scenes[clip.stem]
        # The pictures follow the scene's values (units of docs/synth.md).
        assert luma.mean() == pytest.approx(features["Brightness"], abs=6)
        assert luma.std(axis=(1, 2)).mean() == pytest.approx(features["Contrast"], abs=4)
        assert np.abs(np.diff(luma, axis=0)).mean() == pytest.approx(features["Motion"], abs=3)
        with av.open(str(clip)) as container:
            assert len(container.streams.audio) == 1
            audio = container.streams.audio[0]
            seconds = float(audio.duration * audio.time_base)
            assert seconds == pytest.approx(len(reader) / 12, abs=0.1)
            samples = np.concatenate([f.to_ndarray() for f in container.decode(audio=0)], axis=1)
            assert np.abs(samples).max() > 0.01  # tonal content, not silence
            samples = samples[:, : round(seconds * audio.rate)].T
            repeats = int(np.ceil(0.5 * audio.rate / len(samples)))  # BS.1770 gating needs 0.4 s
            loudness = pyloudnorm.Meter(audio.rate).integrated_loudness(np.tile(samples, (repeats, 1)))
            assert loudness == pytest.approx(features["Average Loudness (dB)"], abs=1.5)
    full = decord.VideoReader(str(media_dir / "videos" / f"{video_id}.mp4"))
    assert len(full) == total_frames
