"""Task runs on the run driver's contract (issue 38 item 3): the response cache and the backend's batch.

Before ``karma.run.driver`` a task run asked every request again on a rerun in a fresh folder and ran
batch 1 / concurrency 1 whatever the backend could do. The backend here is the real ``openai``
backend talking HTTP to the loopback server double (tests/karma/loopback.py), which counts the
requests it answered; the WildScore fixture's text-only arm keeps it model-free.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.run.driver import batching
from karma.tasks.runner import TaskRunConfig, run_task
from pipelines.backends.preflight import open_backend
from tests.karma.loopback import LoopbackModelServer

WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"


def _config(tmp_path: Path, out: str, server: LoopbackModelServer, **extra) -> TaskRunConfig:  # type: ignore[no-untyped-def]
    return TaskRunConfig(
        task="wildscore", data=str(WILDSCORE), out=str(tmp_path / out), arms=["text_only"],
        backend="openai", backend_options=server.options(), cache_path=str(tmp_path / "responses.sqlite"),
        max_tokens=4, bootstrap_resamples=100, **extra,
    )  # fmt: skip


def _samples(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_a_rerun_in_a_fresh_folder_is_answered_from_the_response_cache(tmp_path: Path) -> None:
    with LoopbackModelServer(reply=lambda body: "ANSWER: A") as server:
        first = run_task(_config(tmp_path, "first", server))
        assert first.answered == 8 and first.cache_hits == 0 and server.good == 8
        again = run_task(_config(tmp_path, "again", server))
        assert again.answered == 8 and again.cache_hits == 8
        assert server.good == 8  # nothing was sent again
        off = run_task(_config(tmp_path, "off", server, use_cache=False))
        assert off.cache_hits == 0 and server.good == 16
    first_s, again_s = _samples(tmp_path / "first"), _samples(tmp_path / "again")
    assert all(s["cached"] for s in again_s) and not any(s["cached"] for s in first_s)
    assert all(s["latency_s"] == 0.0 for s in again_s)
    key = lambda s: (s["item_id"], s["prompt_hash"], s["raw_completion"], s["correct"])  # noqa: E731
    assert sorted(map(key, first_s)) == sorted(map(key, again_s))


def test_a_failed_request_is_not_cached_and_a_rerun_asks_it_again(tmp_path: Path) -> None:
    with LoopbackModelServer(reply=lambda body: "ANSWER: A", fail_after=5) as server:
        broken = run_task(_config(tmp_path, "run", server, max_error_rate=1.0))
        assert broken.backend_errors == 3
    with LoopbackModelServer(reply=lambda body: "ANSWER: B") as healthy:
        fixed = run_task(_config(tmp_path, "run", healthy))
        assert fixed.answered == 3 and fixed.cache_hits == 0 and healthy.good == 3
        assert fixed.backend_errors == 0


def test_task_runs_take_the_backends_concurrency_and_batch_unless_given(tmp_path: Path) -> None:
    with LoopbackModelServer() as server:
        backend = open_backend("openai", server.options(max_concurrency=6))
        try:
            assert batching(backend, backend_name="openai") == (1, 6)
            assert batching(backend, batch_size=2, concurrency=3, backend_name="openai") == (2, 3)
        finally:
            backend.close()

    class Batching:  # the preference a batching backend states (TransformersBackend.preferred_batch_size)
        max_concurrency = 1

        def preferred_batch_size(self, pending: int) -> int:
            return min(pending, 12)

    assert batching(Batching(), pending=40) == (12, 1)
    assert batching(object(), backend_name="transformers") == (16, 1)  # batches in one call, no preference
    assert batching(object(), backend_name="llamacpp") == (1, 1)


def test_a_cache_path_that_is_a_folder_is_refused_before_the_run_folder(tmp_path: Path) -> None:
    from karma.core.errors import InputError

    (tmp_path / "responses.sqlite").mkdir()
    with LoopbackModelServer() as server:
        with pytest.raises(InputError, match="--cache is a folder"):
            run_task(_config(tmp_path, "run", server))
        assert server.good == 0
    assert not (tmp_path / "run").exists()
