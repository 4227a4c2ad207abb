"""HarmonySet-OE judge pass: score parsing, and a real `python -m karma.tasks.judge` run with the
embedded llama.cpp model killed with SIGKILL after its first judgment and resumed without duplicates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from karma.run.jsonl import JsonlAppender
from karma.tasks.harmonyset_oe import NOT_COMPARABLE, Judgment, OeSample, parse_scores, summarize_judgments

ROOT = Path(__file__).resolve().parents[2]


def test_parse_scores():
    assert parse_scores('Scores: {"R&S": 7, "T": 5, "E": 8, "C": 3}') == (
        {"R&S": 7, "T": 5, "E": 8, "C": 3},
        "ok",
    )
    assert parse_scores('{"rhythm": 6, "theme": 4}') == ({"R&S": 6, "T": 4}, "partial")
    assert parse_scores('{"R&S": 11, "T": "high"}') == ({}, "none")  # out of range / not a number
    assert parse_scores("no json here") == ({}, "none")
    assert parse_scores('{"x": 1} then {"E": 2.5, "C": 0}') == ({"E": 2.5, "C": 0.0}, "partial")


def _samples(run: Path, n: int) -> None:
    run.mkdir(parents=True)
    with JsonlAppender(run / "samples.jsonl") as writer:
        for i in range(n):
            writer.append(
                OeSample(
                    pair_id=f"SYN-HS-{i:04d}", question="Does the background music fit this video?",
                    reference=f"SYNTHETIC reference {i}: the beat matches the cuts; cheerful; surf culture.",
                    raw_completion=f"SYNTHETIC answer {i}: the music fits the cheerful beach video.",
                )
            )  # fmt: skip


def _judge(run: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "karma.tasks.judge",
        str(run),
        "--backend",
        "llamacpp",
        "--max-tokens",
        "24",
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@pytest.mark.slow
def test_judge_pass_resumes_after_kill_9_without_duplicates(tmp_path: Path):
    pytest.importorskip("llama_cpp")
    run = tmp_path / "oe"
    _samples(run, 3)
    first = _judge(run)
    deadline = time.monotonic() + 600
    while len(_lines(run / "judgments.jsonl")) < 1 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    before = _lines(run / "judgments.jsonl")
    assert 1 <= len(before) < 3, "the kill should land mid-pass"
    second = _judge(run)
    out, err = second.communicate(timeout=900)
    assert second.returncode == 0, err[-2000:]
    after = _lines(run / "judgments.jsonl")
    assert after[: len(before)] == before  # what was durable survives unchanged
    records = [Judgment.model_validate_json(line) for line in after]
    assert sorted(r.pair_id for r in records) == [f"SYN-HS-{i:04d}" for i in range(3)]  # each once
    assert all(r.judge_model and len(r.judge_prompt_hash) == 64 for r in records)
    assert all(r.judge_template.startswith("harmonyset-judge-karma-v1") for r in records)
    assert all(r.parse_status in {"ok", "partial", "none"} for r in records)
    result = json.loads((run / "judge_results.json").read_text())
    assert result["label"] == NOT_COMPARABLE and result["paper_comparable"] is False
    assert result["n_judged"] == 3 and sum(result["parse"].values()) == 3
    assert json.loads(out)["judgments_hash"] == result["judgments_hash"]


def test_summary_means_per_dimension_and_last_record_wins(tmp_path: Path):
    with JsonlAppender(tmp_path / "judgments.jsonl") as writer:
        for pair, scores, status in (
            ("p1", {"R&S": 4, "T": 6}, "partial"),
            ("p2", {"R&S": 8, "T": 2, "E": 5, "C": 1}, "ok"),
        ):
            writer.append(Judgment(pair_id=pair, arm="av", judge_model="m", judge_prompt_hash="h", judge_template="t",
                                   scores=scores, parse_status=status))  # fmt: skip
    result = summarize_judgments(tmp_path)
    assert result["by_dimension"]["R&S"] == {"n": 2, "mean": 6.0}
    assert result["by_dimension"]["E"] == {"n": 1, "mean": 5.0}
    assert result["parse"] == {"ok": 1, "partial": 1, "none": 0}


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_a_bad_max_error_rate_is_refused_before_any_folder_or_record(rate, harmonyset_dir, tmp_path: Path):
    """The answering pass and the judge check --max-error-rate first: nothing is created (no config.json,
    no empty samples.jsonl / judgments.jsonl) and the backend is never touched (an object() here)."""
    from karma.core.errors import InputError
    from karma.tasks.harmonyset_oe import judge_run, run_oe

    with pytest.raises(InputError, match=r"--max-error-rate must be between 0 and 1"):
        run_oe(harmonyset_dir, tmp_path / "oe", object(), max_error_rate=rate)
    assert not (tmp_path / "oe").exists()
    answered = tmp_path / "answered"
    answered.mkdir()
    (answered / "samples.jsonl").write_text("")
    with pytest.raises(InputError, match=r"--max-error-rate must be between 0 and 1"):
        judge_run(answered, object(), max_error_rate=rate)
    assert sorted(p.name for p in answered.iterdir()) == ["samples.jsonl"]
