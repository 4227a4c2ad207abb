"""The second built-in world (data/worlds/contrary.yaml) and the config options it needs: state-valued
key rules, action rules aggregated by target, aliased feature keys and paraphrased option texts; the
rule-level rules.json; and the default worlds' files left byte for byte as they were."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from graph.ckg.score import load_ground_truth
from karma.core.events import parse_event_id
from karma.core.features import resolve_feature_key
from karma.synth import WorldConfigError, generate, load_world
from karma.synth.questions import option_text

REPO = Path(__file__).resolve().parents[2]
CONTRARY = REPO / "data" / "worlds" / "contrary.yaml"
TINY = REPO / "data" / "worlds" / "tiny.yaml"
# Words of karma's own vocabulary for changes: the event titles' verbs and the graph scorer's synonyms.
KARMA_WORDS = {
    "increases", "decreases", "increase", "decrease", "shifts", "rises", "rise", "grows", "falls", "drops",
    "louder", "quieter", "faster", "slower", "higher", "lower", "softer", "appears", "mode",
}  # fmt: skip


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contrary")
    generate(load_world(CONTRARY), out, videos=150, seed=4)
    return out


def _truth(world_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (world_dir / "question_truth.jsonl").read_text().splitlines()]


def _scenes(world_dir: Path, video_id: str) -> dict:
    return json.loads((world_dir / f"{video_id}_causal_features.json").read_text())["Scenes"]


def test_state_effects_and_aggregated_causes_are_what_the_questions_ask(world_dir: Path) -> None:
    truth = _truth(world_dir)
    effects = {t["effect_event"] for t in truth}
    causes = {c for t in truth for c in t["cause_events"]}
    assert {"music:mode:is:minor", "music:mode:is:major"} <= effects
    assert not any("_to_" in e for e in effects | {e for t in truth for e in t["option_events"].values()})
    assert "visual:action:*->running" in causes
    assert not any(re.search(r"action:[a-z]+->", e) for t in truth for e in t["option_events"].values())
    # Read the features back (aliased keys) and check each answered state and shift against them.
    qa = {}
    for t in truth:
        if t["type"] == "counterfactual":
            continue
        video = t["video_id"]
        if video not in qa:
            qa[video] = json.loads((world_dir / f"{video}_qa.json").read_text())
        transition = qa[video][t["transition_index"]]
        scenes = _scenes(world_dir, video)
        past = scenes[transition["past_scene"]["name"].removesuffix(".mp4")]
        now = scenes[transition["current_scene"]["name"].removesuffix(".mp4")]
        if t["effect_event"].startswith("music:mode:is:"):
            assert now["Tonality"].split()[1] == t["effect_event"].rsplit(":", 1)[1]
        if "visual:action:*->running" in t["cause_events"]:
            assert now["Activities"][0]["label"] == "running" != past["Activities"][0]["label"]


def test_options_are_the_worlds_paraphrases_not_karmas_titles(world_dir: Path) -> None:
    world = load_world(CONTRARY)
    for t in _truth(world_dir)[:300]:
        video = t["video_id"]
        question = json.loads((world_dir / f"{video}_qa.json").read_text())[t["transition_index"]][
            "questions"
        ][t["question_index"]]
        for letter, event_id in t["option_events"].items():
            text = question["options"][letter]
            assert text != parse_event_id(event_id).title
            assert not set(re.findall(r"[a-z]+", text.lower())) & KARMA_WORDS, text
            assert text == option_text(world.option_texts, event_id)


def test_feature_keys_are_aliases_the_feature_table_resolves(world_dir: Path) -> None:
    world = load_world(CONTRARY)
    video = json.loads((world_dir / "world.json").read_text())["videos"]
    assert video == 150
    scene = next(
        iter(
            _scenes(
                world_dir, next(p.name for p in world_dir.glob("*_qa.json")).removesuffix("_qa.json")
            ).values()
        )
    )
    assert set(scene) == set(world.feature_keys.values())
    assert all(resolve_feature_key(spelling) == key for key, spelling in world.feature_keys.items())


def test_rules_json_states_each_rule_once_in_its_own_form(world_dir: Path) -> None:
    truth = load_ground_truth(world_dir / "rules.json")
    assert truth.format == "karma-rules/1" and truth.world == "contrary"
    assert [(r.id, r.cause, r.effect) for r in truth.rules] == [
        ("r0.up", "visual:brightness:up", "music:loudness:down"),
        ("r0.down", "visual:brightness:down", "music:loudness:up"),
        ("r1.up", "visual:motion:up", "music:tempo:down"),
        ("r1.down", "visual:motion:down", "music:tempo:up"),
        ("r2", "visual:contrast:up", "music:mode:is:minor"),
        ("r3", "visual:brightness:down", "music:mode:is:major"),
        ("r4", "visual:action:*->running", "music:tempo:down"),
        ("r5", "visual:object:appears:dog", "music:valence:down"),
    ]
    assert {p.kind for p in truth.non_causal} == {"common_trend"}
    # The edge-level ground truth agrees: the aggregated action rule is one edge, not one per source.
    edges = load_ground_truth(world_dir / "ground_truth.json").causal_edges
    assert {(e.cause, e.effect) for e in edges} == {(r.cause, r.effect) for r in truth.rules}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw["feature_keys"].update({"Brightness": "Lumos"}), "feature_keys.Brightness"),
        (lambda raw: raw["feature_keys"].update({"Glow": "glow"}), "not a canonical feature key"),
        (
            lambda raw: raw["rules"].append(
                {
                    "kind": "action",
                    "to": "jumping",
                    "effect": "tempo",
                    "direction": "up",
                    "shift": 5,
                    "probability": 0.5,
                }
            ),
            "mix form",
        ),
        (
            lambda raw: raw["rules"].append(
                {
                    "kind": "mode",
                    "cause": "motion",
                    "when": "up",
                    "direction": "major_to_minor",
                    "probability": 0.5,
                }
            ),
            "one convention",
        ),
        (lambda raw: raw["option_texts"].update({"loudness up": "x"}), "option_texts.loudness up"),
        (lambda raw: raw["rules"][2].update(state="dorian"), "rules.2.key_state.state"),
    ],
)
def test_invalid_new_options_name_the_field(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    raw = yaml.safe_load(CONTRARY.read_text())
    change(raw)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(WorldConfigError) as info:
        load_world(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_default_worlds_files_are_unchanged(tmp_path: Path) -> None:
    # Digest of every file of the tiny world (300 videos, seed 3) as the generator wrote it before
    # key_state rules, action forms, feature_keys, option_texts and rules.json existed.
    generate(load_world(TINY), tmp_path, videos=300, seed=3)
    digest = hashlib.sha256()
    for path in sorted(tmp_path.iterdir()):
        if path.name != "rules.json":
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    assert digest.hexdigest() == "203e8287739c1c9835470fb1203b12e857e28d9bd5e476785cef16c016232620"
    assert load_ground_truth(tmp_path / "rules.json").rules


def test_a_counterfactual_state_is_never_overruled_by_a_change_that_did_happen(world_dir: Path) -> None:
    # "Had contrast risen, the key would be minor" is moot when brightness did fall (which leaves it major).
    world = load_world(CONTRARY)
    thresholds = {name: cfg.threshold for name, cfg in world.visual.items()}
    asked = 0
    for t in _truth(world_dir):
        if t["type"] != "counterfactual" or not t["effect_event"].startswith("music:mode:is:"):
            continue
        asked += 1
        transition = json.loads((world_dir / f"{t['video_id']}_qa.json").read_text())[t["transition_index"]]
        scenes = _scenes(world_dir, t["video_id"])
        past = scenes[transition["past_scene"]["name"].removesuffix(".mp4")]
        now = scenes[transition["current_scene"]["name"].removesuffix(".mp4")]
        fell = now["Mean_Brightness"] - past["Mean_Brightness"] <= -thresholds["brightness"]
        rose = now["RMS_Contrast"] - past["RMS_Contrast"] >= thresholds["contrast"]
        assert not (t["effect_event"] == "music:mode:is:minor" and fell), t["question_id"]
        assert not (t["effect_event"] == "music:mode:is:major" and rose), t["question_id"]
    assert asked >= 10
