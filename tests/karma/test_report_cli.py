"""`karma report` on run directories written record by record (no model needed), and `karma eval` input errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karma.cli.main import app
from karma.eval import EvalConfig
from karma.eval.records import BaselineRecord, SampleRecord
from karma.run.jsonl import JsonlAppender

runner = CliRunner()


def _write_run(path: Path, on_right: list[bool], off_right: list[bool]) -> None:
    config = EvalConfig(data="data/sample", out=str(path), retriever="keyword")
    path.mkdir(parents=True)
    (path / "config.json").write_text(
        json.dumps(
            {
                "identity": config.identity(),
                "hashes": {
                    "data": "d" * 16,
                    "template": "t" * 64,
                    "template_version": "1.0",
                    "model": "m@sha256:1",
                },
                "graph_mode": "folds",
                "graphs": {"fold0": {"hash": "g" * 16, "nodes": 3, "edges": 2, "excluded_videos": ["v0"]}},
                "config": config.model_dump(mode="json"),
            }
        )
    )
    types = ["evidential", "predictive", "counterfactual"]
    with (
        JsonlAppender(path / "samples.jsonl") as samples,
        JsonlAppender(path / "baselines.jsonl") as baselines,
    ):
        for i, (on, off) in enumerate(zip(on_right, off_right, strict=True)):
            video, qtype = f"v{i % 4}", types[i % 3]
            for arm, right in (("on", on), ("off", off)):
                letter = "a" if right else "b"
                samples.append(
                    SampleRecord(
                        question_id=f"{video}/t000/q{i}",
                        video_id=video,
                        transition_id=f"{video}/t000",
                        question_type=qtype,
                        arm=arm,  # type: ignore[arg-type]
                        prompt_hash=f"p{i}{arm}",
                        answer="a",
                        raw_completion=f"ANSWER: {letter}",
                        parsed_letter=letter,
                        parse_status="ok",
                        correct=right,
                    )
                )
            baselines.append(
                BaselineRecord(
                    question_id=f"{video}/t000/q{i}",
                    video_id=video,
                    question_type=qtype,
                    answer="a",
                    picks={
                        "most_frequent_letter": ["a"],
                        "longest_option": ["c"],
                        "word_overlap": ["b"],
                        "graph_reader": ["a"],
                    },
                )
            )


def test_report_recomputes_results_and_compares_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _write_run(first, [True] * 10 + [False] * 2, [True] * 4 + [False] * 8)  # 10/12 vs 4/12
    _write_run(second, [True] * 6 + [False] * 6, [True] * 6 + [False] * 6)
    result = runner.invoke(app, ["report", str(first), str(second), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "rep" / "report.md").read_text()
    results = json.loads((first / "results.json").read_text())
    assert results["arms"]["on"]["overall"]["accuracy"] == 10 / 12
    assert results["paired"]["overall"]["on_only_correct"] == 6
    # b=6, c=0: p = 2 / 2**6
    assert results["paired"]["overall"]["mcnemar_p"] == 2 / 64
    assert "| first | 12 | 83.3 [" in text and "| second | 12 | 50.0 [" in text
    assert "+50.0 [" in text and "0.0312" in text
    assert "| graph reader (facts only, no LLM) |" in text
    assert "### How answers were read" in text and "- graph reader (facts only, no LLM): 100.0%" in text
    for png in ("comparison.png", "00_first_accuracy.png", "00_first_delta.png", "01_second_delta.png"):
        assert (tmp_path / "rep" / png).read_bytes()[:4] == b"\x89PNG"


def test_report_rejects_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code != 0
    assert "not a karma run directory" in result.output


def test_eval_rejects_bad_options_before_any_work(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["eval", "--data", "data/sample", "--out", str(tmp_path / "r"), "--ckg", "maybe"]
    )
    assert result.exit_code == 2 and "'--ckg': 'maybe' is not one of 'on', 'off', 'both'" in result.output
    assert not (tmp_path / "r").exists()
    result = runner.invoke(
        app, ["eval", "--data", "data/sample", "--out", str(tmp_path / "r"), "--backend-opt", "novalue"]
    )
    assert result.exit_code == 2 and "KEY=VALUE" in result.output
    assert not (tmp_path / "r").exists()
