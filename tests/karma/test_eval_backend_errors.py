"""A server that stalls fails the run loudly: timeouts, bounded retries, backend errors, exit 1 — and the
same command resumes cleanly once the server answers.

The model is a real llama.cpp OpenAI-compatible server (the packaged SmolLM2 weights). Between karma
and the server sits a small real HTTP proxy on 127.0.0.1 that, while ``stall`` is set, holds every
chat request without answering (the way an overloaded or wedged server behaves) and otherwise
forwards it. ``/v1/models`` is always forwarded, so the model id check sees the real server.
(``--concurrency 1``: llama-cpp-python's server interrupts a request when the next one arrives.)
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.eval import RunDir

pytestmark = [pytest.mark.slow, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 2
TIMEOUT_S = 0.5
RETRIES = 1


class StallingProxy:
    """Forwards to ``upstream``; while ``stall`` is set, POSTs are held unanswered until released."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.stall = True
        self.posts = 0
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _relay(self, response: httpx.Response) -> None:
                self.send_response(response.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)

            def do_GET(self) -> None:
                self._relay(httpx.get(owner.upstream + self.path.removeprefix("/v1"), timeout=60))

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.posts += 1
                if owner.stall:
                    owner.release.wait(60)
                    return
                url = owner.upstream + self.path.removeprefix("/v1")
                headers = {"Content-Type": "application/json"}
                self._relay(httpx.post(url, content=raw, headers=headers, timeout=300))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[StallingProxy, str]]:
    pytest.importorskip("llama_cpp")
    from pipelines.backends.llamacpp_server import LlamaServer

    with LlamaServer(n_ctx=1024, n_threads=2) as server:
        stalling = StallingProxy(server.base_url)
        try:
            yield stalling, server.model
        finally:
            stalling.stop()


def test_stalled_server_gives_backend_errors_exit_1_and_a_clean_resume(
    proxy: tuple[StallingProxy, str], tmp_path: Path
) -> None:
    stalling, model = proxy
    from karma.synth import generate, load_world

    world, run = tmp_path / "world", tmp_path / "run"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=4, seed=0)
    args = [
        "eval", "--data", str(world), "--out", str(run), "--ckg", "off", "--retriever", "none",
        "--limit", str(LIMIT), "--folds", "2", "--constrain-choices", "--max-tokens", "4", "--no-cache",
        "--no-progress", "--concurrency", "1", "--backend", "openai",
        "--backend-opt", f"base_url={stalling.base_url}", "--backend-opt", f"model={model}",
        "--backend-opt", f"timeout_s={TIMEOUT_S}", "--backend-opt", f"max_retries={RETRIES}",
        "--backend-opt", "backoff_s=0.05",
    ]  # fmt: skip

    stalled = CliRunner().invoke(app, args)
    assert stalled.exit_code == 1, stalled.output
    assert "failed in the backend" in stalled.output and "Traceback" not in stalled.output
    assert stalling.posts == LIMIT * (RETRIES + 1)  # each request tried once plus the bounded retries
    records = RunDir(run).samples()
    assert len(records) == LIMIT
    assert all(r.error and r.error.startswith(f"timeout after {TIMEOUT_S:g}s") for r in records)
    results = json.loads((run / "results.json").read_text()) if (run / "results.json").exists() else None
    if results is not None:  # written unless the error-rate guard stopped the run first
        overall = results["arms"]["off"]["overall"]
        assert overall["backend_errors"] == LIMIT and overall["parse_failures"] == 0

    stalling.stall = False  # the server is fixed; the rerun may wait as long as a cold CPU model needs
    rerun = [a.replace(f"timeout_s={TIMEOUT_S}", "timeout_s=600") for a in args]
    resumed = CliRunner().invoke(app, rerun)
    assert resumed.exit_code == 0, resumed.output
    assert f"{LIMIT} answered" in resumed.output and "backend errors 0" in resumed.output
    final = RunDir(run).final_samples()
    assert Counter(r.key for r in final) == Counter({r.key: 1 for r in final}) and len(final) == LIMIT
    assert all(r.error is None and r.raw_completion for r in final)
    results = json.loads((run / "results.json").read_text())
    assert results["arms"]["off"]["overall"]["backend_errors"] == 0
