"""``karma qa make``: questions for videos nobody wrote questions for, checked against a world's truth.

The worlds are karma's own (``karma synth``), so every answer can be checked against what the world
recorded (its feature files and thresholds) and its true rules (``ground_truth.json``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graph import detect_events, video_folds
from karma.cli.main import app
from karma.core.records import SceneFeatures
from karma.qa import AnswerBiasError, QaMakeConfig, make_qa

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"
BASELINES = ("most_frequent_letter", "longest_option", "word_overlap")
# What karma extract measures as the synthesizer rendered it (tests/graph/extract/test_extract_synth.py
# checks brightness, motion, loudness and key; contrast, saturation and their composite follow). The
# extractor's tempo, valence and arousal are its own audio estimates, not the world's latent values.
RECOVERED = "brightness,contrast,saturation,motion,visual_intensity,loudness,mode"
runner = CliRunner()


def _world(
    out: Path, videos: int, seed: int, *, media: bool = False, scenes: tuple[int, int] = (3, 5)
) -> Path:
    from karma.synth import generate, load_world

    world = load_world(TINY)
    world = world.model_copy(
        update={
            "scenes_per_video": world.scenes_per_video.model_copy(update={"min": scenes[0], "max": scenes[1]})
        }
    )
    generate(world, out, videos=videos, seed=seed, media=media)
    return out


def _features_only(world: Path, out: Path) -> Path:
    """A researcher's folder: scene features, no questions."""
    out.mkdir()
    for path in world.glob("*_causal_features.json"):
        shutil.copy(path, out / path.name)
    return out


@pytest.fixture(scope="module")
def big_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 200-video tiny world (features and truth, no media)."""
    return _world(tmp_path_factory.mktemp("big") / "world", 200, seed=11)


@pytest.fixture(scope="module")
def big_made(big_world: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Questions made for the 200-video world from its features alone, one graph per fold."""
    root = tmp_path_factory.mktemp("bigqa")
    data = _features_only(big_world, root / "features")
    out = root / "qa"
    result = runner.invoke(app, ["qa", "make", "--data", str(data), "--out", str(out), "--seed", "3"])
    assert result.exit_code == 0, result.output
    return out


def _grounding(qa: Path) -> list[dict]:
    return [json.loads(line) for line in (qa / "question_grounding.jsonl").read_text().splitlines()]


def _recorded_events(world: Path, qa: Path, item: dict) -> set[str]:
    """The changes the world recorded across the item's transition: its own feature values compared
    with its own thresholds (world.json), not the values an extractor measured."""
    thresholds = json.loads((world / "world.json").read_text())["thresholds"]
    scenes = json.loads((world / f"{item['video_id']}_causal_features.json").read_text())["Scenes"]
    transition = json.loads((qa / f"{item['video_id']}_qa.json").read_text())[item["transition_index"]]

    def scene(ref: dict | str) -> SceneFeatures:
        name = ref if isinstance(ref, str) else ref["name"]
        return SceneFeatures.model_validate(scenes[name.removesuffix(".mp4")])

    events = detect_events(
        scene(transition["past_scene"]),
        scene(transition["current_scene"]),
        thresholds,
        state_variables=(),
        aggregate_variables=("action",),
    )
    return {e.id for e in events}


def _true_effects(world: Path) -> dict[str, set[str]]:
    """Cause event -> its true effects; a pooled action shift ``*->Y`` has the effects of every ``X->Y``."""
    edges = json.loads((world / "ground_truth.json").read_text())["causal_edges"]
    effects: dict[str, set[str]] = {}
    for edge in edges:
        effects.setdefault(edge["cause"], set()).add(edge["effect"])
        if edge["cause"].startswith("visual:action:") and "->" in edge["cause"]:
            pooled = "visual:action:*->" + edge["cause"].rsplit("->", 1)[1]
            effects.setdefault(pooled, set()).add(edge["effect"])
    return effects


def _check_against_world(world: Path, qa: Path) -> tuple[int, int, int, int]:
    """(evidential items, those whose answer the world recorded, rule items on a true rule, those of
    them whose answer is a true effect of the asked change and whose distractors are not)."""
    truth = _true_effects(world)
    evidential = matched = on_true_rule = agree = 0
    for item in _grounding(qa):
        if item["type"] == "evidential":
            evidential += 1
            matched += item["answer_event"] in _recorded_events(world, qa, item)
            continue
        assert item["grounding"] == "rule" and item["fact"].endswith("|causes")
        effects = truth.get(item["cause_events"][0], set())
        if item["effect_event"] not in effects:
            continue  # the graph's rule is not one of the world's
        on_true_rule += 1
        distractors = [e for letter, e in item["option_events"].items() if letter != item["answer"]]
        agree += item["answer_event"] in effects and not any(e in effects for e in distractors)
    return evidential, matched, on_true_rule, agree


def test_whole_path_on_raw_synth_videos(tmp_path: Path, big_world: Path) -> None:
    """synth --media mp4s -> karma extract -> karma qa make (graph of another collection) -> validate."""
    world = _world(tmp_path / "world", 5, seed=5, media=True, scenes=(5, 6))
    assert {p.suffix for p in (world / "videos").iterdir()} == {".mp4"}  # raw videos, nothing else
    extracted = tmp_path / "extracted"
    result = runner.invoke(
        app,
        [
            "extract",
            str(world / "videos"),
            "--out",
            str(extracted),
            "--clips",
            "none",
            "-j",
            "1",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    graph_dir = tmp_path / "graph"
    result = runner.invoke(app, ["graph", "build", "--data", str(big_world), "--out", str(graph_dir)])
    assert result.exit_code == 0, result.output
    qa = tmp_path / "qa"
    result = runner.invoke(
        app,
        [
            "qa",
            "make",
            "--data",
            str(extracted),
            "--out",
            str(qa),
            "--graph",
            str(graph_dir),
            "--variables",
            RECOVERED,
        ],
    )
    assert result.exit_code == 0, result.output

    result = runner.invoke(app, ["data", "validate", str(qa)])
    assert result.exit_code == 0, result.output
    assert "errors: 0, warnings: 0" in result.output
    items = _grounding(qa)
    types = {item["type"] for item in items}
    assert types == {"evidential", "predictive", "counterfactual"}
    # Scenes keep the extractor's times, as the published files hold them.
    first = json.loads(next(qa.glob("*_qa.json")).read_text())[0]
    assert set(first) == {"current_scene", "past_scene", "questions"}
    assert set(first["past_scene"]) == {"name", "start_time", "end_time"}
    assert {q["type"] for q in first["questions"]} <= {"Evidence Reasoning", "Predictive", "Counterfactual"}

    evidential, matched, on_true_rule, agree = _check_against_world(world, qa)
    assert evidential >= 4
    assert matched == evidential
    assert on_true_rule >= 6
    assert agree >= 0.95 * on_true_rule
    manifest = json.loads((qa / "qa_make.json").read_text())
    assert manifest["summary"]["graphs"]["given"]["name"] == "graph"


def test_a_200_video_world_answers_by_its_rules_and_not_by_form(big_world: Path, big_made: Path) -> None:
    stats = runner.invoke(app, ["data", "stats", str(big_made), "--json"])
    assert stats.exit_code == 0, stats.output
    numbers = json.loads(stats.output)
    assert numbers["questions"] >= 900
    for scope in [numbers["baselines"], *numbers["baselines_per_type"].values()]:
        for name in BASELINES:
            assert 0.20 <= scope[name] <= 0.30, (name, scope)
    evidential, matched, on_true_rule, agree = _check_against_world(big_world, big_made)
    assert matched == evidential > 300
    assert agree >= 0.95 * on_true_rule and on_true_rule >= 0.9 * 2 * evidential


def test_no_question_rests_on_a_rule_learned_from_its_own_video(big_made: Path) -> None:
    items = _grounding(big_made)
    data = big_made.parent / "features"  # every video read, asked about or not
    videos = sorted(p.name.removesuffix("_causal_features.json") for p in data.glob("*_causal_features.json"))
    assert len(videos) == 200
    # The fold graphs of karma eval over the same videos: k = 5, seed 0.
    folds = [sorted(f) for f in video_folds(videos, 5, 0)]
    manifest = json.loads((big_made / "qa_make.json").read_text())
    assert sorted(manifest["summary"]["graphs"]) == [f"fold{i}" for i in range(5)]
    for item in items:
        assert item["graph_key"].startswith("fold")
        assert item["video_id"] in folds[int(item["graph_key"].removeprefix("fold"))]
        assert item["graph_hash"] == manifest["summary"]["graphs"][item["graph_key"]]["content_hash"]


def test_a_given_graph_built_from_the_video_grounds_none_of_its_questions(tmp_path: Path) -> None:
    world = _world(tmp_path / "world", 60, seed=2)
    graph_dir = tmp_path / "graph"
    build = ["graph", "build", "--data", str(world), "--out", str(graph_dir), "--folds", "2", "--fold", "0"]
    assert runner.invoke(app, build).exit_code == 0
    left_out = set(json.loads((graph_dir / "graph.json").read_text())["build_config"]["exclude_videos"])
    data = _features_only(world, tmp_path / "features")
    summary = make_qa(QaMakeConfig(data=data, out=tmp_path / "qa", graph=graph_dir, allow_bias=True))
    # The graph's evidence names the videos it was built from: none of them is asked about.
    assert set(summary.skipped_videos) and not set(summary.skipped_videos) & left_out
    assert all("built from this video" in why for why in summary.skipped_videos.values())
    asked = {p.name.removesuffix("_qa.json") for p in (tmp_path / "qa").glob("*_qa.json")}
    assert asked and asked <= left_out


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    world = _world(tmp_path / "world", 40, seed=4)
    data = _features_only(world, tmp_path / "features")
    outs = []
    for name, seed in (("one", 7), ("two", 7), ("three", 8)):
        out = tmp_path / name
        make_qa(QaMakeConfig(data=data, out=out, seed=seed, allow_bias=True))
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] == outs[1]
    assert len([n for n in outs[0] if n.endswith("_qa.json")]) >= 10
    qa_files = [n for n in outs[0] if n.endswith("_qa.json")]
    assert any(outs[0][n] != outs[2].get(n) for n in qa_files)  # the seed matters


def test_a_set_a_baseline_can_answer_is_refused_and_nothing_written(tmp_path: Path) -> None:
    world = _world(tmp_path / "world", 30, seed=6)
    data = _features_only(world, tmp_path / "features")
    out = tmp_path / "qa"
    with pytest.raises(AnswerBiasError, match=r"no-model baseline \w+ scores"):
        make_qa(QaMakeConfig(data=data, out=out, max_bias=0.1))
    assert not out.exists()
    result = runner.invoke(app, ["qa", "make", "--data", str(data), "--out", str(out), "--max-bias", "0.1"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "refusing to write" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(
        app, ["qa", "make", "--data", str(data), "--out", str(out), "--max-bias", "0.1", "--allow-bias"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "qa_make.json").read_text())["summary"]["bias_allowed"] is True


def test_bad_input_is_one_line_naming_the_file_record_and_field(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["qa", "make", "--data", str(empty), "--out", str(tmp_path / "qa")])
    assert result.exit_code == 2 and "no *_causal_features.json" in result.output
    world = _world(tmp_path / "world", 6, seed=1)
    data = _features_only(world, tmp_path / "features")
    video = sorted(data.glob("*_causal_features.json"))[0].name.removesuffix("_causal_features.json")
    (data / f"{video}_transitions.json").write_text(json.dumps([{"past_scene": "scene_001.mp4"}]))
    result = runner.invoke(
        app, ["qa", "make", "--data", str(data), "--out", str(tmp_path / "qa"), "--folds", "2"]
    )
    assert result.exit_code == 2, result.output
    assert f"{video}_transitions.json: transition 0: field current_scene is missing" in result.output
    assert result.output.count("\n") == 1
    result = runner.invoke(
        app, ["qa", "make", "--data", str(data), "--out", str(tmp_path / "qa"), "--variables", "brightnes"]
    )
    assert result.exit_code == 2 and "--variables: unknown brightnes" in result.output
