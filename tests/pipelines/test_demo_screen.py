"""``make demo`` and the script that picks its question (scripts/demo.py, scripts/screen_demo.py).

Which question flips is a property of the reading model (qwen2.5-coder-1.5b) and is checked by running
scripts/screen_demo.py (docs/pipelines.md, "make demo"); a test cannot afford that model's minutes on a
shared machine. What does not depend on the model is tested here with real components and the suite's
fast model (SmolLM2, named): the demo's question exists and is one the graph can decide, its graph-on
prompt links the right option to a fact, the screen's score cache reads back exactly what the model
said, and a bad question id is one clear line with exit 2.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
demo = importlib.import_module("demo")
screen_demo = importlib.import_module("screen_demo")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))


def test_demo_asks_a_screened_kind_of_sample_question() -> None:
    from pipelines.ask import SAMPLE_DIR

    rows = screen_demo.selected(SAMPLE_DIR, 0, [demo.demo_question_id()], ["evidential", "predictive"])
    assert [row[3] for row in rows] == [demo.demo_question_id()]
    # The screen's default selection holds it, so a plain rerun of the screen shows whether it still flips.
    default = screen_demo.selected(SAMPLE_DIR, 2, [], ["evidential", "predictive", "counterfactual"])
    assert demo.demo_question_id() in [row[3] for row in default]


def test_demo_question_graph_on_prompt_links_the_right_option_to_a_fact() -> None:
    from pipelines.ask import SAMPLE_DIR, AskConfig, AskSession

    settings = {**demo.demo_settings(), "model": "smollm2-135m"}
    place = {**demo.DEMO, "qa_file": SAMPLE_DIR / demo.DEMO["qa_file"]}
    session = AskSession()
    try:
        on = session.ask(AskConfig(**settings, **place, use_graph=True))
        off = session.ask(AskConfig(**settings, **place, use_graph=False))
    finally:
        session.close()
    line = demo.deciding_line(on)
    assert line is not None, [fl.prompt_line for fl in on.fact_lines]
    assert line.link == on.question.answer
    assert line.prompt_line.endswith(
        f"[option {on.question.answer}: {on.question.options[on.question.answer]}]"
    )
    assert "causes" in line.relations
    assert off.fact_lines == [] and off.prepared.facts == []


def test_score_cache_reads_back_the_models_scores(tmp_path: Path) -> None:
    from pipelines.assembly import make_backend
    from pipelines.backends.base import ChatMessage, ChatRequest

    request = ChatRequest(messages=[ChatMessage(role="user", content="Is the sky blue? Answer yes or no.")])
    options = ["yes", "no"]
    path = tmp_path / "scores.json"
    first = screen_demo.CachedScores(make_backend("llamacpp", {"n_ctx": 512}), path)
    try:
        (scored,) = first.score_continuations([request], [options])
        (again,) = first.score_continuations([request], [options])
        (other,) = first.score_continuations([request], [["no", "yes"]])
    finally:
        first.close()
    assert (first.misses, first.hits) == (2, 1)
    assert again == scored
    assert [s.logprob for s in other] == pytest.approx([s.logprob for s in reversed(scored)], abs=1e-4)
    second = screen_demo.CachedScores(make_backend("llamacpp", {"n_ctx": 512}), path)
    try:
        (read_back,) = second.score_continuations([request], [options])
    finally:
        second.close()
    assert (second.misses, second.hits) == (0, 1) and read_back == scored
    assert screen_demo.margin(scored) >= 0


def test_screen_names_an_unknown_question_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert screen_demo.main(["synthVid002/t999/q0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no question synthVid002/t999/q0" in err[0]
