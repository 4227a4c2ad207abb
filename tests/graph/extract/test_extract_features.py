"""Extracted features and cuts track the values the media were rendered from."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from graph.extract import TAGGED_KEYS, total_visual_intensity
from karma.core.records import (
    KEY_BRIGHTNESS,
    KEY_CONTRAST,
    KEY_KEY,
    KEY_LOUDNESS,
    KEY_MOTION,
    KEY_NOT_COMPUTED,
    KEY_SATURATION,
    KEY_TEMPO,
    KEY_VISUAL_INTENSITY,
    SceneRef,
    time_to_seconds,
)
from karma.synth.media import parse_key


def _column(extraction, key: str) -> list[float]:
    return [float(extraction.features[s.scene_id][key]) for s in extraction.scenes]


def test_detected_cuts_are_within_a_tenth_of_a_second_of_the_rendered_cuts(rendered_video, extraction):
    true_cuts = rendered_video.result.cut_times
    found = extraction.cut_times
    assert len(found) == len(true_cuts), (found, true_cuts)
    assert max(abs(a - b) for a, b in zip(found, true_cuts, strict=True)) <= 0.1


def test_visual_features_track_the_rendered_values(rendered_video, extraction):
    assert len(extraction.scenes) == len(rendered_video.truth)
    truth = rendered_video.truth
    for key, attr, tolerance in [
        (KEY_BRIGHTNESS, "brightness", 4.0),
        (KEY_CONTRAST, "contrast", 3.0),
        (KEY_SATURATION, "saturation", 8.0),
        (KEY_MOTION, "motion", 2.0),
    ]:
        found = _column(extraction, key)
        expected = [getattr(f, attr) for f in truth]
        rho = spearmanr(found, expected).statistic
        assert rho >= 0.9, (key, rho, found, expected)
        assert np.max(np.abs(np.subtract(found, expected))) <= tolerance, (key, found, expected)


def test_loudness_tracks_the_rendered_lufs(rendered_video, extraction):
    found = _column(extraction, KEY_LOUDNESS)
    expected = [f.loudness_db for f in rendered_video.truth]
    assert spearmanr(found, expected).statistic >= 0.9, (found, expected)
    assert np.max(np.abs(np.subtract(found, expected))) <= 2.0, (found, expected)


def test_key_is_found_on_at_least_ninety_percent_of_tonal_scenes(rendered_video, extraction):
    found = [parse_key(extraction.features[s.scene_id].get(KEY_KEY)) for s in extraction.scenes]
    expected = [parse_key(f.key) for f in rendered_video.truth]
    correct = sum(a == b for a, b in zip(found, expected, strict=True))
    assert correct / len(expected) >= 0.9, list(zip(found, expected, strict=True))


def test_tempo_is_estimated_in_a_plausible_range(extraction):
    tempos = _column(extraction, KEY_TEMPO)
    assert all(40 <= t <= 240 for t in tempos), tempos


def test_feature_file_has_the_published_shape_and_says_what_was_not_computed(extraction, tmp_path):
    from karma.data import load_features_file

    path = tmp_path / "synthExtract_causal_features.json"
    path.write_text(json.dumps(extraction.features_document()))
    loaded = load_features_file(path)
    assert loaded.features is not None
    assert [p for p in loaded.problems if p.severity == "error"] == []
    assert sorted(loaded.features.scenes) == [s.scene_id for s in extraction.scenes]
    for scene in extraction.features.values():
        assert list(scene)[:7] == [
            KEY_BRIGHTNESS,
            KEY_VISUAL_INTENSITY,
            KEY_MOTION,
            KEY_SATURATION,
            KEY_CONTRAST,
            KEY_LOUDNESS,
            KEY_KEY,
        ]
        # No tagger ran: the tagged keys are absent and declared, never invented.
        assert all(key not in scene for key in TAGGED_KEYS)
        assert set(TAGGED_KEYS) <= set(scene[KEY_NOT_COMPUTED])
        expected_tvi = total_visual_intensity(scene[KEY_MOTION], scene[KEY_CONTRAST], scene[KEY_SATURATION])
        assert scene[KEY_VISUAL_INTENSITY] == pytest.approx(expected_tvi, abs=0.02)


def test_transitions_are_qa_compatible_and_share_boundaries(extraction):
    transitions = extraction.transitions_document()
    assert len(transitions) == len(extraction.scenes) - 1
    for i, transition in enumerate(transitions):
        past = SceneRef.model_validate(transition["past_scene"])
        current = SceneRef.model_validate(transition["current_scene"])
        assert past.name == f"scene_{i + 1:03d}.mp4"
        assert current.name == f"scene_{i + 2:03d}.mp4"
        assert past.end_time == current.start_time
    assert time_to_seconds(transitions[0]["past_scene"]["start_time"]) == 0.0


def test_clips_are_frame_accurate_and_carry_audio(extraction, rendered_video):
    import av
    import decord

    assert len(extraction.clips) == len(extraction.scenes)
    for span, clip, truth in zip(extraction.scenes, extraction.clips, rendered_video.truth, strict=True):
        reader = decord.VideoReader(clip)
        assert len(reader) == span.end_frame - span.start_frame
        middle = reader[len(reader) // 2].asnumpy().astype(np.float32) @ np.array([0.299, 0.587, 0.114])
        assert abs(float(middle.mean()) - truth.brightness) <= 5.0
        with av.open(clip) as container:
            assert container.streams.audio, clip
            audio_s = float(container.streams.audio[0].duration * container.streams.audio[0].time_base)
        assert audio_s == pytest.approx(len(reader) / rendered_video.options.fps, abs=0.1)


def test_total_visual_intensity_is_the_documented_formula():
    assert total_visual_intensity(10.0, 20.0, 255.0) == pytest.approx(0.5 * 10 + 0.3 * 20 + 0.2 * 100)
    assert total_visual_intensity(0.0, 0.0, 0.0) == 0.0


@pytest.mark.parametrize(
    ("options", "per_scene"),
    [({"frames_per_scene": 2}, {2}), ({"sample_rate_hz": 0.1}, {0, 1})],
)
def test_sampling_modes_give_every_scene_its_frame_pairs(rendered_video, options, per_scene):
    from graph.extract import ExtractOptions, scan_video

    scan = scan_video(rendered_video.video_path, ExtractOptions(**options))
    counts = [sum(first <= s.index < end for s in scan.samples) for first, end in scan.scene_frames]
    assert len(counts) == len(rendered_video.truth)
    assert set(counts) <= per_scene and all(c >= 1 for c in counts), counts
