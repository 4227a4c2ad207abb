"""Accuracy per grounding: a ``karma qa make`` folder's ``question_grounding.jsonl`` splits karma eval's
results and karma report's tables into questions answered by the observed change and by a graph rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.errors import InputError
from karma.data.grounding import GROUNDING, read_groundings
from karma.eval.records import SampleRecord
from karma.eval.results import aggregate

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _sample(q: int, video: str, arm: str, correct: bool) -> SampleRecord:
    return SampleRecord(
        question_id=f"{video}/t000/q{q}",
        video_id=video,
        transition_id=f"{video}/t000",
        question_type="evidential" if q == 0 else "predictive",
        arm=arm,  # type: ignore[arg-type]
        prompt_hash="h",
        answer="a",
        raw_completion="",
        parsed_letter="a" if correct else "b",
        parse_status="ok",
        correct=correct,
    )


def test_aggregate_splits_by_grounding_and_leaves_plain_runs_alone() -> None:
    # q0 observed: on right, off right; q1 rule: on right, off wrong (three videos each).
    records = [
        _sample(q, f"v{i}", arm, correct=(arm == "on" or q == 0))
        for i in range(3)
        for q in (0, 1)
        for arm in ("on", "off")
    ]
    groundings = {f"v{i}/t000/q0": "observed" for i in range(3)} | {
        "v0/t000/q1": "rule",
        "v1/t000/q1": "rule",
    }
    results = aggregate(records, [], resamples=200, seed=0, groundings=groundings)
    by = results["arms"]["off"]["by_grounding"]
    assert set(by) == {"observed", "rule", "unrecorded"}  # v2's rule question has no record: said so
    assert (by["observed"]["n"], by["observed"]["correct"]) == (3, 3)
    assert (by["rule"]["n"], by["rule"]["correct"]) == (2, 0)
    paired = results["paired"]["by_grounding"]
    assert paired["rule"]["on_only_correct"] == 2 and paired["observed"]["delta"] == 0.0
    assert "by_grounding" not in aggregate(records, [], resamples=200, seed=0)["arms"]["on"]


def test_a_bad_grounding_line_names_file_line_and_field(tmp_path: Path) -> None:
    assert read_groundings(tmp_path) == {}
    (tmp_path / GROUNDING).write_text(
        '{"question_id": "v/t000/q0", "grounding": "rule"}\n{"question_id": 3}\n'
    )
    with pytest.raises(InputError, match=r"question_grounding.jsonl: line 2: field 'question_id'"):
        read_groundings(tmp_path)
    (tmp_path / GROUNDING).write_text("{not json\n")
    with pytest.raises(InputError, match="line 1: not JSON"):
        read_groundings(tmp_path)


@pytest.mark.timeout(600)
def test_eval_and_report_on_made_questions_show_accuracy_per_grounding(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from karma.qa import QaMakeConfig, make_qa
    from karma.synth import generate, load_world

    world = tmp_path / "world"
    generate(load_world(REPO / "data" / "worlds" / "tiny.yaml"), world, videos=40, seed=4)
    features = tmp_path / "features"
    features.mkdir()
    for path in world.glob("*_causal_features.json"):
        (features / path.name).write_bytes(path.read_bytes())
    made = tmp_path / "qa"
    make_qa(QaMakeConfig(data=features, out=made, allow_bias=True))
    run = tmp_path / "run"
    args = [
        "eval",
        "--model",
        "smollm2-135m",
        "--data",
        str(made),
        "--out",
        str(run),
        "--limit",
        "6",
        "--answer-mode",
        "loglik",
        "--no-progress",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    results = json.loads((run / "results.json").read_text())
    expected = read_groundings(made)
    asked = {json.loads(line)["question_id"] for line in (run / "samples.jsonl").read_text().splitlines()}
    kinds = {expected[q] for q in asked}
    assert kinds == {"observed", "rule"}  # the first transitions hold evidential and rule questions
    for arm in ("on", "off"):
        by = results["arms"][arm]["by_grounding"]
        assert set(by) == kinds
        assert sum(s["n"] for s in by.values()) == results["arms"][arm]["overall"]["n"] == 6
    assert set(results["paired"]["by_grounding"]) == kinds
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    text = (run / "report" / "report.md").read_text()
    assert "### Per grounding" in text and "| observed |" in text and "| rule |" in text
