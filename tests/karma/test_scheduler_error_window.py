"""The error-rate stop over a sliding window: an outage after 2,000 good answers is noticed within 30
failed requests (issue 38), not after the 500 the whole-run rate alone would need.

The server is :class:`tests.karma.loopback.LoopbackModelServer` (a boundary double: a real HTTP server
on 127.0.0.1 that starts answering 500 after N good answers); the backend, scheduler and guard are
karma's own. The work stream is finite, so the test ends by itself whether or not the stop fires.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.run.hygiene import ERROR_WINDOW, MIN_JUDGED, ErrorGuard, ErrorRateExceeded, read_hygiene
from karma.run.scheduler import Scheduler, Work
from pipelines.backends import get_backend
from pipelines.backends.base import ChatMessage, ChatRequest, Completion
from tests.karma.loopback import LoopbackModelServer


def _works(n: int) -> list[Work]:
    return [
        Work((f"q{i:05d}", "off"), ChatRequest(messages=[ChatMessage(role="user", content=f"question {i}")]))
        for i in range(n)
    ]


@pytest.mark.timeout(180)
def test_outage_after_2000_good_answers_stops_within_30_failures(tmp_path: Path) -> None:
    written: list[Completion] = []
    with LoopbackModelServer(fail_after=2000) as server:
        backend = get_backend("openai", **server.options())
        guard = ErrorGuard(tmp_path, 0.2)
        guard.start()
        with pytest.raises(ErrorRateExceeded, match="of the last 50 requests") as stop:
            Scheduler(backend, guard=guard).run(_works(2600), lambda w, c, cached: written.append(c))
        backend.close()
        failed_at_server = server.failed
    assert server.good == 2000
    errors = [c for c in written if c.error is not None]
    assert sum(c.error is None for c in written) == 2000
    assert 0 < len(errors) <= 30 and failed_at_server <= 30
    # The whole-run rate alone would have waited for 500 failures (2000 * 0.2 / 0.8).
    state = read_hygiene(tmp_path)["stopped"]
    assert state["window"] == {"requests": ERROR_WINDOW, "backend_errors": len(errors)}
    assert state["backend_errors"] == len(errors) and state["answered"] == len(written)
    assert "HTTP 500" in str(stop.value)


def test_window_needs_a_full_window_and_rate_1_never_stops(tmp_path: Path) -> None:
    # A short call: 9 failures of 9 are below MIN_JUDGED; a call of 10 failing requests stops on the
    # whole-run rate; with --max-error-rate 1 nothing ever stops.
    guard = ErrorGuard(tmp_path, 0.2)
    for i in range(MIN_JUDGED - 1):
        guard.observe(f"q{i}", "off", "boom")
    with pytest.raises(ErrorRateExceeded):
        guard.observe("q9", "off", "boom")
    never = ErrorGuard(tmp_path, 1.0)
    for i in range(500):
        never.observe(f"q{i}", "off", "boom")
    # Good answers then errors below the window's rate: no stop (10 of the last 50 is exactly 0.2).
    calm = ErrorGuard(tmp_path, 0.2)
    for i in range(1000):
        calm.observe(f"q{i}", "off", "boom" if i % 5 == 4 else None)
    assert calm.errors == 200
    assert json.loads((tmp_path / "hygiene.json").read_text())["stopped"]["backend_errors"] == MIN_JUDGED
