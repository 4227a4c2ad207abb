"""The HarmonySet-OE judge on the answering run's contract (issue 38): against HTTP 500s, a dead port
and a hang a failed judge request is an error, never a score; ``python -m karma.tasks.judge`` exits 1;
a rerun against a healthy server judges exactly the failed answers; a folder in use is refused.

The judge's server is :class:`tests.karma.loopback.LoopbackModelServer`, a boundary double (a real
HTTP server on 127.0.0.1); the backend is karma's real ``openai`` backend.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.core.lock import FolderLock
from karma.run.jsonl import JsonlAppender
from karma.tasks.harmonyset_oe import OeSample, latest_judgments
from karma.tasks.judge import main
from tests.karma.loopback import MODEL, LoopbackModelServer, dead_port_url

SCORES = '{"R&S": 7, "T": 5, "E": 8, "C": 3}'


def _run(tmp_path: Path, n: int) -> Path:
    run = tmp_path / "oe-run"
    run.mkdir()
    with JsonlAppender(run / "samples.jsonl") as writer:
        for i in range(n):
            writer.append(
                OeSample(
                    pair_id=f"SYN-HS-{i:04d}", question="Does the background music fit this video?",
                    reference=f"SYNTHETIC reference {i}: the beat matches the cuts.",
                    raw_completion=f"SYNTHETIC answer {i}: the music fits.",
                )
            )  # fmt: skip
    return run


def _judge(run: Path, url: str, *extra: str, timeout_s: float = 2.0) -> int:
    return main([str(run), "--backend", "openai", "--backend-opt", f"base_url={url}",
                 "--backend-opt", f"model={MODEL}", "--backend-opt", "max_retries=0",
                 "--backend-opt", f"timeout_s={timeout_s}", *extra])  # fmt: skip


def _rerun_judges_exactly_the_failed(run: Path, n: int) -> None:
    latest = latest_judgments(run)
    failed = [key for key, j in latest.items() if j.error is not None]
    assert failed and all(latest[key].scores == {} for key in failed)  # an error is never a score
    results = (
        json.loads((run / "judge_results.json").read_text())
        if (run / "judge_results.json").exists()
        else None
    )
    if results is not None:  # stopped runs drop it; finished ones say what is missing
        assert results["backend_errors"] == len(failed) and results["n_judged"] == len(latest) - len(failed)
    with LoopbackModelServer(reply=lambda body: SCORES) as healthy:
        assert _judge(run, healthy.base_url) == 0
        assert healthy.good == n - (len(latest) - len(failed))
    results = json.loads((run / "judge_results.json").read_text())
    assert results["n_judged"] == n and results["backend_errors"] == 0
    assert results["by_dimension"]["R&S"] == {"n": n, "mean": 7.0}


@pytest.mark.timeout(120)
def test_judge_against_500s(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, 6)
    with LoopbackModelServer(reply=lambda body: SCORES, fail_after=2) as server:
        assert _judge(run, server.base_url, "--max-error-rate", "1") == 1
        assert server.good == 2 and server.failed == 4
    assert "the judge failed on 4 of 6 answers" in capsys.readouterr().out
    results = json.loads((run / "judge_results.json").read_text())
    assert results["n_judged"] == 2 and results["by_dimension"]["E"]["mean"] == 8.0  # no null means
    _rerun_judges_exactly_the_failed(run, 6)


@pytest.mark.timeout(120)
def test_judge_against_a_dead_port_stops_at_the_error_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, 14)
    assert _judge(run, dead_port_url()) == 1
    assert "stopped: 10 of 10 requests failed" in capsys.readouterr().out
    assert not (run / "judge_results.json").exists()
    _rerun_judges_exactly_the_failed(run, 14)


@pytest.mark.timeout(120)
def test_judge_against_a_hanging_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, 2)
    with LoopbackModelServer(mode="hang") as server:
        assert _judge(run, server.base_url, "--max-error-rate", "1", timeout_s=0.5) == 1
    assert "timeout" in capsys.readouterr().out
    _rerun_judges_exactly_the_failed(run, 2)


def test_a_folder_in_use_is_refused_and_bad_options_are_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, 2)
    with LoopbackModelServer(reply=lambda body: SCORES) as server:
        with FolderLock(run, "task run"):  # an answering run (or another judge) holds the folder
            assert _judge(run, server.base_url) == 2
        assert "in use by another karma task run" in capsys.readouterr().out
        assert _judge(run, "not-a-url") == 2
        assert "must be an http" in capsys.readouterr().out
        assert server.good == 0 and not (run / "judgments.jsonl").exists()
