"""The family settings of ``karma synth``: free wording (and the settings added after it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from karma.core.events import parse_event_id
from karma.synth import generate, load_world, resolve_world
from karma.synth.config import ActionStateRule, IntRange, TimingConfig, dump_world
from karma.synth.dynamics import simulate
from karma.synth.family import DEVELOPMENT_SEEDS, REPORTED_SEEDS, draw_family_world
from karma.synth.wording import opposite_event

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"
CONTRARY = REPO / "data" / "worlds" / "contrary.yaml"
DEFAULT = REPO / "data" / "worlds" / "default.yaml"


def _questions(folder: Path) -> list[dict]:
    out: list[dict] = []
    for path in sorted(folder.glob("*_qa.json")):
        for transition in json.loads(path.read_text()):
            out += transition["questions"]
    return out


def _truth(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "question_truth.jsonl").read_text().splitlines()]


def _free(path: Path = TINY):  # type: ignore[no-untyped-def]
    return load_world(path).model_copy(update={"wording": "free"})


def test_free_wording_rarely_repeats_an_option_and_never_shows_a_title(tmp_path: Path) -> None:
    generate(_free(), tmp_path, videos=40, seed=11)
    questions = _questions(tmp_path)
    options = [text for q in questions for text in q["options"].values()]
    assert len(questions) > 300
    assert len(set(options)) / len(options) > 0.6
    truth = _truth(tmp_path)
    titles = {parse_event_id(e).title.lower() for t in truth for e in t["option_events"].values()}
    for text in options:
        lowered = text.lower().rstrip(".")
        assert lowered not in titles, text
        assert "increases" not in lowered and "decreases" not in lowered, text
    # The question texts are worded afresh too: far more distinct texts than the nine templates.
    assert len({q["question"].split("(")[0] for q in questions}) > len(questions) / 2


def test_free_wording_puts_the_opposite_change_among_the_distractors(tmp_path: Path) -> None:
    generate(_free(CONTRARY), tmp_path, videos=30, seed=12)
    truth = _truth(tmp_path)
    with_opposite = [t for t in truth if opposite_event(t["answer_event"]) is not None]
    shown = [t for t in with_opposite if opposite_event(t["answer_event"]) in t["option_events"].values()]
    assert len(shown) / len(with_opposite) > 0.9
    # The opposite is a distractor, never the answer's own letter; the answer letter stays the truth's.
    for t in truth:
        qa = json.loads((tmp_path / f"{t['video_id']}_qa.json").read_text())
        q = qa[t["transition_index"]]["questions"][t["question_index"]]
        assert t["option_events"][q["answer"]] == t["answer_event"]
        assert opposite_event(t["answer_event"]) != t["answer_event"]
        assert len(set(q["options"].values())) == 4


def test_free_wording_is_deterministic_from_the_seed(tmp_path: Path) -> None:
    generate(_free(), tmp_path / "a", videos=10, seed=13)
    generate(_free(), tmp_path / "b", videos=10, seed=13)
    generate(_free(), tmp_path / "c", videos=10, seed=14)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    a = [q["options"] for q in _questions(tmp_path / "a")]
    c = [q["options"] for q in _questions(tmp_path / "c")]
    assert a != c
    assert json.loads((tmp_path / "a" / "world.json").read_text())["config"]["wording"] == "free"


def test_templated_wording_is_the_old_wording(tmp_path: Path) -> None:
    """``wording: templated`` is the default and changes nothing (world.json does not even name it)."""
    world = load_world(TINY)
    generate(world, tmp_path / "default", videos=6, seed=5)
    generate(world.model_copy(update={"wording": "templated"}), tmp_path / "explicit", videos=6, seed=5)
    for path in sorted((tmp_path / "default").iterdir()):
        assert path.read_bytes() == (tmp_path / "explicit" / path.name).read_bytes(), path.name
    assert "wording" not in json.loads((tmp_path / "default" / "world.json").read_text())["config"]
    titles = {
        parse_event_id(e).title for t in _truth(tmp_path / "default") for e in t["option_events"].values()
    }
    assert {text for q in _questions(tmp_path / "default") for text in q["options"].values()} <= titles


def test_cli_wording_option(tmp_path: Path) -> None:
    from karma.cli.main import app

    runner = CliRunner()
    out = tmp_path / "w"
    result = runner.invoke(
        app, ["synth", "--world", str(TINY), "--out", str(out), "--videos", "3", "--wording", "free"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "world.json").read_text())["config"]["wording"] == "free"
    bad = runner.invoke(app, ["synth", "--world", str(TINY), "--out", str(out), "--wording", "loose"])
    assert bad.exit_code == 2
    assert "--wording" in bad.output and "loose" in bad.output


def _scene_values(folder: Path, key: str) -> list[float]:
    out: list[float] = []
    for path in sorted(folder.glob("*_causal_features.json")):
        out += [scene[key] for scene in json.loads(path.read_text())["Scenes"].values()]
    return out


def test_units_put_the_visual_features_on_their_scale(tmp_path: Path) -> None:
    world = load_world(TINY)
    for units in ("luma", "published", "unit"):
        generate(world.model_copy(update={"units": units}), tmp_path / units, videos=12, seed=4)
    luma, unit, published = tmp_path / "luma", tmp_path / "unit", tmp_path / "published"
    for key in ("Brightness", "Saturation", "Contrast", "Motion", "Total_Visual_Intensity"):
        values = _scene_values(unit, key)
        assert min(values) >= 0 and max(values) <= 1, key
    assert max(_scene_values(luma, "Brightness")) > 100
    # The same videos on other scales: brightness / 255, motion a quarter of the luma difference.
    for a, b in zip(_scene_values(luma, "Brightness"), _scene_values(unit, "Brightness"), strict=True):
        assert abs(a / 255 - b) < 1e-3
    for a, b in zip(_scene_values(luma, "Motion"), _scene_values(published, "Motion"), strict=True):
        assert abs(a / 4 - b) < 0.01
    assert _scene_values(luma, "Brightness") == _scene_values(published, "Brightness")
    thresholds = json.loads((unit / "world.json").read_text())["thresholds"]
    assert abs(thresholds["brightness"] - 8 / 255) < 1e-9 and thresholds["loudness"] == 1.0
    config = json.loads((unit / "world.json").read_text())["config"]
    assert config["units"] == "unit" and config["visual"]["brightness"]["threshold"] == 8
    # The truth does not depend on the scale.
    assert (luma / "rules.json").read_text() == (unit / "rules.json").read_text()


def _lagged_correlation(a: np.ndarray, b: np.ndarray, n_scenes: np.ndarray, lag: int) -> float:
    """Correlation of a's change at cut t with b's change at cut t + lag, over cuts inside videos."""
    xs, ys = [], []
    for v in range(a.shape[0]):
        da, db = np.diff(a[v, : n_scenes[v]]), np.diff(b[v, : n_scenes[v]])
        for t in range(max(0, -lag), len(da) - max(0, lag)):
            xs.append(da[t])
            ys.append(db[t + lag])
    return float(np.corrcoef(xs, ys)[0, 1])


def test_timing_music_lag_and_visual_drift(tmp_path: Path) -> None:
    base = load_world(TINY).model_copy(update={"scenes_per_video": IntRange(min=6, max=8)})
    seeds = np.random.SeedSequence(1)

    def run(**timing: float):  # type: ignore[no-untyped-def]
        world = resolve_world(
            base.model_copy(update={"timing": TimingConfig(**timing)}), np.random.default_rng(0)
        )
        return simulate(world, 300, np.random.default_rng(seeds))

    at_cut, lagging, drifting = run(), run(music_lag=0.5), run(visual_drift=0.8)
    # brightness -> loudness (strength 0.9): at the cut, the next cut's loudness does not follow.
    now = _lagged_correlation(at_cut.visual["brightness"], at_cut.music["loudness"], at_cut.n_scenes, 0)
    later = _lagged_correlation(at_cut.visual["brightness"], at_cut.music["loudness"], at_cut.n_scenes, 1)
    assert now > 0.6 and abs(later) < 0.1
    later = _lagged_correlation(lagging.visual["brightness"], lagging.music["loudness"], lagging.n_scenes, 1)
    assert later > 0.3
    # Visual drift: a step continues the previous one (clipping at the bounds pulls plain steps a little
    # below zero).
    steps = _lagged_correlation(at_cut.visual["contrast"], at_cut.visual["contrast"], at_cut.n_scenes, 1)
    drift = _lagged_correlation(
        drifting.visual["contrast"], drifting.visual["contrast"], drifting.n_scenes, 1
    )
    assert abs(steps) < 0.2 and drift > steps + 0.3, (steps, drift)


def test_family_worlds_are_drawn_from_the_seed(tmp_path: Path) -> None:
    base = load_world(DEFAULT)
    worlds = {seed: draw_family_world(base, seed) for seed in DEVELOPMENT_SEEDS + REPORTED_SEEDS}
    assert draw_family_world(base, 11) == worlds[11]
    assert len({json.dumps([r.model_dump() for r in w.rules]) for w in worlds.values()}) == len(worlds)
    assert not set(DEVELOPMENT_SEEDS) & set(REPORTED_SEEDS)
    for world in worlds.values():
        kinds = [rule.kind for rule in world.rules]
        assert kinds == ["numeric", "numeric", "key_state", "action_state", "action", "object"]
        strengths = [rule.strength for rule in world.rules if rule.kind == "numeric"]
        assert strengths[0] < strengths[1]  # unequal strengths
        used = {getattr(rule, "cause", None) for rule in world.rules} | {t.visual for t in world.trends}
        assert set(world.visual) - used, "one visual variable is left independent of everything"
    generate(worlds[12].model_copy(update={"wording": "free"}), tmp_path, videos=20, seed=12)
    rules = json.loads((tmp_path / "rules.json").read_text())
    assert len(rules["rules"]) == 8  # two numeric rules in both directions, four others
    assert {"visual:action:is:" + worlds[12].rules[3].action} == {
        r["cause"] for r in rules["rules"] if r["kind"] == "action_state"
    }
    truth = json.loads((tmp_path / "ground_truth.json").read_text())
    assert truth["world"] == "family-12" and truth["non_causal"]
    signs = {
        r["sign"]
        for seed in DEVELOPMENT_SEEDS + REPORTED_SEEDS
        for r in dump_world(resolve_world(worlds[seed], np.random.default_rng(seed)))["rules"]
        if r["kind"] == "numeric"
    }
    assert signs == {1, -1}  # counter-intuitive signs occur


def test_cli_family_and_settings(tmp_path: Path) -> None:
    from karma.cli.main import app

    runner = CliRunner()
    out = tmp_path / "f"
    args = ["synth", "--world", str(TINY), "--out", str(out), "--videos", "4", "--seed", "13", "--family"]
    result = runner.invoke(app, [*args, "--units", "unit", "--music-lag", "0.3", "--visual-drift", "0.5"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "world.json").read_text())["config"]
    assert config["name"] == "family-13" and config["units"] == "unit"
    assert config["timing"] == {"music_lag": 0.3, "visual_drift": 0.5}
    bad = runner.invoke(app, [*args, "--units", "inches"])
    assert bad.exit_code == 2 and "--units" in bad.output


def test_action_state_rule_sets_the_key_while_the_action_holds(tmp_path: Path) -> None:
    base = load_world(TINY)
    rules = [r for r in base.rules if r.kind != "mode"]
    rules.append(ActionStateRule(action="dancing", state="minor", probability=0.9))
    world = base.model_copy(update={"rules": rules, "wording": "free"})
    generate(world, tmp_path, videos=60, seed=21)
    minor = {True: [0, 0], False: [0, 0]}
    for path in sorted(tmp_path.glob("*_causal_features.json")):
        scenes = list(json.loads(path.read_text())["Scenes"].values())
        for scene in scenes[1:]:
            dancing = scene["Action"][0]["label"] == "dancing"
            minor[dancing][0] += scene["Key"].endswith("minor")
            minor[dancing][1] += 1
    assert minor[True][0] / minor[True][1] > 0.85 > 0.6 > minor[False][0] / minor[False][1]
    claims = json.loads((tmp_path / "rules.json").read_text())["rules"]
    assert {"cause": "visual:action:is:dancing", "effect": "music:mode:is:minor"}.items() <= claims[
        -1
    ].items()
    truth = _truth(tmp_path)
    edges = {
        (e["cause"], e["effect"])
        for e in json.loads((tmp_path / "ground_truth.json").read_text())["causal_edges"]
    }
    asked = [t for t in truth if t["cause_events"] == ["visual:action:is:dancing"]]
    assert {t["type"] for t in asked} >= {"counterfactual", "predictive"}
    for t in truth:
        cause, answer = t["cause_events"][0], t["answer_event"]
        assert (
            (answer, t["effect_event"]) in edges
            if t["form"] == "effect_to_cause"
            else (cause, answer) in edges
        )
    # Free wording words the explanations too: no event title of the truth in any of them.
    titles = {parse_event_id(e).title for pair in edges for e in pair}
    for q in _questions(tmp_path):
        assert not any(title in q["explanation"] for title in titles), q["explanation"]
