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
