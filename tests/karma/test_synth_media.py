"""The media renderer: real mp4 whose measurable properties follow the scene variables."""

from __future__ import annotations

import json

import numpy as np
import pytest

from karma.core.records import SceneFeatures, seconds_to_time
from karma.synth.media import MediaOptions, parse_key, render_scene_clip, render_video

LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)
SCENE_TIMES = [(0.0, 1.25), (1.25, 2.0), (2.0, 3.5)]


def _scene(b: float, c: float, s: float, m: float, loud: float, key: str, tempo: float) -> dict:
    return {
        "Brightness": b,
        "Contrast": c,
        "Saturation": s,
        "Motion": m,
        "Average Loudness (dB)": loud,
        "Key": key,
        "Tempo (BPM)": tempo,
    }


def _write_video_files(folder, video_id: str, with_times: bool = True):
    def ref(i: int):
        name = f"scene_{i + 1:03d}.mp4"
        if not with_times:
            return name
        start, end = SCENE_TIMES[i]
        return {"name": name, "start_time": seconds_to_time(start), "end_time": seconds_to_time(end)}

    question = {
        "type": "Evidence Reasoning",
        "question": "Why does the music change?",
        "options": {"a": "louder", "b": "softer", "c": "faster", "d": "slower"},
        "answer": "a",
        "explanation": "synthetic",
    }
    qa = [{"current_scene": ref(i + 1), "past_scene": ref(i), "questions": [question]} for i in range(2)]
    features = {
        "Scenes": {
            "scene_001": _scene(80, 20, 60, 2, -28, "A minor", 90),
            "scene_002": _scene(150, 30, 160, 10, -18, "D major", 120),
            "scene_003": _scene(110, 25, 110, 5, -22, "F# minor", 140),
        }
    }
    qa_path = folder / f"{video_id}_qa.json"
    features_path = folder / f"{video_id}_causal_features.json"
    qa_path.write_text(json.dumps(qa))
    features_path.write_text(json.dumps(features))
    return qa_path, features_path


def _decode(path) -> tuple[np.ndarray, np.ndarray, int]:
    """All RGB frames (decord) and the stereo audio (PyAV, trimmed to the stream duration)."""
    import av
    import decord

    reader = decord.VideoReader(str(path))
    frames = reader.get_batch(list(range(len(reader)))).asnumpy()
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        rate = stream.codec_context.sample_rate
        audio = np.concatenate([f.to_ndarray() for f in container.decode(stream)], axis=1)
        audio = audio[:, : round(float(stream.duration * stream.time_base) * rate)]
    return frames, audio, rate


def test_render_video_writes_clips_and_a_concatenation_with_cuts_at_the_qa_times(tmp_path):
    qa_path, features_path = _write_video_files(tmp_path, "synthMedia")
    result = render_video(qa_path, features_path, tmp_path / "media", MediaOptions())
    assert result.video_id == "synthMedia"
    assert [c.scene_id for c in result.clips] == ["scene_001", "scene_002", "scene_003"]
    assert result.cut_times == pytest.approx([1.25, 2.0], abs=0.5 / 24)
    assert result.cut_times_hms() == ["00:00:01.250", "00:00:02.000"]
    total = 0
    for clip, (start, end) in zip(result.clips, SCENE_TIMES, strict=True):
        frames, audio, rate = _decode(clip.path)
        assert frames.shape == (clip.n_frames, 180, 320, 3)
        assert clip.n_frames == round(end * 24) - round(start * 24)
        assert audio.shape[0] == 2 and audio.shape[1] / rate == pytest.approx(clip.duration_s, abs=0.05)
        total += clip.n_frames
    frames, audio, rate = _decode(result.video_path)
    assert len(frames) == total
    assert audio.shape[1] / rate == pytest.approx(total / 24, abs=0.05)
    # The cut is a hard cut: the frame before and after it differ in mean luma by the scene values.
    cut = result.clips[1].n_frames + result.clips[0].n_frames
    before, after = (frames[i].astype(np.float32) @ LUMA for i in (cut - 1, cut))
    assert after.mean() - before.mean() == pytest.approx(110 - 150, abs=5)


def test_scenes_without_times_get_the_default_duration(tmp_path):
    qa_path, features_path = _write_video_files(tmp_path, "synthNoTimes", with_times=False)
    options = MediaOptions(default_scene_seconds=0.5, write_full_video=False)
    result = render_video(qa_path, features_path, tmp_path / "media", options)
    assert result.video_path is None
    assert [c.n_frames for c in result.clips] == [12, 12, 12]


def test_missing_scene_features_are_a_clear_error(tmp_path):
    qa_path, features_path = _write_video_files(tmp_path, "synthMissing")
    features = json.loads(features_path.read_text())
    del features["Scenes"]["scene_002"]
    features_path.write_text(json.dumps(features))
    with pytest.raises(ValueError, match=r"synthMissing_causal_features\.json.*scene_002"):
        render_video(qa_path, features_path, tmp_path / "media")


@pytest.mark.parametrize(
    ("values", "seconds"),
    [((60, 18, 200, 3, -30), 1.0), ((190, 35, 50, 20, -12), 1.0), ((128, 45, 120, 0, -20), 0.3)],
)
def test_rendered_clip_measures_like_its_features(tmp_path, values, seconds):
    import cv2
    import pyloudnorm

    brightness, contrast, saturation, motion, loudness = values
    features = SceneFeatures.model_validate(_scene(*values, key="E minor", tempo=100))
    clip = render_scene_clip(tmp_path / "clip.mp4", features, seconds)
    frames, audio, rate = _decode(clip.path)
    luma = frames.astype(np.float32) @ LUMA
    assert luma.mean() == pytest.approx(brightness, abs=3)
    assert luma.std(axis=(1, 2)).mean() == pytest.approx(contrast, abs=2)
    sat = np.mean([cv2.cvtColor(f, cv2.COLOR_RGB2HSV)[..., 1].mean() for f in frames])
    assert sat == pytest.approx(saturation, abs=6)
    assert np.abs(np.diff(luma, axis=0)).mean() == pytest.approx(motion, abs=1.5)
    data = audio.T.astype(np.float64)
    if len(data) < 0.45 * rate:  # pyloudnorm needs one 0.4 s block: measure a looped copy
        data = np.tile(data, (int(np.ceil(0.45 * rate / len(data))), 1))
    assert pyloudnorm.Meter(rate).integrated_loudness(data) == pytest.approx(loudness, abs=1.0)


def test_rendering_is_deterministic_per_seed(tmp_path):
    """Same seed -> same pictures and sound; another seed -> other pictures (hue, texture).

    Decoded content is compared, not bytes: x264 was seen to emit slightly different (equally
    valid) bitstreams for identical input frames when the test shares a process with others.
    """
    features = SceneFeatures.model_validate(_scene(100, 30, 100, 5, -20, "C major", 120))
    decoded = []
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        clip = render_scene_clip(tmp_path / f"{name}.mp4", features, 0.5, MediaOptions(seed=seed))
        decoded.append(_decode(clip.path))
    (frames_a, audio_a, _), (frames_b, audio_b, _), (frames_c, _, _) = decoded
    assert np.abs(frames_a.astype(np.int16) - frames_b).mean() < 0.5
    assert np.array_equal(audio_a, audio_b)
    assert np.abs(frames_a.astype(np.int16) - frames_c).mean() > 10


def test_parse_key_accepts_sharps_flats_and_rejects_garbage():
    assert parse_key("A minor") == (9, "minor")
    assert parse_key("Bb major") == (10, "major")
    assert parse_key("C# minor") == parse_key("Db minor") == (1, "minor")
    assert parse_key("B major") == (11, "major")
    assert parse_key("H major") is None
    assert parse_key("A dorian") is None
    assert parse_key(None) is None


@pytest.mark.parametrize("entry", ["clip", "video"])
def test_a_failed_render_leaves_no_clip_and_no_video_behind(tmp_path, monkeypatch, entry):
    """A render that fails after frames were written publishes nothing: no clip, no full video, no
    temporary file (the writers abort instead of closing)."""
    import karma.synth.media as media

    def broken_audio(*args, **kwargs):
        raise RuntimeError("synthesis failed")

    monkeypatch.setattr(media, "synthesize_audio", broken_audio)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="synthesis failed"):
        if entry == "clip":
            features = SceneFeatures.model_validate(_scene(100, 30, 100, 5, -20, "C major", 120))
            render_scene_clip(out / "clip.mp4", features, 0.5)
        else:
            qa_path, features_path = _write_video_files(tmp_path, "vid")
            render_video(qa_path, features_path, out)
    assert [p for p in out.rglob("*") if p.is_file()] == []
