"""A boundary double for a model server: a real HTTP server on 127.0.0.1 that speaks the part of the
OpenAI chat API karma's ``openai`` backend uses, and fails on cue.

Why a double: the faults under test (HTTP 500s, a server that dies after 2,000 good answers, one that
hangs, one without log-probabilities) cannot be produced on demand by the real llama.cpp server, and
the backend under test must be the real one (``pipelines.backends.openai_compat``) talking real HTTP.
Only loopback addresses are used. Each test starts its own server and stops it (``stop`` frees
hanging handlers, so no test waits on one).

``mode`` decides every POST as it arrives: ``"ok"`` answers ``reply(body)``, ``"500"`` answers HTTP
500, ``"hang"`` holds the connection until :meth:`stop` (or ``hang_s``). ``fail_after=N`` turns the
mode to ``"500"`` after N good answers (an outage in the middle of a run). ``/v1/completions`` answers
without ``logprobs``, as a server that cannot score options does.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "loopback-double"


def dead_port_url() -> str:
    """A loopback URL nobody listens on (the port was bound, then closed): connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class LoopbackModelServer:
    """See the module docstring. Counts the chat requests it answered well and badly."""

    def __init__(
        self,
        reply: Callable[[dict[str, Any]], str] = lambda body: "a",
        mode: str = "ok",
        fail_after: int | None = None,
        hang_s: float = 120.0,
    ) -> None:
        self.reply = reply
        self.mode = mode
        self.fail_after = fail_after
        self.hang_s = hang_s
        self.good = 0
        self.failed = 0
        self.prompts: list[str] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def options(self, **extra: Any) -> dict[str, Any]:
        """``--backend-opt`` values for the ``openai`` backend aimed at this server (no retries, short
        timeout and backoff, so a failing request costs milliseconds)."""
        return {"base_url": self.base_url, "model": MODEL, "max_retries": 0, "timeout_s": 2.0, **extra}

    def _decide(self) -> str:
        with self._lock:
            if self.fail_after is not None and self.good >= self.fail_after:
                self.mode = "500"
            return self.mode

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": MODEL, "owned_by": "loopback"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                mode = owner._decide()
                try:
                    if mode == "hang":
                        owner._release.wait(owner.hang_s)
                        return
                    if mode != "ok":
                        with owner._lock:
                            owner.failed += 1
                        self._send(500, {"error": "loopback double: scripted outage"})
                        return
                    if self.path.endswith("/completions") and not self.path.endswith("chat/completions"):
                        self._send(200, {"choices": [{"text": "", "index": 0, "logprobs": None}]})
                        return
                    text = owner.reply(body)
                    with owner._lock:
                        owner.good += 1
                        owner.prompts.append(str(body["messages"][-1]["content"]))
                    self._send(
                        200,
                        {
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                        },
                    )  # fmt: skip
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        return Handler

    def start(self) -> LoopbackModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
