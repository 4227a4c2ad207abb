"""Frame sampling (decord) and audio masking (PyAV derived clips) on real mp4 files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.media import (
    AudioMode,
    FrameSampling,
    MediaError,
    derive_clip,
    probe,
    read_audio,
    sample_frames,
)


def _dominant_hz(audio: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(audio))
    return float(np.fft.rfftfreq(len(audio), 1 / rate)[spectrum.argmax()])


def test_sampling_by_count_and_by_rate_with_resolution_cap(clips_dir: Path):
    clip = clips_dir / "vidV" / "scene_001.mp4"
    by_count = sample_frames(clip, FrameSampling(num_frames=4, max_side=48))
    assert by_count.frames.shape == (4, 32, 48, 3) and by_count.frames.dtype == np.uint8
    assert by_count.indices.tolist() == [1, 4, 7, 10]  # segment centres of 12 frames
    by_rate = sample_frames(clip, FrameSampling(fps=3, max_side=None))
    assert by_rate.frames.shape == (3, 64, 96, 3)
    assert by_rate.indices.tolist() == [0, 4, 8]
    assert by_rate.sample_fps == pytest.approx(3.0)
    # the moving bar: later frames have more green columns than earlier ones
    green = (by_rate.frames[..., 1] > 150).sum(axis=(1, 2))
    assert green[0] < green[1] < green[2]


def test_original_audio_is_the_tone(clips_dir: Path):
    audio = read_audio(clips_dir / "vidV" / "scene_002.mp4", sample_rate=16_000)
    assert audio.ndim == 1 and len(audio) == 16_000  # trimmed to the stream's 1 s
    assert np.sqrt(np.mean(audio**2)) > 0.1
    assert _dominant_hz(audio, 16_000) == pytest.approx(660.0, abs=5)


@pytest.mark.parametrize("mode", [AudioMode.silence, AudioMode.remove])
def test_masked_clip_has_silent_or_no_audio_and_identical_frames(
    clips_dir: Path, tmp_path: Path, mode: AudioMode
):
    source = clips_dir / "vidV" / "scene_002.mp4"
    derived = derive_clip(source, mode, cache_dir=tmp_path)
    assert derived != source and derived.is_relative_to(tmp_path)
    info = probe(derived)
    audio = read_audio(derived)
    if mode == AudioMode.silence:
        assert info.has_audio and info.audio_rate == 44_100
        assert len(audio) == pytest.approx(16_000, abs=16) and np.abs(audio).max() == 0.0
    else:
        assert not info.has_audio and audio.size == 0
    sampling = FrameSampling(num_frames=12, max_side=None)
    assert np.array_equal(sample_frames(derived, sampling).frames, sample_frames(source, sampling).frames)
    assert info.frame_count == probe(source).frame_count


def test_derived_clips_are_cached_by_content(clips_dir: Path, tmp_path: Path):
    source = clips_dir / "vidV" / "scene_002.mp4"
    first = derive_clip(source, "silence", cache_dir=tmp_path)
    stamp = first.stat().st_mtime_ns
    assert derive_clip(source, "silence", cache_dir=tmp_path) == first
    assert first.stat().st_mtime_ns == stamp  # reused, not rewritten
    assert derive_clip(source, "remove", cache_dir=tmp_path) != first
    other = derive_clip(clips_dir / "vidV" / "scene_001.mp4", "silence", cache_dir=tmp_path)
    assert other != first
    assert derive_clip(source, "keep", cache_dir=tmp_path) == source


def test_missing_or_broken_clip_names_the_file(tmp_path: Path):
    with pytest.raises(MediaError, match=r"nope\.mp4"):
        probe(tmp_path / "nope.mp4")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    with pytest.raises(MediaError, match=r"broken\.mp4"):
        sample_frames(broken)
