"""The family settings of ``karma synth``: free wording (and the settings added after it)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karma.core.events import parse_event_id
from karma.synth import generate, load_world
from karma.synth.wording import opposite_event

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "data" / "worlds" / "tiny.yaml"
CONTRARY = REPO / "data" / "worlds" / "contrary.yaml"


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
