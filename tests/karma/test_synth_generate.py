"""karma synth features-only generation: published formats, answer bias, rule-consistent answers,
planted non-causal structure, determinism."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from karma.core.events import parse_event_id
from karma.core.records import OPTION_LETTERS
from karma.data import load_dataset
from karma.data.baselines import baseline_accuracies
from karma.synth import generate, load_world

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"
DEFAULT = REPO / "data" / "worlds" / "default.yaml"

VISUAL_KEYS = {
    "brightness": "Brightness",
    "saturation": "Saturation",
    "contrast": "Contrast",
    "motion": "Motion",
    "visual_intensity": "Total_Visual_Intensity",
}
MUSIC_KEYS = {
    "loudness": "Average Loudness (dB)",
    "tempo": "Tempo (BPM)",
    "valence": "Valence",
    "arousal": "Arousal",
}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "world"
    summary = generate(load_world(TINY), out, videos=150, seed=7)
    assert summary.questions == 3 * summary.transitions > 300
    return out


def _events(past: dict, current: dict, thresholds: dict[str, float]) -> set[str]:
    """Change events recomputed from two published scene objects (independent of the generator)."""
    found: set[str] = set()
    for modality, keys in (("visual", VISUAL_KEYS), ("music", MUSIC_KEYS)):
        for variable, key in keys.items():
            delta = current[key] - past[key]
            if delta >= thresholds[variable]:
                found.add(f"{modality}:{variable}:up")
            elif delta <= -thresholds[variable]:
                found.add(f"{modality}:{variable}:down")
    mode_before, mode_after = past["Key"].split()[1], current["Key"].split()[1]
    if mode_before != mode_after:
        found.add(f"music:mode:{mode_before}_to_{mode_after}")
    action_before, action_after = past["Action"][0]["label"], current["Action"][0]["label"]
    if action_before != action_after:
        found.add(f"visual:action:{action_before}->{action_after}")
    objects_before = {o["label"] for o in past["Detected_Objects"]}
    for label in {o["label"] for o in current["Detected_Objects"]} - objects_before:
        found.add(f"visual:object:appears:{label}")
    return found


def _load(world_dir: Path) -> tuple[dict, list[dict], dict, dict]:
    ground = json.loads((world_dir / "ground_truth.json").read_text())
    truth = [json.loads(line) for line in (world_dir / "question_truth.jsonl").read_text().splitlines()]
    world = json.loads((world_dir / "world.json").read_text())
    qa = {p.name.removesuffix("_qa.json"): json.loads(p.read_text()) for p in world_dir.glob("*_qa.json")}
    return ground, truth, world, qa


def test_files_pass_strict_validation(world_dir: Path) -> None:
    dataset = load_dataset(world_dir)  # strict: raises on any error
    assert not dataset.errors
    assert dataset.questions_kept == 3 * len(dataset.transitions)
    assert set(dataset.features) == {t.video_id for t in dataset.transitions}
    for transition in dataset.transitions:
        assert [q.raw_type for q in transition.questions] == [
            "Evidence Reasoning",
            "Predictive",
            "Counterfactual",
        ]
        assert transition.past_scene.end_time == transition.current_scene.start_time
    from typer.testing import CliRunner

    from karma.cli.main import app

    result = CliRunner().invoke(app, ["data", "validate", str(world_dir)])
    assert result.exit_code == 0, result.output


def test_feature_values_in_documented_ranges(world_dir: Path) -> None:
    for path in world_dir.glob("*_causal_features.json"):
        scenes = json.loads(path.read_text())["Scenes"]
        for name, scene in scenes.items():
            assert name.startswith("scene_") and not name.endswith(".mp4")
            assert 0 <= scene["Brightness"] <= 255 and 0 <= scene["Saturation"] <= 255
            assert -40 <= scene["Average Loudness (dB)"] <= -6
            assert 60 <= scene["Tempo (BPM)"] <= 180
            assert 1 <= scene["Valence"] <= 9 and 1 <= scene["Arousal"] <= 9
            tonic, mode = scene["Key"].split()
            assert tonic in {"C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"}
            assert mode in {"major", "minor"}
            expected = 0.5 * scene["Motion"] + 0.3 * scene["Contrast"] + 0.2 * scene["Saturation"] / 2.55
            assert scene["Total_Visual_Intensity"] == pytest.approx(expected, abs=0.006)
            assert len(scene["Moods"]) == 3 and scene["Action"][0]["score"] > scene["Action"][1]["score"]


def test_answer_bias_baselines_near_chance(world_dir: Path) -> None:
    questions = [q for t in load_dataset(world_dir).transitions for q in t.questions]
    assert len(questions) > 300
    accuracies = baseline_accuracies(questions)
    for name in ("most_frequent_letter", "longest_option", "word_overlap"):
        assert abs(accuracies[name] - 0.25) <= 0.05, (name, accuracies)
    letters = Counter(q.answer for q in questions)
    assert max(letters.values()) - min(letters.values()) <= 2  # balanced in blocks of four
    # Question texts share no content word with any option, so overlap cannot point at the answer.
    stop = {"a", "an", "the", "of", "to", "in", "from", "into", "with", "and"}

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in stop and not w.isdigit()}

    for q in questions:
        asked = words(q.question)
        assert not any(asked & words(option) for option in q.options.values()), q
    assert len({q.question.split(",")[0] for q in questions}) >= 6  # several paraphrases per kind


def test_every_answer_follows_from_the_ground_truth_rules(world_dir: Path) -> None:
    ground, truth, world, qa = _load(world_dir)
    thresholds = world["thresholds"]
    edges = {(e["cause"], e["effect"]) for e in ground["causal_edges"]}
    effects_of: dict[str, set[str]] = {}
    causes_of: dict[str, set[str]] = {}
    for cause, effect in edges:
        effects_of.setdefault(cause, set()).add(effect)
        causes_of.setdefault(effect, set()).add(cause)
    features = {
        vid: json.loads((world_dir / f"{vid}_causal_features.json").read_text())["Scenes"] for vid in qa
    }
    assert len(truth) == sum(len(t["questions"]) for transitions in qa.values() for t in transitions)
    forms = Counter()
    for record in truth:
        transition = qa[record["video_id"]][record["transition_index"]]
        question = transition["questions"][record["question_index"]]
        assert (
            record["question_id"]
            == f"{record['video_id']}/t{record['transition_index']:03d}/q{record['question_index']}"
        )
        assert question["answer"] == record["answer"]
        scenes = features[record["video_id"]]
        observed = _events(
            scenes[transition["past_scene"]["name"].removesuffix(".mp4")],
            scenes[transition["current_scene"]["name"].removesuffix(".mp4")],
            thresholds,
        )
        # Every option is the title of its event: a no-model scorer can map options to graph nodes.
        for letter in OPTION_LETTERS:
            assert question["options"][letter] == parse_event_id(record["option_events"][letter]).title
        assert len(set(question["options"].values())) == 4
        answer_event = record["option_events"][record["answer"]]
        assert answer_event == record["answer_event"]
        (cause,) = record["cause_events"]
        effect = record["effect_event"]
        assert (cause, effect) in edges
        others = [record["option_events"][x] for x in OPTION_LETTERS if x != record["answer"]]
        forms[record["form"]] += 1
        if record["form"] == "effect_to_cause":
            assert answer_event == cause and cause in observed and effect in observed
            assert not any(o in causes_of.get(effect, set()) for o in others)
        elif record["form"] == "cause_to_effect":
            assert answer_event == effect and cause in observed and effect in observed
            assert not any(o in effects_of[cause] for o in others)
        else:
            assert record["form"] == "counterfactual" and record["type"] == "counterfactual"
            assert answer_event == effect and cause not in observed
            assert not any(o in effects_of[cause] for o in others)
    assert forms["effect_to_cause"] > 0 and forms["cause_to_effect"] > 0 and forms["counterfactual"] > 0


def test_planted_trend_fools_cooccurrence_but_not_time_precedence(tmp_path: Path) -> None:
    out = tmp_path / "world"
    generate(load_world(DEFAULT), out, videos=400, seed=3)
    ground, _, world, _ = _load(out)
    sequences = []
    for path in sorted(out.glob("*_causal_features.json")):
        scenes = json.loads(path.read_text())["Scenes"]
        names = sorted(scenes)
        sequences.append([_events(scenes[a], scenes[b], world["thresholds"]) for a, b in pairwise(names)])

    def rates(cause: str, effect: str) -> tuple[float, float, float]:
        same = before = n = n_before = total = base = 0
        for events in sequences:
            for t, found in enumerate(events):
                total += 1
                base += effect in found
                if cause in found:
                    n += 1
                    same += effect in found
                    if t > 0:
                        n_before += 1
                        before += effect in events[t - 1]
        return same / n, before / n_before, base / total

    for edge in ground["causal_edges"]:
        if edge["kind"] == "numeric":
            same, before, base = rates(edge["cause"], edge["effect"])
            assert same - before > 0.2 and same / base > 1.5, edge
    assert ground["non_causal"]
    for pair in ground["non_causal"]:
        same, before, base = rates(pair["a"], pair["b"])
        assert same / base > 1.3, pair  # co-occurrence sees an association ...
        assert same - before < 0.05, pair  # ... that does not precede in time


def test_same_seed_identical_files_across_processes(tmp_path: Path, world_dir: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    code = (
        "import sys; from karma.synth import generate, load_world; "
        "generate(load_world(sys.argv[1]), sys.argv[2], videos=150, seed=7)"
    )
    subprocess.run([sys.executable, "-c", code, str(TINY), str(tmp_path / "again")], check=True, env=env)
    names = sorted(p.name for p in world_dir.iterdir())
    assert names == sorted(p.name for p in (tmp_path / "again").iterdir())
    for name in names:
        assert (world_dir / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


def test_seeds_and_configs_give_different_worlds(tmp_path: Path) -> None:
    world = load_world(TINY)
    generate(world, tmp_path / "s1", videos=20, seed=1)
    generate(world, tmp_path / "s2", videos=20, seed=2)
    assert (tmp_path / "s1" / "ground_truth.json").read_text() != (
        tmp_path / "s2" / "ground_truth.json"
    ).read_text()
    qa1 = sorted(p.name for p in (tmp_path / "s1").glob("*_qa.json"))
    qa2 = sorted(p.name for p in (tmp_path / "s2").glob("*_qa.json"))
    assert qa1 != qa2

    def edge_set(path: Path) -> set[tuple[str, str]]:
        ground = json.loads((path / "ground_truth.json").read_text())
        return {(e["cause"], e["effect"]) for e in ground["causal_edges"]}

    # A config whose rule signs are drawn from the seed: different seeds -> different causal graphs.
    raw = world.model_dump(mode="json")
    for rule in raw["rules"]:
        if rule["kind"] == "numeric":
            rule["sign"] = "random"
            rule["strength"] = [0.6, 1.0]
    random_world = type(world).model_validate(raw)
    graphs = set()
    for seed in range(4):
        generate(random_world, tmp_path / f"r{seed}", videos=5, seed=seed)
        graphs.add(frozenset(edge_set(tmp_path / f"r{seed}")))
        resolved = json.loads((tmp_path / f"r{seed}" / "world.json").read_text())["config"]
        assert all(r["sign"] in (1, -1) for r in resolved["rules"] if r["kind"] == "numeric")
    assert len(graphs) > 1

    # A different config: brightness now drives loudness the other way.
    raw = world.model_dump(mode="json")
    raw["rules"][0]["sign"] = -1
    flipped = type(world).model_validate(raw)
    generate(flipped, tmp_path / "flipped", videos=5, seed=1)
    assert ("visual:brightness:up", "music:loudness:down") in edge_set(tmp_path / "flipped")
    assert ("visual:brightness:up", "music:loudness:up") in edge_set(tmp_path / "s1")
    assert edge_set(tmp_path / "flipped") != edge_set(tmp_path / "s1")


def test_rerun_into_same_folder_replaces_stale_videos(tmp_path: Path) -> None:
    world = load_world(TINY)
    generate(world, tmp_path / "w", videos=6, seed=1)
    generate(world, tmp_path / "w", videos=2, seed=2)
    assert len(list((tmp_path / "w").glob("*_qa.json"))) == 2
    assert len(list((tmp_path / "w").glob("*_causal_features.json"))) == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "abc_qa.json").write_text("[]")
    with pytest.raises(ValueError, match="not from karma synth"):
        generate(world, foreign, videos=1)


def test_cli_reports_a_bad_world_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from karma.cli.main import app

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nvideos: -3\n")
    result = CliRunner().invoke(app, ["synth", "--world", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "bad.yaml" in result.output and "videos" in result.output
    result = CliRunner().invoke(app, ["synth", "--world", str(TINY), "--out", str(tmp_path / "o"), "-n", "2"])
    assert result.exit_code == 0, result.output
    assert "2 videos" in result.output and (tmp_path / "o" / "ground_truth.json").is_file()
