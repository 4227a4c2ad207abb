"""``karma eval --limit N`` spreads over videos and types (issue 39, item 3), keeps the first-N order as
``--limit-order first``, and a run folder keeps the order it was started with.

Real worlds from ``karma synth``, the real loader and the runner's own selection; the CLI tests run the
real command up to the point where it refuses (no model is loaded there).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.eval import EvalConfig
from karma.eval.runner import _Evaluation, select_questions
from karma.run.rundir import RunMismatchError
from karma.run.selection import apply_limit, resolve_limit_order

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world_200(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from karma.synth import generate, load_world

    world = tmp_path_factory.mktemp("w200") / "world"
    generate(load_world(ROOT / "data" / "worlds" / "default.yaml"), world, videos=200, seed=0)
    return world


@pytest.fixture(scope="module")
def dataset_200(world_200: Path):  # type: ignore[no-untyped-def]
    from karma.data import load_dataset

    return load_dataset(world_200)


def _ids(dataset, world: Path, **settings: object) -> list[str]:  # type: ignore[no-untyped-def]
    config = EvalConfig(data=str(world), out=str(world.parent / "unused"), **settings)
    return [t.question_id(q) for t, q in select_questions(dataset, config)]


def test_limit_30_on_200_videos_covers_30_videos_and_every_type_equally(dataset_200, world_200):
    chosen = _ids(dataset_200, world_200, limit=30)
    videos = Counter(qid.split("/")[0] for qid in chosen)
    assert len(chosen) == 30 and len(videos) >= 10
    assert len(videos) == 30  # one question per video while videos last
    by_id = {t.question_id(q): str(q.type) for t in dataset_200.transitions for q in t.questions}
    assert Counter(by_id[qid] for qid in chosen) == {"evidential": 10, "predictive": 10, "counterfactual": 10}
    assert chosen == sorted(chosen, key=lambda qid: (qid.split("/")[0], qid))  # answered in stable order
    assert chosen == _ids(dataset_200, world_200, limit=30)  # seeded: the same every time


def test_first_order_keeps_the_old_first_n_and_covers_few_videos(dataset_200, world_200):
    everything = _ids(dataset_200, world_200)
    first = _ids(dataset_200, world_200, limit=30, limit_order="first")
    assert first == everything[:30]
    assert len({qid.split("/")[0] for qid in first}) <= 3  # why spread is the default


def test_a_wider_limit_keeps_every_question_of_a_narrower_one(dataset_200, world_200):
    narrow, wide = _ids(dataset_200, world_200, limit=45), _ids(dataset_200, world_200, limit=300)
    assert set(narrow) < set(wide) and len(wide) == 300
    assert len({qid.split("/")[0] for qid in wide}) == 200  # every video before any video twice


def test_apply_limit_without_a_limit_keeps_everything_and_refuses_an_unknown_order():
    pairs = [("t", "q")] * 3
    assert apply_limit(pairs, None, "spread") == pairs
    with pytest.raises(ValueError, match="spread or first"):
        apply_limit(pairs, 2, "random")


def test_a_folder_keeps_its_order_and_an_old_folder_is_first():
    assert resolve_limit_order(None, None, "new") == "spread"
    assert resolve_limit_order("first", None, "new") == "first"
    old = {"selection": {"types": None, "videos": None, "limit": 330}}  # config.json before the option
    assert resolve_limit_order(None, old, "old") == "first"
    assert resolve_limit_order("first", old, "old") == "first"
    with pytest.raises(RunMismatchError, match="--limit-order first"):
        resolve_limit_order("spread", old, "old")
    new = {"selection": {"limit": 30, "limit_order": "spread"}}
    assert resolve_limit_order(None, new, "run") == "spread"


def test_resuming_a_folder_from_before_the_option_selects_its_first_n(dataset_200, world_200, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"selection": {"limit": 30}}))
    ev = _Evaluation(EvalConfig(data=str(world_200), out=str(run), limit=30), progress=False)
    assert ev.config.limit_order == "first"
    assert [t.question_id(q) for t, q in ev.selected] == _ids(dataset_200, world_200)[:30]


def test_the_cli_refuses_another_order_on_an_old_folder_before_loading_a_model(world_200, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"selection": {"limit": 30}}))
    args = ["eval", "--model", "smollm2-135m", "--data", str(world_200), "--out", str(run), "--limit", "30",
            "--limit-order", "spread", "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "was filled with --limit-order first" in result.output and "Traceback" not in result.output
    bad = CliRunner().invoke(app, [*args[:-3], "--limit-order", "random", "--no-progress"])
    assert bad.exit_code == 2 and "'random' is not one of 'spread', 'first'" in bad.output
