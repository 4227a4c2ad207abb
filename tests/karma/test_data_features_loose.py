"""Feature files as loose as the published ones: every loose form and every alias loads, a world
written with alias spellings builds the same CKG, and feature problems only cost LLM questions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graph import build_graph
from karma.cli.main import app
from karma.core.features import FEATURES, FeatureKind
from karma.data import DataValidationError, load_dataset, load_features_file
from karma.synth import generate, load_world

WORLDS = Path(__file__).resolve().parents[2] / "data" / "worlds"


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


def transition(past: int, current: int, n_questions: int = 3) -> dict[str, object]:
    types = ["Evidence Reasoning", "Predictive", "Counterfactual"]
    questions = [
        {
            "type": types[i % 3],
            "question": f"Question {i} about the change from scene {past} to scene {current}?",
            "options": {"a": "one", "b": "two", "c": "three", "d": "four"},
            "answer": "a",
            "explanation": "because",
        }
        for i in range(n_questions)
    ]
    return {
        "past_scene": f"scene_{past:03d}.mp4",
        "current_scene": f"scene_{current:03d}.mp4",
        "questions": questions,
    }


def test_every_loose_form_loads_with_its_inference(tmp_path: Path) -> None:
    doc = {
        "Scenes": {
            "scene_001": {
                "Moods": [{"label": "happy"}, {"label": "calm"}],  # no scores
                "Detected_Objects": {"person": 3, "car": 1},  # counts
                "Action": {"dancing": 0.8, "walking": 0.1},  # dict label -> score
            },
            "scene_002": {
                "Moods": ["sad", "gloomy"],  # strings
                "Detected_Objects": ["person", "guitar"],  # the canonical list of classes
                "Action": {"label": "running", "probability": 0.6},  # one object, another score key
            },
            "scene_003": {
                "Moods": {"label": "tense"},
                "Detected_Objects": {"person": 0.9},  # dict label -> score
                "Action": "jumping",
            },
        }
    }
    result = load_features_file(write(tmp_path / "v_causal_features.json", doc))
    assert result.features is not None and result.bad_fields == {}
    s1, s2, s3 = (result.features.scenes[f"scene_00{i}"] for i in (1, 2, 3))
    assert [(m.label, m.score) for m in s1.moods or []] == [("happy", None), ("calm", None)]
    assert [(o.label, o.count) for o in s1.detected_objects or []] == [("person", 3), ("car", 1)]  # type: ignore[union-attr]
    assert [(a.label, a.score) for a in s1.action or []] == [("dancing", 0.8), ("walking", 0.1)]
    assert [m.label for m in s2.moods or []] == ["sad", "gloomy"]
    assert s2.detected_objects == ["person", "guitar"]
    assert [(a.label, a.score) for a in s2.action or []] == [("running", 0.6)]
    assert [(m.label, m.score) for m in s3.moods or []] == [("tense", None)]
    assert [(o.label, o.score) for o in s3.detected_objects or []] == [("person", 0.9)]  # type: ignore[union-attr]
    assert [a.label for a in s3.action or []] == ["jumping"]
    inferred = {(p.scene, p.field) for p in result.problems if p.severity == "inferred"}
    assert {("scene_001", "Moods"), ("scene_001", "Detected_Objects"), ("scene_001", "Action")} <= inferred
    assert {("scene_002", "Moods"), ("scene_002", "Action"), ("scene_003", "Action")} <= inferred
    assert not [p for p in result.problems if p.severity != "inferred"]
    # Nothing invented on the way out: the published form has no scores where the file had none.
    assert s1.to_published()["Moods"] == [{"label": "happy"}, {"label": "calm"}]


def test_every_alias_in_the_table_loads_as_its_canonical_key(tmp_path: Path) -> None:
    numeric = [spec for spec in FEATURES if spec.kind is FeatureKind.number]
    scenes = {}
    expected = {}
    for i, spec in enumerate(numeric):
        for j, alias in enumerate(spec.aliases):
            name = f"scene_{100 * i + j + 1:03d}"
            value = (spec.minimum or 0) + 1.0
            scenes[name] = {alias: value}
            expected[name] = (spec.key, value)
    labels = [spec for spec in FEATURES if spec.kind in (FeatureKind.labels, FeatureKind.objects)]
    for i, spec in enumerate(labels):
        for j, alias in enumerate(spec.aliases):
            name = f"scene_{5000 + 100 * i + j:04d}"
            scenes[name] = {alias: [{"label": "x", "score": 0.5}]}
            expected[name] = (spec.key, None)
    others = [spec for spec in FEATURES if spec.kind in (FeatureKind.key, FeatureKind.names)]
    for i, spec in enumerate(others):
        for j, alias in enumerate(spec.aliases):
            name = f"scene_{7000 + 100 * i + j:04d}"
            scenes[name] = {alias: "A minor" if spec.kind is FeatureKind.key else ["Moods"]}
            expected[name] = (spec.key, scenes[name][alias])
    assert len(expected) == sum(len(spec.aliases) for spec in FEATURES)
    result = load_features_file(write(tmp_path / "v_causal_features.json", {"Scenes": scenes}))
    assert result.features is not None
    assert not [p for p in result.problems if p.severity != "inferred"]
    for name, (key, value) in expected.items():
        published = result.features.scenes[name].to_published()
        assert list(published) == [key], (name, published)
        if value is not None:
            assert published[key] == value


ALIASES = {
    "Brightness": ["brightness", "mean_brightness"],
    "Total_Visual_Intensity": ["visual intensity", "TotalVisualIntensity"],
    "Motion": ["motion", "MOTION"],
    "Saturation": ["saturation"],
    "Contrast": ["contrast"],
    "Average Loudness (dB)": ["Loudness", "loudness_db", "average_loudness"],
    "Key": ["key"],
    "Tempo (BPM)": ["Tempo", "BPM", "tempo_bpm"],
    "Valence": ["valence"],
    "Arousal": ["arousal"],
    "Moods": ["moods", "mood"],
    "Detected_Objects": ["objects", "detected objects"],
    "Action": ["actions", "action"],
}


def _alias_copy(src: Path, dst: Path) -> int:
    """Copy a world, rewriting every feature key to an alias (and moods to a label -> score dict)."""
    shutil.copytree(src, dst)
    renamed = 0
    for n, path in enumerate(sorted(dst.glob("*_causal_features.json"))):
        doc = json.loads(path.read_text())
        for scene in doc["Scenes"].values():
            for key in list(scene):
                spellings = ALIASES.get(key)
                value = scene.pop(key)
                if key == "Moods" and n % 2:
                    value = {item["label"]: item["score"] for item in value}
                new_key = spellings[n % len(spellings)] if spellings else key
                renamed += new_key != key
                scene[new_key] = value
        path.write_text(json.dumps(doc))
    return renamed


def test_world_with_alias_spellings_builds_the_same_graph(tmp_path: Path) -> None:
    world = tmp_path / "canonical"
    generate(load_world(WORLDS / "tiny.yaml"), world, videos=80, seed=11)
    assert _alias_copy(world, tmp_path / "aliases") > 1000
    canonical = load_dataset(world)
    aliased = load_dataset(tmp_path / "aliases")
    assert any("read as 'Tempo (BPM)'" in p.reason for p in aliased.problems)
    assert not aliased.errors and aliased.questions_kept == canonical.questions_kept
    first = build_graph(canonical.transitions, canonical.features)
    second = build_graph(aliased.transitions, aliased.features)
    assert len(first.edges) > 10
    assert first.content_hash() == second.content_hash()


def test_validate_warns_on_unknown_keys_and_empty_qa_files(tmp_path: Path) -> None:
    write(tmp_path / "v_qa.json", [transition(1, 2)])
    write(
        tmp_path / "v_causal_features.json",
        {"Scenes": {"scene_001": {"Brigthness": 3.0, "Glitter": 1}, "scene_002": {"Brightness": 9.0}}},
    )
    write(tmp_path / "w_qa.json", [])
    result = CliRunner().invoke(app, ["data", "validate", str(tmp_path), "--show-inferred"])
    out = " ".join(result.output.split())
    assert "field Brigthness: unknown feature key" in out and "(did you mean 'Brightness'?)" in out
    assert "field Glitter: unknown feature key" in out
    assert "w_qa.json: empty QA file" in out
    assert result.exit_code == 0, result.output  # warnings only


def _scene_problem_folder(tmp_path: Path) -> Path:
    write(tmp_path / "v_qa.json", [transition(1, 2), transition(2, 3), transition(3, 4)])
    write(
        tmp_path / "v_causal_features.json",
        {
            "Scenes": {
                "scene_001": {"Brightness": 10.0},
                "scene_002": {"Brightness": 20.0, "Moods": 7},  # unreadable field
                "scene_003": {"Brightness": 30.0},
                # scene_004 missing
            }
        },
    )
    return tmp_path


def test_feature_problems_never_remove_vlm_questions(tmp_path: Path) -> None:
    folder = _scene_problem_folder(tmp_path)
    vlm = load_dataset(folder, features_required=False)  # strict, and still nothing is rejected
    assert vlm.questions_kept == 9 and not vlm.errors and vlm.questions_removed_for_features == 0
    assert any(p.field == "Moods" and p.severity == "warning" for p in vlm.problems)
    # The graph is still built only from transitions whose features are all there.
    assert vlm.feature_gap_transitions == ["v/t000", "v/t001", "v/t002"] and vlm.graph_transitions() == []


def test_feature_problems_remove_llm_questions_with_a_located_error(tmp_path: Path) -> None:
    folder = _scene_problem_folder(tmp_path)
    with pytest.raises(DataValidationError) as info:
        load_dataset(folder)
    message = str(info.value)
    assert "v_causal_features.json, transition 0, scene scene_002, field Moods" in message
    assert "transition 2, field current_scene: scene_004 is not in v_causal_features.json" in message
    llm = load_dataset(folder, lenient=True)
    # t0 and t1 touch scene_002 (unreadable Moods), t2 needs the missing scene_004.
    assert llm.questions_kept == 0 and llm.questions_removed_for_features == 9
    assert llm.feature_bad_fields == {"v": {"scene_002": ["Moods"]}}
