"""Atomic writes: the target holds the old or the new content, never part of one, and no temp is left."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from karma.core import atomic
from karma.core.errors import InputError


def _fork_and_write(target: Path, data: bytes, point: str) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.environ[atomic.FAULT_ENV] = point
            atomic.atomic_write_bytes(target, data)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def test_write_replaces_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    atomic.atomic_write_json(target, {"a": 1}, sort_keys=True)
    assert target.read_text() == '{"a": 1}\n'
    atomic.atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_kill_before_the_rename_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "index.bin"
    target.write_bytes(b"old" * 1000)
    assert _fork_and_write(target, b"new" * 100000, "atomic.before_rename") == signal.SIGKILL
    assert target.read_bytes() == b"old" * 1000
    leftovers = [p for p in tmp_path.iterdir() if atomic.is_temporary(p)]
    assert len(leftovers) == 1 and leftovers[0].suffix == ".bin"  # the writer's suffix is kept last


def test_failed_writer_leaves_the_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "plot.png"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic.atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_paths_of_the_wrong_kind_are_input_errors(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        atomic.atomic_write_text(tmp_path / "folder", "x")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        atomic.atomic_write_text(tmp_path / "file" / "inside.json", "x")
    with pytest.raises(InputError, match="is a file"), atomic.atomic_directory(tmp_path / "file"):
        pass


def test_directory_swap_replaces_all_files_at_once(tmp_path: Path) -> None:
    target = tmp_path / "g"
    for version in ("v1", "v2"):
        with atomic.atomic_directory(target) as staging:
            (staging / "a").write_text(version)
            if version == "v1":
                (staging / "only_in_v1").write_text(version)
    assert sorted(p.name for p in target.iterdir()) == ["a"]
    assert (target / "a").read_text() == "v2"
    assert [p.name for p in tmp_path.iterdir()] == ["g"]


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # reaped: the pid names no process now
    return pid


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if atomic.is_temporary(p))


def test_next_writer_removes_the_temporary_of_a_writer_killed_by_sigkill(tmp_path: Path) -> None:
    target = tmp_path / "index.bin"
    target.write_bytes(b"old")
    assert _fork_and_write(target, b"new" * 1000, "atomic.before_rename") == signal.SIGKILL
    assert len(_temporaries(tmp_path)) == 1
    atomic.atomic_write_bytes(target, b"next")
    assert target.read_bytes() == b"next"
    assert _temporaries(tmp_path) == []


@pytest.mark.parametrize(
    "writer", ["atomic_path", "atomic_write_text", "atomic_write_json", "temporary_path"]
)
def test_every_writer_removes_dead_leftovers_of_its_own_target_only(tmp_path: Path, writer: str) -> None:
    dead = _dead_pid()
    target = tmp_path / "results.json"
    leftovers = [
        f".results.tmp-{dead}-0a1b2c3d.json",  # a killed writer of this target: removed
        f".results.tmp-new-{dead}-0a1b2c3d.json",
    ]
    kept = [
        f".results.tmp-{os.getppid()}-0a1b2c3d.json",  # a live writer's temporary: kept
        f".results.tmp-{dead}-0a1b2c3d.csv",  # results.csv's leftover, not results.json's
        f".results.v2.tmp-{dead}-0a1b2c3d.json",  # results.v2.json's
    ]
    for name in leftovers + kept:
        (tmp_path / name).write_text("half")
    if writer == "atomic_path":
        with atomic.atomic_path(target) as tmp:
            tmp.write_text("{}")
    elif writer == "atomic_write_text":
        atomic.atomic_write_text(target, "{}")
    elif writer == "atomic_write_json":
        atomic.atomic_write_json(target, {})
    else:  # a streaming writer (Mp4Writer): temporary_path, then publish
        tmp = atomic.temporary_path(target)
        tmp.write_text("{}")
        atomic.publish(tmp, target)
    assert _temporaries(tmp_path) == sorted(kept)
    assert target.read_text().strip() == "{}"


def test_directory_writer_removes_a_dead_staging_folder(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = tmp_path / f".g.tmp-new-{dead}-0a1b2c3d"
    stale.mkdir()
    (stale / "a").write_text("half")
    with atomic.atomic_directory(tmp_path / "g") as staging:
        (staging / "a").write_text("v1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]
