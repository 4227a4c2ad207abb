"""``--max-error-rate``: a run against a server answering HTTP 500 stops with exit 1 naming the first
errors, ``karma report`` says so, and the same command completes the run once the server is fixed.

The model is a real llama.cpp OpenAI-compatible server (packaged SmolLM2 weights). In front of it
sits ``ScriptedServer`` (tests/pipelines/conftest.py), a real HTTP server on 127.0.0.1 that answers
500 for the scripted requests and forwards the rest. Kept beside the backend tests for those two
fixtures; the logic under test is ``karma.run.hygiene``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.eval import RunDir
from karma.run.hygiene import MIN_JUDGED, read_hygiene

pytestmark = [pytest.mark.slow, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 12


def test_500s_stop_the_run_and_the_fixed_server_completes_it(llama_server, scripted_server, tmp_path: Path):
    from karma.synth import generate, load_world

    world, run = tmp_path / "world", tmp_path / "run"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=4, seed=0)
    broken = scripted_server(upstream=llama_server.base_url, script=[("status", 500)] * 100)
    args = [
        "eval", "--data", str(world), "--out", str(run), "--ckg", "off", "--retriever", "none",
        "--limit", str(LIMIT), "--folds", "2", "--constrain-choices", "--max-tokens", "4", "--no-cache",
        "--no-progress", "--backend", "openai", "--max-error-rate", "0.2",
        "--backend-opt", f"base_url={broken.base_url}", "--backend-opt", f"model={llama_server.model}",
        "--backend-opt", "max_retries=0", "--backend-opt", "max_concurrency=1",
    ]  # fmt: skip

    stopped = CliRunner().invoke(app, args)
    assert stopped.exit_code == 1, stopped.output
    assert "stopped:" in stopped.output and "--max-error-rate 0.2" in stopped.output
    assert "HTTP 500" in stopped.output and "Traceback" not in stopped.output
    records = RunDir(run).samples()
    assert len(records) == MIN_JUDGED < LIMIT  # judged at the 10th answer, the rest never asked
    assert all(r.error and r.error.startswith("HTTP 500") for r in records)
    stop = read_hygiene(run)["stopped"]
    assert stop["backend_errors"] == stop["answered"] == MIN_JUDGED and len(stop["first_errors"]) == 3

    report = CliRunner().invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert "stopped at the error-rate limit" in (run / "report" / "report.md").read_text()

    broken.script.clear()  # the server is fixed: every request now reaches llama.cpp
    resumed = CliRunner().invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    final = RunDir(run).final_samples()
    assert len(final) == LIMIT and all(r.error is None and r.raw_completion for r in final)
    results = json.loads((run / "results.json").read_text())
    assert results["arms"]["off"]["overall"]["backend_errors"] == 0
    state = read_hygiene(run)
    assert "stopped" not in state and state["earlier_stops"][0]["backend_errors"] == MIN_JUDGED
    CliRunner().invoke(app, ["report", str(run)])
    assert "an earlier call stopped at the error-rate limit" in (run / "report" / "report.md").read_text()
