"""``karma qa make`` swaps its set in whole (issue 38): a ``kill -9`` at any point leaves ``--out``
holding the old set or the new one, never a mix of two seeds, and a fragment (a staging folder) is
refused by ``karma data validate``.

Real processes, real kills: the command runs as a subprocess and gets SIGKILL at seeded random times,
half of them spread over the whole run and half right after its staging folder appears (inside the
write phase, which is a small part of the run).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core import staging
from karma.core.staging import UNFINISHED
from karma.qa import QaMakeConfig, make_qa

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(scope="module")
def features(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from karma.synth import generate, load_world

    root = tmp_path_factory.mktemp("atomic")
    world = root / "world"
    generate(load_world(REPO / "data" / "worlds" / "tiny.yaml"), world, videos=30, seed=5)
    folder = root / "features"
    folder.mkdir()
    for path in world.glob("*_causal_features.json"):
        (folder / path.name).write_bytes(path.read_bytes())
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _make(features: Path, out: Path, seed: int) -> None:
    make_qa(QaMakeConfig(data=features, out=out, seed=seed, allow_bias=True))


@pytest.fixture(scope="module")
def sets(features: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("sets")
    out = {}
    for seed in (0, 1):
        _make(features, root / f"seed{seed}", seed)
        out[seed] = _files(root / f"seed{seed}")
    assert out[0] != out[1] and set(out[0]) == set(out[1])  # same files, other questions
    return out


def _staging_dirs(out: Path) -> list[Path]:
    return [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.staging-")]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_kill_9_at_random_points_leaves_the_old_set_or_the_new_one(
    features: Path, sets: dict[int, dict[str, bytes]], tmp_path: Path
) -> None:
    out = tmp_path / "qa"
    _make(features, out, 0)
    current = 0
    rng = random.Random(38)
    argv = [sys.executable, "-m", "karma.cli.main", "qa", "make", "--data", str(features), "--out", str(out),
            "--allow-bias", "--seed"]  # fmt: skip
    started = time.monotonic()
    subprocess.run([*argv, "0"], check=True, capture_output=True, timeout=300)  # a whole run: its length
    whole = time.monotonic() - started
    outcomes = {"old": 0, "new": 0}
    fragments = 0
    for trial in range(8):
        new = 1 - current
        process = subprocess.Popen([*argv, str(new)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if trial % 2 == 0:
                time.sleep(rng.uniform(0.3, 1.1) * whole)
            else:  # inside the write phase: once the staging folder exists, a few milliseconds on
                deadline = time.monotonic() + 300
                while not _staging_dirs(out) and process.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.002)
                time.sleep(rng.uniform(0.0, 0.05))
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.wait()
        state = _files(out)
        assert state in (sets[current], sets[new]), f"trial {trial}: a mix of two sets"
        assert not (out / UNFINISHED).exists()
        outcomes["new" if state == sets[new] else "old"] += 1
        current = new if state == sets[new] else current
        for leftover in _staging_dirs(out):  # a fragment: refused, never called valid
            if not any(leftover.iterdir()):
                continue  # killed between creating the folder and marking it: holds nothing
            fragments += 1
            result = runner.invoke(app, ["data", "validate", str(leftover)])
            assert result.exit_code == 2 and "unfinished output folder" in result.output, result.output
    assert runner.invoke(app, ["data", "validate", str(out)]).exit_code == 0
    # The next run clears the dead runs' staging folders and completes.
    _make(features, out, 1 - current)
    assert _files(out) == sets[1 - current] and not _staging_dirs(out)
    assert outcomes["old"] + outcomes["new"] == 8


def test_a_failure_while_writing_leaves_the_old_set(
    features: Path, sets: dict[int, dict[str, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import karma.qa.make as make

    out = tmp_path / "qa"
    _make(features, out, 0)
    (out / "notes.txt").write_text("my notes")  # not part of the set: carried over by a later make
    real = make.atomic_write_text
    calls = {"n": 0}

    def failing(path: Path, text: str) -> Path:
        calls["n"] += 1
        if calls["n"] == 7:
            raise OSError(28, "No space left on device", str(path))
        return real(path, text)

    monkeypatch.setattr(make, "atomic_write_text", failing)
    with pytest.raises(OSError):
        _make(features, out, 1)
    assert {k: v for k, v in _files(out).items() if k != "notes.txt"} == sets[0] and not _staging_dirs(out)
    monkeypatch.setattr(make, "atomic_write_text", real)
    _make(features, out, 1)
    assert _files(out) == {**sets[1], "notes.txt": b"my notes"}


def test_without_rename_exchange_the_two_rename_path_swaps_and_recovers(
    features: Path, sets: dict[int, dict[str, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(staging, "_exchange", lambda a, b: False)
    out = tmp_path / "qa"
    _make(features, out, 0)
    _make(features, out, 1)
    assert _files(out) == sets[1]
    # A kill between the two renames: no --out, the old set aside under a dead pid; the next call
    # puts it back before anything else.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    os.rename(out, out.parent / f".{out.name}.old-{dead.pid}-0000")
    staging.recover(out)
    assert _files(out) == sets[1]
