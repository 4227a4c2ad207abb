"""Backend failures: recorded per request, scored as unanswered, never cached, retried by the next run.

The backend is the real OpenAI-compatible client pointed at a loopback port nobody listens on, so
every request fails the way it does when a server is down.
"""

from __future__ import annotations

from pathlib import Path

from karma.eval import EvalConfig, RunDir, run_evaluation
from karma.run.cache import ResponseCache
from pipelines.backends.llamacpp_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _config(out: Path, cache: Path, port: int) -> EvalConfig:
    return EvalConfig(
        data=str(ROOT / "data" / "sample"),
        out=str(out),
        backend="openai",
        backend_options={
            "base_url": f"http://127.0.0.1:{port}/v1",
            "model": "nobody-home",
            "max_retries": 0,
            "timeout_s": 5,
        },
        retriever="keyword",
        limit=2,
        folds=3,
        cache_path=str(cache),
    )


def test_failed_requests_are_logged_unanswered_and_retried(tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    first = run_evaluation(_config(out, cache, free_port()), progress=False)
    assert first.answered == 4
    run = RunDir(out)
    records = run.final_samples()
    assert len(records) == 4
    for record in records:
        assert record.error and record.parse_status == "none" and record.parsed_letter is None
        assert not record.correct
    results = run.results()
    for arm in ("on", "off"):
        overall = results["arms"][arm]["overall"]
        # No answer came back: nothing to score (no accuracy, no parse failure), two backend errors.
        assert overall["backend_errors"] == 2 and overall["n"] == 0 and overall["parse_failures"] == 0
        assert overall["accuracy"] is None and overall["ci_low"] is None
    assert "paired" not in results  # no question was answered in both arms
    cache_db = ResponseCache(cache)
    assert len(cache_db) == 0  # failures are never cached
    cache_db.close()
    assert run.finished_keys() == set()

    # The server is still down (now on another port, which does not block the resume): the next run
    # retries every failed pair, and the newer record wins.
    second = run_evaluation(_config(out, cache, free_port()), progress=False)
    assert (second.answered, second.already_done) == (4, 0)
    assert len(run.samples()) == 8
    assert len(run.final_samples()) == 4
    assert run.results()["n_questions"] == 2
