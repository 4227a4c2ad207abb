"""Backend health: the model id is checked against the server's ``/v1/models``; a stalled server times
out with bounded retries and reports backend errors, never a parse failure.

The server is a small real HTTP server on 127.0.0.1 (a stand-in for the OpenAI-compatible server at
the HTTP boundary: it lists one served model and stalls or answers on cue); the client is the real
``OpenAIBackend`` over real sockets.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from karma.core.errors import InputError
from pipelines.backends.base import ChatMessage, ChatRequest
from pipelines.backends.openai_compat import ModelMismatchError, OpenAIBackend

SERVED = "SmolLM2-135M-Instruct-Q8_0"


class _Server:
    def __init__(self, stall_s: float = 0.0) -> None:
        self.stall_s = stall_s
        self.posts = 0
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": SERVED, "owned_by": "llamacpp"}]})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.posts += 1
                if owner.stall_s:
                    owner.release.wait(owner.stall_s)
                    return  # hang up without an answer
                self._send({"choices": [{"message": {"content": "a"}, "finish_reason": "stop"}]})

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


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.stop()


def _request() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="Answer a.")], max_tokens=2)


def test_a_model_the_server_does_not_serve_is_an_error(server: _Server) -> None:
    backend = OpenAIBackend(base_url=server.base_url, model="gpt-4o", max_retries=0)
    with pytest.raises(ModelMismatchError) as caught:
        _ = backend.model_id
    assert isinstance(caught.value, InputError)
    assert "'gpt-4o' is not served" in str(caught.value) and SERVED in str(caught.value)
    backend.close()


def test_warn_mode_uses_and_records_the_served_model(
    server: _Server, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = OpenAIBackend(base_url=server.base_url, model="gpt-4o", model_check="warn", max_retries=0)
    assert backend.model_id == SERVED
    assert backend.settings["model"] == SERVED and backend.settings["requested_model"] == "gpt-4o"
    assert "warning: model 'gpt-4o' is not served" in capsys.readouterr().err
    assert backend.request_body(_request())["model"] == SERVED
    assert backend.generate([_request()])[0].text == "a"
    backend.close()


def test_the_served_model_passes_and_settings_stay_as_before(server: _Server) -> None:
    backend = OpenAIBackend(base_url=server.base_url, model=SERVED, choice_mode="prompt")
    assert backend.model_id == SERVED and "requested_model" not in backend.settings
    assert backend.generate([_request()])[0].error is None
    backend.close()


def test_stalled_server_times_out_with_bounded_retries() -> None:
    stalled = _Server(stall_s=30)
    try:
        backend = OpenAIBackend(
            base_url=stalled.base_url, model=SERVED, timeout_s=0.3, max_retries=2, backoff_s=0.05
        )
        started = time.monotonic()
        [done] = backend.generate([_request()])
        elapsed = time.monotonic() - started
        backend.close()
    finally:
        stalled.stop()
    assert stalled.posts == 3  # one try and exactly max_retries more
    assert done.error is not None and done.error.startswith("timeout after 0.3s")
    assert done.meta["attempts"] == 3 and done.text == ""
    assert 0.9 <= elapsed < 10  # three real timeouts, no endless waiting
