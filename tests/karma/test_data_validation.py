"""Impossible values are refused with an error naming file, record and field (karma/data/validation.py).

Fixtures are the published sample files (data/sample) with one value made impossible each; the
checks run through the real loaders and through ``karma graph build``, which must exit 2 instead
of building a graph from them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.data import DataValidationError, load_dataset
from karma.data.json_values import JsonReadError, read_json_values
from karma.data.validation import MAX_JSON_DEPTH, MAX_TEXT_CHARS, json_depth_exceeds

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
VIDEO = "synthVid001"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    for suffix in ("_qa.json", "_causal_features.json"):
        shutil.copy(SAMPLE / f"{VIDEO}{suffix}", tmp_path / f"{VIDEO}{suffix}")
    return tmp_path / f"{VIDEO}_qa.json", tmp_path / f"{VIDEO}_causal_features.json"


def _set_feature(path: Path, scene: str, key: str, text_value: str) -> None:
    # Written as text so NaN / Infinity / 1e308 reach the reader exactly as a foreign tool writes them.
    data = json.loads(path.read_text())
    data["Scenes"][scene][key] = "__VALUE__"
    path.write_text(json.dumps(data).replace('"__VALUE__"', text_value))


@pytest.mark.parametrize(
    ("key", "text_value", "reason"),
    [
        ("Brightness", "NaN", "not a finite number"),
        ("Brightness", "Infinity", "not a finite number"),
        ("Average Loudness (dB)", "-1e308", "outside the valid range"),
        ("Brightness", "1e308", "outside the valid range 0..255"),
        ("Brightness", "-3", "outside the valid range 0..255"),
        ("Brightness", "true", "boolean, not a number"),
        ("Brightness", "false", "boolean, not a number"),
    ],
)
def test_impossible_feature_values_are_errors(tmp_path: Path, key: str, text_value: str, reason: str) -> None:
    _, features = _copy(tmp_path)
    _set_feature(features, "scene_002", key, text_value)
    with pytest.raises(DataValidationError) as caught:
        load_dataset(tmp_path)
    assert "scene scene_002" in str(caught.value) and key in str(caught.value)
    lenient = load_dataset(tmp_path, lenient=True)
    warning = [p for p in lenient.problems if p.field == key and p.scene == "scene_002"]
    assert warning and reason in warning[0].reason and "dropped" in warning[0].reason
    assert lenient.questions_removed_for_features > 0  # the questions that needed it left, counted
    scene = lenient.features[VIDEO].scenes["scene_002"]
    assert scene.model_dump(by_alias=True).get(key) is None


def test_graph_build_refuses_nan_features(tmp_path: Path) -> None:
    _, features = _copy(tmp_path)
    _set_feature(features, "scene_002", "Brightness", "NaN")
    result = CliRunner().invoke(
        app, ["graph", "build", "--data", str(tmp_path), "--out", str(tmp_path / "g")]
    )
    assert result.exit_code == 2, result.output
    assert "field Brightness" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "g").exists()


def test_scene_starting_after_its_end_is_an_error(tmp_path: Path) -> None:
    qa, _ = _copy(tmp_path)
    data = json.loads(qa.read_text())
    data[0]["current_scene"]["start_time"] = "00:00:09.000"  # ends at 00:00:07.404
    qa.write_text(json.dumps(data))
    dataset = load_dataset(tmp_path, lenient=True)
    [problem] = [p for p in dataset.problems if p.field == "current_scene.end_time"]
    assert problem.severity == "error" and problem.transition == 0
    assert "is not before end_time" in problem.reason


def test_oversize_question_text_is_an_error(tmp_path: Path) -> None:
    qa, _ = _copy(tmp_path)
    data = json.loads(qa.read_text())
    data[0]["questions"][1]["question"] = "why " * (5_000_000 // 4)  # 5 MB
    data[0]["questions"][2]["options"]["b"] = "x" * (MAX_TEXT_CHARS + 1)
    qa.write_text(json.dumps(data))
    dataset = load_dataset(tmp_path, lenient=True)
    fields = {(p.question, p.field) for p in dataset.problems if "exceeds the limit" in p.reason}
    assert fields == {(1, "question"), (2, "options.b")}
    assert all(len(q.question) <= MAX_TEXT_CHARS for t in dataset.transitions for q in t.questions)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 200_000])
def test_deep_nesting_is_refused_without_recursion_error(tmp_path: Path, depth: int) -> None:
    path = tmp_path / f"{VIDEO}_qa.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(JsonReadError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        read_json_values(path)
    assert json_depth_exceeds([[[]]], limit=2) and not json_depth_exceeds([[[]]], limit=3)


def test_the_published_sample_passes_every_check() -> None:
    dataset = load_dataset(SAMPLE)
    assert dataset.transitions and not dataset.errors


def test_records_refuse_booleans_where_numbers_are_meant() -> None:
    # pydantic's lax float reads true as 1.0; the records refuse it and still take ints and floats.
    from pydantic import ValidationError

    from karma.core.records import LabelScore, SceneFeatures

    for bad in ({"Brightness": True}, {"Motion": False}, {"Moods": [{"label": "calm", "score": True}]}):
        with pytest.raises(ValidationError, match="boolean, not a number"):
            SceneFeatures.model_validate(bad)
    with pytest.raises(ValidationError, match="boolean"):
        LabelScore(label="calm", score=True)  # type: ignore[arg-type]
    scene = SceneFeatures.model_validate(
        {"Brightness": 120, "Motion": 2.5, "Moods": [{"label": "calm", "score": 1}]}
    )
    assert scene.brightness == 120.0 and scene.motion == 2.5 and scene.moods and scene.moods[0].score == 1.0


def test_boolean_tagger_score_is_an_error(tmp_path: Path) -> None:
    _, features = _copy(tmp_path)
    _set_feature(features, "scene_002", "Moods", '[{"label": "calm", "score": true}]')
    with pytest.raises(DataValidationError) as caught:
        load_dataset(tmp_path)
    assert "scene scene_002" in str(caught.value) and "Moods" in str(caught.value)
    lenient = load_dataset(tmp_path, lenient=True)
    warning = [p for p in lenient.problems if p.field == "Moods" and p.scene == "scene_002"]
    assert warning and "boolean, not a number" in warning[0].reason and "dropped" in warning[0].reason
    assert lenient.features[VIDEO].scenes["scene_002"].moods is None
    assert lenient.features[VIDEO].scenes["scene_001"].brightness is not None  # the rest kept
