"""Server fixtures for the backend tests: a real llama.cpp OpenAI-compatible server on 127.0.0.1, and a
small real HTTP server of our own that misbehaves on cue (HTTP errors, stalls) in front of it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipelines.backends.llamacpp_server import LlamaServer
from pipelines.models import smollm2_gguf_path


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The packaged SmolLM2-135M-Instruct GGUF (installed by scripts/setup.sh)."""
    return smollm2_gguf_path()


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path) -> Iterator[LlamaServer]:
    """One real ``python -m llama_cpp.server`` for the whole session, stopped at the end."""
    with LlamaServer(smollm2_gguf, n_ctx=1024, n_threads=2) as server:
        # The first request pays for paging in the weights (seconds on a busy machine); pay it here
        # so that the timeout tests measure the server's steady state.
        warm = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": server.model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1},
            timeout=120,
        )
        warm.raise_for_status()
        yield server


class ScriptedServer:
    """A real HTTP server on 127.0.0.1 that plays a script, then forwards to an upstream server.

    Each POST takes the next step of ``script``: ``("status", 500)`` answers that HTTP status,
    ``("stall", seconds)`` holds the connection without answering, ``("reply", body)`` answers the
    JSON body. With the script used up, requests go to ``upstream`` (the real llama.cpp server), or
    get a 503 when there is none. GET /v1/models answers ``models`` if given, else the upstream's.
    It records every request body and the most requests it ever held at once.
    """

    def __init__(
        self,
        upstream: str | None = None,
        script: list[tuple[str, Any]] | None = None,
        delay_s: float = 0.0,
        models: dict[str, Any] | None = None,
    ):
        self.upstream = upstream.rstrip("/") if upstream else None
        self.script = list(script or [])
        self.delay_s = delay_s
        self.models = models
        self.bodies: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _next_step(self) -> tuple[str, Any]:
        with self._lock:
            return self.script.pop(0) if self.script else ("forward", None)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if owner.models is not None:
                    self._send(200, json.dumps(owner.models).encode())
                elif owner.upstream:
                    upstream = httpx.get(owner.upstream + self.path.removeprefix("/v1"), timeout=60)
                    self._send(upstream.status_code, upstream.content)
                else:
                    self._send(404, b"{}")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with owner._lock:
                    owner.bodies.append(json.loads(raw or b"{}"))
                    owner.in_flight += 1
                    owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
                try:
                    if owner.delay_s:
                        time.sleep(owner.delay_s)
                    kind, arg = owner._next_step()
                    if kind == "status":
                        self._send(int(arg), json.dumps({"error": f"scripted {arg}"}).encode())
                    elif kind == "stall":
                        owner._release.wait(float(arg))
                        self._send(503, b'{"error": "stalled"}')
                    elif kind == "reply":
                        self._send(200, json.dumps(arg).encode())
                    elif owner.upstream:
                        upstream = httpx.post(
                            owner.upstream + self.path.removeprefix("/v1"),
                            content=raw,
                            headers={"Content-Type": "application/json"},
                            timeout=300,
                        )
                        self._send(upstream.status_code, upstream.content)
                    else:
                        self._send(503, b'{"error": "no upstream"}')
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test): nothing to answer
                finally:
                    with owner._lock:
                        owner.in_flight -= 1

        return Handler

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()  # free stalled handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def scripted_server() -> Iterator[Any]:
    """Factory for ScriptedServer instances; each is stopped after the test."""
    started: list[ScriptedServer] = []

    def make(**kwargs: Any) -> ScriptedServer:
        server = ScriptedServer(**kwargs).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()
