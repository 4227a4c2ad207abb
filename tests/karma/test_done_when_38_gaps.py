"""Issue 38's "Done when" parts that had no test asserting them end to end (the evidence audit of
issue 38 found only a unit test of the batch/concurrency choice, and the
lock refusal only for ``qa verify``):

* a task run really takes the backend's concurrency: requests overlap at the server up to the
  ``openai`` backend's ``max_concurrency`` (and one at a time when ``--concurrency 1`` is given);
* a task run really takes the backend's batch: the ``transformers`` backend is called with batches
  of its own ``batch_size``, not one request a call;
* two ``karma qa paraphrase`` runs on one ``--out``: the second is refused naming the first's pid.

Real components: karma's ``openai`` backend over HTTP to :class:`tests.karma.loopback.LoopbackModelServer`
(a boundary double: a real HTTP server on 127.0.0.1, here one whose replies take a moment so that
overlap can be seen), the tiny random Llama of ``pipelines/tiny_models.py`` on the real
``transformers`` backend, the real task runner and the real CLI. Overlap is read from the server's
own count of requests in flight; no test asserts a time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.tasks.runner import TaskRunConfig, run_task
from tests.karma.loopback import MODEL, LoopbackModelServer
from tests.karma.test_qa_verify import made  # noqa: F401 (fixture: a karma qa make folder)

REPO = Path(__file__).resolve().parents[2]
WILDSCORE = REPO / "tests" / "tasks" / "fixtures" / "wildscore"
ITEMS = 8
"""Rows of the WildScore fixture: one text-only request each."""


class InFlight:
    """A reply for the loopback server that holds each request a moment and records the most requests
    the server was answering at once (the handler threads call it concurrently)."""

    def __init__(self, hold_s: float = 0.25) -> None:
        self.hold_s = hold_s
        self.now = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.hold_s)
        with self._lock:
            self.now -= 1
        return "ANSWER: A"


def _config(tmp_path: Path, out: str, **extra: Any) -> TaskRunConfig:
    return TaskRunConfig(
        task="wildscore", data=str(WILDSCORE), out=str(tmp_path / out), arms=["text_only"],
        max_tokens=4, bootstrap_resamples=100, use_cache=False, **extra,
    )  # fmt: skip


@pytest.mark.timeout(120)
def test_a_task_run_overlaps_requests_up_to_the_backends_concurrency(tmp_path: Path) -> None:
    reply = InFlight()
    with LoopbackModelServer(reply=reply) as server:
        wide = run_task(
            _config(tmp_path, "wide", backend="openai", backend_options=server.options(max_concurrency=4))
        )
        assert wide.answered == ITEMS and server.good == ITEMS
        assert 2 <= reply.most <= 4, f"at most {reply.most} requests in flight with max_concurrency=4"
        narrow_reply = InFlight()
        server.reply = narrow_reply
        options = server.options(max_concurrency=4)
        narrow = run_task(
            _config(tmp_path, "narrow", backend="openai", backend_options=options, concurrency=1)
        )
        assert narrow.answered == ITEMS and narrow_reply.most == 1  # a given --concurrency wins


@pytest.mark.timeout(300)
def test_a_task_run_calls_a_batching_backend_with_its_batch(tmp_path: Path) -> None:
    from pipelines.backends.hf_transformers import TransformersBackend
    from pipelines.tiny_models import tiny_llama_folder

    model = tiny_llama_folder(tmp_path / "tiny-llama")
    backend = TransformersBackend(str(model), batch_size=4)
    calls: list[int] = []
    real = backend.generate

    def recording(requests: list[Any]) -> list[Any]:
        calls.append(len(requests))
        return real(requests)

    backend.generate = recording  # type: ignore[method-assign]  # a spy on the real backend's calls
    try:
        batched = run_task(_config(tmp_path, "batched", backend="transformers"), backend=backend)
        assert batched.answered == ITEMS and sum(calls) == ITEMS
        assert max(calls) == 4 and len(calls) == ITEMS // 4, calls  # the backend's own batch
        calls.clear()
        single = run_task(_config(tmp_path, "single", backend="transformers", batch_size=1), backend=backend)
        assert single.answered == ITEMS and calls == [1] * ITEMS  # a given --batch-size wins
    finally:
        backend.close()


@pytest.mark.timeout(120)
def test_a_second_qa_paraphrase_on_the_same_out_is_refused(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "paraphrased"
    with LoopbackModelServer(mode="hang") as server:
        options = ["--backend", "openai", "--backend-opt", f"base_url={server.base_url}",
                   "--backend-opt", f"model={MODEL}", "--backend-opt", "max_retries=0"]  # fmt: skip
        command = ["qa", "paraphrase", str(made), "--out", str(out), "--limit", "3", "--allow-bias"]
        first = subprocess.Popen(
            [sys.executable, "-m", "karma.cli.main", *command, *options, "--backend-opt", "timeout_s=60"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            lock = out / ".karma.lock"
            while time.monotonic() < deadline and not (lock.is_file() and lock.read_text().strip()):
                time.sleep(0.05)
            assert first.poll() is None, "the first run ended before the second started"
            second = CliRunner().invoke(app, [*command, *options, "--backend-opt", "timeout_s=2"])
            assert second.exit_code == 2, second.output
            assert f"pid {first.pid}" in second.output and "in use by another karma" in second.output
            assert "Traceback" not in second.output
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()


@pytest.mark.timeout(120)
def test_task_runs_refuse_the_other_configuration_errors_before_their_folder_exists(tmp_path: Path) -> None:
    """tests/karma/test_config_preflight.py checks three cases on a task run; these are the rest of the
    issue's list as a task run meets them: exit 2, one line, no run folder, no request."""
    with LoopbackModelServer() as server:
        openai = [
            "--backend",
            "openai",
            "--backend-opt",
            f"model={MODEL}",
            "--backend-opt",
            f"base_url={server.base_url}",
        ]
        cases = {
            "max_concurrency=0": (
                [*openai, "--backend-opt", "max_concurrency=0"],
                "max_concurrency must be at least 1",
            ),
            "llamacpp model_path missing": (
                ["--backend", "llamacpp", "--backend-opt", f"model_path={tmp_path / 'no.gguf'}"],
                "no such file or folder",
            ),
            "transformers model missing": (
                ["--backend", "transformers", "--backend-opt", f"model={tmp_path / 'no-model'}"],
                "no such file or folder",
            ),
            "--device on a task run": ([*openai, "--device", "cuda"], "cannot honour this option"),
            "--answer-mode loglik on wildscore": (
                [*openai, "--answer-mode", "loglik"],
                "cannot honour this option",
            ),
        }
        if not _cuda_available():
            cases["transformers device=cuda"] = (
                ["--backend", "transformers", "--backend-opt", "device=cuda"],
                "torch sees no CUDA device",
            )
        for name, (arguments, phrase) in cases.items():
            out = tmp_path / f"run-{len(name)}-{abs(hash(name))}"
            done = CliRunner().invoke(
                app,
                ["eval", "--task", "wildscore", "--data", str(WILDSCORE), "--out", str(out), "--arms", "text_only",
                 "--no-progress", *arguments],
            )  # fmt: skip
            errors = [line for line in done.output.splitlines() if line.startswith("error:")]
            assert done.exit_code == 2 and len(errors) == 1 and phrase in errors[0], (name, done.output)
            assert "Traceback" not in done.output and not out.exists(), name
        assert server.good == 0 and server.failed == 0


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
