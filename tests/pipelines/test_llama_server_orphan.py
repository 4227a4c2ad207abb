"""A llama.cpp server outlives nothing: when the process that started it is killed with SIGKILL (a
test runner stopped hard, a ``karma`` command killed), the server ends too instead of holding its
port and its memory forever (pipelines/backends/llamacpp_server.py, ``PR_SET_PDEATHSIG``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")

STARTER = """
import sys, time
from pipelines.backends.llamacpp_server import LlamaServer
server = LlamaServer(sys.argv[1], n_ctx=256, n_threads=1).start()
print(server._proc.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by init) counts as ended.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_server_ends_when_its_starter_is_killed(smollm2_gguf: Path) -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(smollm2_gguf)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    server_pid = 0
    try:
        assert starter.stdout is not None
        line = starter.stdout.readline()
        assert line.strip().isdigit(), f"the starter printed {line!r} instead of the server's pid"
        server_pid = int(line)
        assert _alive(server_pid)
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(server_pid), "the server outlived the process that started it"
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(timeout=30)
        if server_pid and _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)
