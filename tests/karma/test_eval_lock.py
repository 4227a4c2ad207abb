"""Two ``karma eval`` runs on one --out: the second exits 2 at once naming the first; after a kill -9
of the first, a rerun takes over the stale lock and resumes with nothing lost and nothing doubled.

Real processes and the embedded backend (llama.cpp in-process with the packaged SmolLM2 weights).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from karma.core.lock import LOCK_FILE, FolderLock
from karma.eval import RunDir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1  # one question x two arms: the kill falls between its two records


def _command(world: Path, out: Path, cache: Path) -> list[str]:
    return [
        sys.executable, "-m", "karma.cli.main", "eval", "--model", "smollm2-135m",
        "--data", str(world), "--out", str(out), "--ckg", "both", "--retriever", "keyword",
        "--k", "4", "--limit", str(LIMIT), "--folds", "3", "--constrain-choices", "--max-tokens", "4",
        "--cache", str(cache), "--no-progress",
    ]  # fmt: skip


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().split("\n")[:-1] if line.strip()] if path.exists() else []


def test_second_run_on_one_out_exits_2_and_a_killed_run_resumes_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from karma.synth import generate, load_world

    world, run, cache = tmp_path / "world", tmp_path / "run", tmp_path / "cache.sqlite"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=6, seed=0)
    command = _command(world, run, cache)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        lock = FolderLock(run)
        deadline = time.monotonic() + 300
        while (lock.read_holder() or {}).get("pid") != first.pid:
            assert first.poll() is None, first.stdout.read().decode()
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.05)
        started = time.monotonic()
        second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"pid {first.pid} on host {socket.gethostname()}" in second.stderr
        assert "Traceback" not in second.stderr and len(second.stderr.strip().splitlines()) == 1
        assert first.poll() is None, "the refused run must not disturb the running one"
        assert time.monotonic() - started < 60  # at once: it never loaded the data or the model

        samples = run / "samples.jsonl"
        while not _lines(samples):
            assert first.poll() is None, first.stdout.read().decode()
            assert time.monotonic() < deadline + 600, "no record was written"
            time.sleep(0.05)
    finally:
        if first.poll() is None:
            os.kill(first.pid, signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL
    before = _lines(samples)
    assert 0 < len(before) < LIMIT * 2
    assert (lock.read_holder() or {}).get("pid") == first.pid  # the dead run's holder is still recorded

    resumed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"took over the lock of a run that ended without releasing it, pid {first.pid}" in resumed.stderr
    assert f"{len(before)} already done" in resumed.stdout
    keys = Counter(r.key for r in RunDir(run).samples())
    assert len(keys) == LIMIT * 2 and set(keys.values()) == {1}  # 0 lost, 0 duplicated
    assert _lines(samples)[: len(before)] == before
    assert (run / LOCK_FILE).read_text() == ""  # released on a clean exit
