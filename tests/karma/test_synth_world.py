"""World configs: loading YAML/JSON, clear errors, ground truth read off the rules, shared definitions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from karma.core.events import parse_event_id
from karma.synth import (
    WorldConfigError,
    build_ground_truth,
    load_world,
    moods_from_valence_arousal,
    resolve_world,
    total_visual_intensity,
)

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"
DEFAULT = REPO / "data" / "worlds" / "default.yaml"


def test_yaml_and_json_load_the_same_world(tmp_path: Path) -> None:
    world = load_world(TINY)
    as_json = tmp_path / "tiny.json"
    as_json.write_text(json.dumps(yaml.safe_load(TINY.read_text())))
    assert load_world(as_json) == world
    assert load_world(DEFAULT).videos == 2682 and load_world(DEFAULT).total_transitions == 12579


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda raw: raw["rules"].append(
                {"kind": "numeric", "cause": "glitter", "effect": "loudness", "strength": 1}
            ),
            "rules[9].cause",
        ),
        (
            lambda raw: raw["rules"].append(
                {
                    "kind": "action",
                    "to": "flying",
                    "effect": "tempo",
                    "direction": "up",
                    "shift": 5,
                    "probability": 0.5,
                }
            ),
            "rules[9].to",
        ),
        (lambda raw: raw["trends"][0].update(visual="brightness"), "also a rule cause"),
        (lambda raw: raw["visual"].pop("motion"), "visual.motion: missing"),
        (lambda raw: raw["music"]["loudness"].update(low=0, high=-10), "music.loudness"),
        (lambda raw: raw.update(colour="blue"), "colour"),
    ],
)
def test_invalid_world_names_file_and_field(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    raw = yaml.safe_load(TINY.read_text())
    change(raw)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(WorldConfigError) as info:
        load_world(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_unreadable_world_files(tmp_path: Path) -> None:
    with pytest.raises(WorldConfigError, match="cannot read"):
        load_world(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(WorldConfigError, match="not valid json"):
        load_world(broken)


def test_ground_truth_edges_follow_the_rules() -> None:
    world = load_world(TINY)
    truth = build_ground_truth(world)
    pairs = {(e.cause, e.effect) for e in truth.edges}
    # A positive numeric rule yields both directions.
    assert ("visual:brightness:up", "music:loudness:up") in pairs
    assert ("visual:brightness:down", "music:loudness:down") in pairs
    assert ("visual:brightness:up", "music:loudness:down") not in pairs
    # An action rule yields one edge per source label; a mode rule its flip.
    sources = {c for c, e in pairs if c.endswith("->running")}
    assert len(sources) == len(world.action.labels) - 1
    assert ("visual:brightness:down", "music:mode:major_to_minor") in pairs
    # Trends are non-causal pairs, never edges.
    assert {(p["a"], p["b"]) for p in truth.non_causal} == {
        ("visual:saturation:up", "music:tempo:up"),
        ("visual:saturation:down", "music:tempo:down"),
    }
    assert not {(p["a"], p["b"]) for p in truth.non_causal} & pairs
    for cause, effect in pairs:  # every id parses in the shared vocabulary
        assert parse_event_id(cause).modality == "visual" and parse_event_id(effect).modality == "music"


def test_unresolved_random_rules_must_be_resolved_first() -> None:
    raw = yaml.safe_load(TINY.read_text())
    raw["rules"][0].update(sign="random", strength=[0.5, 0.7])
    world = type(load_world(TINY)).model_validate(raw)
    with pytest.raises(ValueError, match="resolve_world"):
        build_ground_truth(world)
    resolved = resolve_world(world, np.random.default_rng(0))
    rule = resolved.rules[0]
    assert rule.sign in (1, -1) and 0.5 <= rule.strength <= 0.7  # type: ignore[union-attr,operator]


def test_shared_definitions() -> None:
    assert total_visual_intensity(10.0, 20.0, 127.5) == pytest.approx(5 + 6 + 10)
    arrays = total_visual_intensity(np.array([0.0, 2.0]), np.array([0.0, 0.0]), np.array([0.0, 0.0]))
    assert arrays.tolist() == [0.0, 1.0]
    happy = moods_from_valence_arousal(8.4, 6.0)
    assert happy[0]["label"] == "happy" and len(happy) == 3
    assert moods_from_valence_arousal(2.1, 3.5)[0]["label"] == "sad"
    assert moods_from_valence_arousal(6.9, 1.7)[0]["label"] == "calm"


def test_random_signs_world_gives_each_seed_its_own_graph(tmp_path: Path) -> None:
    from karma.synth import generate

    world = load_world(REPO / "data" / "worlds" / "random_signs.yaml")
    graphs = []
    for seed in (0, 1, 2):
        generate(world, tmp_path / str(seed), videos=3, seed=seed)
        ground = json.loads((tmp_path / str(seed) / "ground_truth.json").read_text())
        graphs.append({(e["cause"], e["effect"], e["strength"]) for e in ground["causal_edges"]})
    assert len({frozenset(g) for g in graphs}) == 3


def test_sparse_world_still_gives_every_transition_its_questions(tmp_path: Path) -> None:
    from karma.synth import WorldConfig, generate

    raw = yaml.safe_load(TINY.read_text())
    raw["music"] = {"loudness": raw["music"]["loudness"]}
    raw["rules"] = [r for r in raw["rules"] if r.get("effect") == "loudness" or r["kind"] == "mode"]
    raw["trends"] = []
    with pytest.raises(ValueError, match="at least two musical variables"):
        WorldConfig.model_validate(raw)
    # Few rules, causes often stuck at a bound: cuts are redrawn, stuck videos restarted.
    raw["music"]["tempo"] = yaml.safe_load(TINY.read_text())["music"]["tempo"]
    summary = generate(WorldConfig.model_validate(raw), tmp_path / "sparse", videos=200, seed=4)
    assert summary.questions == 3 * summary.transitions and summary.redraws > 0
