"""karma tasks inside inspect_ai: `inspect eval` runs WildScore (text-only arm) and Karma-MV
(graph-off) on the embedded llama.cpp model through the `karma/llamacpp` model provider."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"


def _inspect_eval(task: str, log_dir: Path, *args: str) -> None:
    inspect = Path(sys.executable).with_name("inspect")
    command = [str(inspect), "eval", f"karma/tasks/inspect_tasks.py@{task}", "--model", "karma/llamacpp",
               "--log-dir", str(log_dir), "--display", "none", "--log-format", "json", *args]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


@pytest.mark.slow
def test_inspect_eval_runs_a_karma_task_on_the_embedded_model(tmp_path: Path):
    pytest.importorskip("inspect_ai")
    pytest.importorskip("llama_cpp")
    from inspect_ai.log import list_eval_logs, read_eval_log

    _inspect_eval(
        "wildscore", tmp_path / "ws", "-T", f"data={WILDSCORE}", "-T", "arm=text_only", "--limit", "3"
    )
    (info,) = list_eval_logs(str(tmp_path / "ws"))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    assert log.eval.model == "karma/llamacpp" and len(log.samples) == 3
    first = log.samples[0]
    assert first.input[0].content.startswith("You are an expert in symbolic music-score question answering.")
    assert first.target == "a" and first.metadata["category"] == "HT"
    score = next(iter(first.scores.values()))
    assert score.value in ("C", "I") and "parse" in score.explanation
    metrics = next(iter(log.results.scores)).metrics
    assert 0.0 <= metrics["accuracy"].value <= 1.0


@pytest.mark.slow
def test_inspect_eval_runs_karma_mv_graph_off(tmp_path: Path):
    pytest.importorskip("inspect_ai")
    pytest.importorskip("llama_cpp")
    from inspect_ai.log import list_eval_logs, read_eval_log

    _inspect_eval("karma_mv", tmp_path / "mv", "-T", f"data={ROOT / 'data' / 'sample'}", "--limit", "2")
    log = read_eval_log(list_eval_logs(str(tmp_path / "mv"))[0])
    assert log.status == "success" and len(log.samples) == 2
    assert "ANSWER" in log.samples[0].input[0].content  # the LLM pipeline's system prompt
