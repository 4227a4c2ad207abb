"""FolderLock: one holder per folder, named in the refusal; a killed holder's lock is taken over.

Holders are real processes (``python -c``), killed with SIGKILL where the test needs a dead one.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.core.lock import LOCK_FILE, FolderLock, LockedError

HOLD = "import sys, time; from karma.core.lock import FolderLock; l = FolderLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(120)"


def _holder(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_holder_is_refused_naming_pid_and_host(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    try:
        with pytest.raises(LockedError) as caught:
            FolderLock(tmp_path).acquire()
        message = str(caught.value)
        assert f"pid {proc.pid} on host {socket.gethostname()}" in message
        assert isinstance(caught.value, InputError) and caught.value.exit_code == 2
    finally:
        proc.kill()
        proc.wait()


def test_lock_of_a_killed_holder_is_taken_over(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lock = FolderLock(tmp_path)
    assert lock.read_holder()["pid"] == proc.pid  # the dead holder is still written in the file
    with lock:
        assert lock.stale_holder is not None and lock.stale_holder["pid"] == proc.pid
        assert f"pid {proc.pid}" in (lock.stale_note() or "")
        assert lock.read_holder()["pid"] == os.getpid()
    assert (tmp_path / LOCK_FILE).read_text() == ""
    with FolderLock(tmp_path) as again:  # a clean release leaves nothing stale
        assert again.stale_holder is None


def test_lock_is_reentrant_free_and_refuses_a_file(tmp_path: Path) -> None:
    with FolderLock(tmp_path / "run") as lock:
        assert lock.held
        with pytest.raises(LockedError):  # a second lock object in the same process is refused too
            FolderLock(tmp_path / "run").acquire()
    assert not lock.held
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        FolderLock(tmp_path / "file").acquire()


WRITE = """
import sys
from pathlib import Path
from karma.run.cache import ResponseCache
from pipelines.backends.base import Completion
cache = ResponseCache(Path(sys.argv[1]))
tag = sys.argv[2]
for i in range(200):
    cache.put(f"{tag}-{i}", "m", Completion(text=f"{tag}:{i}"))
    cache.put(f"shared-{i}", "m", Completion(text=f"shared:{i}"))
cache.close()
"""


def test_runs_on_different_folders_share_one_cache_correctly(tmp_path: Path) -> None:
    from karma.run.cache import ResponseCache

    path = tmp_path / "responses.sqlite"
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", WRITE, str(path), tag]) for tag in ("a", "b", "c")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    cache = ResponseCache(path)
    try:
        assert len(cache) == 3 * 200 + 200
        for tag in ("a", "b", "c"):
            assert all(cache.get(f"{tag}-{i}").text == f"{tag}:{i}" for i in range(200))
        assert all(cache.get(f"shared-{i}").text == f"shared:{i}" for i in range(200))
    finally:
        cache.close()
    assert time.monotonic() - started < 120
