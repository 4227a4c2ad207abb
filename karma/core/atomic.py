"""Atomic writes: a kill at any instant leaves the old file (or folder) or the new one, never half of one.

Every file karma produces goes through one of these helpers:

* :func:`atomic_write_bytes` / :func:`atomic_write_text` / :func:`atomic_write_json` for content in
  memory;
* :func:`atomic_path` for writers that want a path (``pyarrow.parquet.write_table``,
  ``networkx.write_graphml``, ``matplotlib``'s ``savefig``, PyAV, ``numpy.save``): they write a
  temporary file in the same folder, which is fsynced and renamed over the target only when the
  writer returned without an exception;
* :func:`atomic_directory` for a folder of several files that belong together (a graph folder): the
  new folder is staged as a sibling and swapped in with one rename (``renameat2(RENAME_EXCHANGE)``
  on Linux), so a reader never sees files of two versions side by side.

The temporary names start with ``.`` and contain ``.tmp-`` plus the pid, so a leftover from a
killed writer is easy to recognise (:func:`is_temporary`) and is removed by the next writer of the
same target (every helper here calls :func:`_remove_leftovers` before making its own temporary;
temporaries whose pid is still running are kept).

:func:`fault_point` is a test hook: with ``KARMA_FAULT_POINT=name`` (or ``name:N`` for the N-th hit)
in the environment the process kills itself with SIGKILL at that point, the way a crash or an
out-of-memory kill would.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import re
import secrets
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FAULT_ENV = "KARMA_FAULT_POINT"
"""Environment variable naming the fault point at which the process SIGKILLs itself (tests only)."""

_TMP_MARK = ".tmp-"
_fault_hits: dict[str, int] = {}


def fault_point(name: str) -> None:
    """Kill this process with SIGKILL here when ``$KARMA_FAULT_POINT`` names this point.

    ``KARMA_FAULT_POINT=graph.file`` kills at the first hit, ``graph.file:3`` at the third. Does
    nothing (one environment lookup) when the variable is unset.
    """
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    target, _, count = wanted.partition(":")
    if target != name:
        return
    _fault_hits[name] = _fault_hits.get(name, 0) + 1
    if _fault_hits[name] >= int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def _temp_name(target: Path, kind: str = "") -> Path:
    # Keep the real suffix last: some writers pick the format from it (savefig, PyAV).
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    return target.with_name(f".{target.stem}{_TMP_MARK}{kind}{token}{target.suffix}")


def temporary_path(target: str | Path) -> Path:
    """A fresh temporary name beside ``target`` for a streaming writer that ends with :func:`publish`."""
    target = Path(target)
    _check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(target)
    return _temp_name(target)


def is_temporary(path: Path) -> bool:
    """True for a temporary file or folder of these helpers (a leftover of a killed writer)."""
    return path.name.startswith(".") and _TMP_MARK in path.name


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new entry in ``folder`` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with path.open("rb") as fh:
        os.fsync(fh.fileno())


def _leftover_pattern(target: Path) -> re.Pattern[str]:
    """The temporary names :func:`_temp_name` gives for ``target`` (any pid, any kind, any token)."""
    return re.compile(
        rf"\.{re.escape(target.stem)}{re.escape(_TMP_MARK)}(?:new-|old-)?(\d+)-[0-9a-f]+{re.escape(target.suffix)}"
    )


def _remove_leftovers(target: Path) -> None:
    """Delete temporaries of earlier writers of ``target`` that were killed (not of live ones).

    Called by every writer before it makes its own temporary (:func:`atomic_path` and so every
    ``atomic_write_*``, :func:`temporary_path` for streaming writers, :func:`atomic_directory`).
    Only names of exactly this target's form are touched: ``.a.tmp-...csv`` of ``a.csv`` is not a
    leftover of ``a.json``; a temporary whose pid is alive (a concurrent writer) is kept.
    """
    parent = target.parent
    prefix = f".{target.stem}{_TMP_MARK}"
    try:  # one listing per write (measured: about 6 ms in a folder of 20,000 files)
        with os.scandir(parent) as entries:
            names = [e.name for e in entries if e.name.startswith(prefix)]
    except OSError:
        return
    pattern = _leftover_pattern(target)
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or _pid_alive(int(match.group(1))):
            continue
        entry = parent / name
        with contextlib.suppress(OSError):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_target(target: Path) -> None:
    from karma.core.errors import InputError

    if target.is_dir() and not target.is_symlink():
        raise InputError(f"{target}: is a folder, expected a file path to write")
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise InputError(f"{parent}: is a file, expected a folder to write {target.name} into")


def publish(tmp: str | Path, target: str | Path) -> Path:
    """Finish a write that a streaming writer made to ``tmp`` (same folder): fsync, rename, fsync folder.

    For writers that own their temporary file (clip encoders); others use :func:`atomic_path`.
    """
    tmp, target = Path(tmp), Path(target)
    _fsync_file(tmp)
    fault_point("atomic.before_rename")
    os.replace(tmp, target)
    fsync_dir(target.parent)
    return target


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success fsync it and rename it over ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    _check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(target)
    tmp = _temp_name(target)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"{tmp}: the writer produced no file for {target}")
        publish(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    target = Path(path)
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return target


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | Path, payload: Any, **dumps: Any) -> Path:
    """``json.dumps(payload, **dumps)`` plus a newline, written atomically; returns ``path``."""
    return atomic_write_text(path, json.dumps(payload, **dumps) + "\n")


# -- folders -------------------------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with Linux ``renameat2(RENAME_EXCHANGE)``; False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: filesystem or kernel without it
        return False
    raise OSError(errno, os.strerror(errno), str(b))


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder; on success swap it in place of ``path`` as one step.

    Files the caller writes into the staging folder may be written plainly (the folder is invisible
    until the swap); they are fsynced before it. An existing ``path`` is replaced as a whole (its
    old files go with it). On an exception the staging folder is removed and ``path`` is untouched.
    Where the atomic exchange is unavailable the old folder is renamed aside first and the new one
    renamed in; :func:`recover_directory` restores the old one if a kill fell between the two.
    """
    from karma.core.errors import InputError

    target = Path(path)
    if target.exists() and not target.is_dir():
        raise InputError(f"{target}: is a file, expected a folder to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_directory(target)
    _remove_leftovers(target)
    staging = _temp_name(target, "new-")
    staging.mkdir()
    try:
        yield staging
        for entry in sorted(staging.rglob("*")):
            if entry.is_file():
                _fsync_file(entry)
        fsync_dir(staging)
        fault_point("atomic.before_swap")
        if target.exists():
            if _exchange(staging, target):
                old = staging  # after the exchange the staging name holds the old folder
            else:
                old = _temp_name(target, "old-")
                os.rename(target, old)
                fault_point("atomic.between_renames")
                os.rename(staging, target)
            fsync_dir(target.parent)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, target)
            fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def recover_directory(path: str | Path) -> bool:
    """Put back a folder that a killed :func:`atomic_directory` moved aside and never replaced.

    Returns True when it restored one. Only needed on filesystems without ``RENAME_EXCHANGE``.
    """
    target = Path(path)
    if target.exists() or not target.parent.is_dir():
        return False
    prefix = f".{target.stem}{_TMP_MARK}old-"
    olds = sorted(p for p in target.parent.iterdir() if p.name.startswith(prefix) and p.is_dir())
    if not olds:
        return False
    os.rename(olds[-1], target)
    fsync_dir(target.parent)
    return True
