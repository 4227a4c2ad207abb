"""End to end: ``karma synth`` media (helper-generated world) -> ``karma extract`` recovers the values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from graph.extract import ExtractOptions, extract_many
from karma.core.records import KEY_BRIGHTNESS, KEY_KEY, KEY_LOUDNESS, KEY_MOTION, time_to_seconds
from karma.synth.media import parse_key

REPO = Path(__file__).resolve().parents[3]


def test_extraction_recovers_a_synthetic_world(tmp_path):
    from karma.synth import generate, load_world

    world_dir = tmp_path / "world"
    generate(load_world(REPO / "data" / "worlds" / "tiny.yaml"), world_dir, videos=2, seed=5, media=True)
    videos = sorted((world_dir / "videos").glob("*.mp4"))
    assert len(videos) == 2
    out = tmp_path / "extracted"
    outcomes = extract_many(videos, out, ExtractOptions(clips="none"), workers=1)
    assert [o.status for o in outcomes] == ["done", "done"]

    pairs: dict[str, list[tuple[object, object]]] = {
        KEY_BRIGHTNESS: [],
        KEY_MOTION: [],
        KEY_LOUDNESS: [],
        KEY_KEY: [],
    }
    for video in videos:
        truth = json.loads((world_dir / f"{video.stem}_causal_features.json").read_text())["Scenes"]
        found = json.loads((out / f"{video.stem}_causal_features.json").read_text())["Scenes"]
        assert sorted(found) == sorted(truth)
        for scene_id, values in truth.items():
            for key, column in pairs.items():
                column.append((values[key], found[scene_id][key]))
        # Detected cuts fall within 0.1 s of the scene starts in the generated QA file.
        qa = json.loads((world_dir / f"{video.stem}_qa.json").read_text())
        true_cuts = sorted({time_to_seconds(t["current_scene"]["start_time"]) for t in qa})
        transitions = json.loads((out / f"{video.stem}_transitions.json").read_text())
        found_cuts = [time_to_seconds(t["current_scene"]["start_time"]) for t in transitions]
        assert len(found_cuts) == len(true_cuts)
        assert np.max(np.abs(np.subtract(found_cuts, true_cuts))) <= 0.1

    for key in (KEY_BRIGHTNESS, KEY_MOTION, KEY_LOUDNESS):
        expected, found = zip(*pairs[key], strict=True)
        assert spearmanr(expected, found).statistic >= 0.9, (key, expected, found)
    keys_right = [parse_key(a) == parse_key(b) for a, b in pairs[KEY_KEY]]
    assert sum(keys_right) / len(keys_right) >= 0.9, pairs[KEY_KEY]
