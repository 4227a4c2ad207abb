"""Replace a whole output folder at once: write it in a staging folder beside it, then swap it in.

A ``kill -9`` in the middle of writing a set of files (``karma qa make``'s QA files, feature copies,
grounding and manifest) used to leave a folder mixing the old set and the new one, or a fragment
without its manifest that still read as a valid dataset. With :func:`staged_folder` the files go to
``.<name>.staging-<pid>-<random>`` beside ``out``, which holds :data:`UNFINISHED` until the set is
complete and fsynced; then the staging folder and ``out`` trade places in one ``renameat2(2)`` call
with ``RENAME_EXCHANGE`` (Linux 3.15+, ext4/xfs/btrfs/tmpfs/overlayfs), and the old set is removed.
So a kill at any point leaves ``out`` holding the old set or the new one, and any fragment sits in a
staging folder whose marker makes ``karma data validate`` refuse it (exit 2).

Where the exchange is not supported, ``out`` is renamed aside and the staging folder renamed in (two
renames: a kill between them leaves no ``out`` but the old set complete in ``.<name>.old-<pid>``,
which the next call puts back before doing anything else). Leftover staging folders of processes
that are no longer alive are removed by the next call.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

UNFINISHED = ".karma-unfinished"
"""Marker file inside a staging folder until its set is complete (a reader refuses the folder)."""
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def is_unfinished(folder: str | Path) -> bool:
    """Whether ``folder`` is a staging folder whose set was never completed."""
    return (Path(folder) / UNFINISHED).is_file()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _leftovers(out: Path, kind: str) -> list[tuple[Path, int]]:
    """(path, pid) of ``.<name>.<kind>-<pid>-...`` folders beside ``out``."""
    found = []
    prefix = f".{out.name}.{kind}-"
    if not out.parent.is_dir():
        return found
    for path in out.parent.iterdir():
        if path.name.startswith(prefix) and path.is_dir():
            pid = path.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit():
                found.append((path, int(pid)))
    return found


def remove_fragment(folder: Path) -> None:
    """Delete a staging folder (or an old set) so that at every instant of the deletion what is left
    is marked unfinished: the marker goes in first and out last (a kill mid-way leaves a marked
    fragment, never an unmarked part of a set)."""
    marker = folder / UNFINISHED
    if not marker.exists():
        marker.write_text("an output folder being removed: not a dataset\n")
        _fsync_dir(folder)
    for path in folder.iterdir():
        if path.name == UNFINISHED:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    marker.unlink()
    folder.rmdir()


def recover(out: Path) -> None:
    """Put back an old set a kill left aside (fallback path), and remove dead processes' staging."""
    if not out.exists():
        for path, pid in _leftovers(out, "old"):
            if not _alive(pid):
                os.rename(path, out)
                break
    for kind in ("staging", "old"):
        for path, pid in _leftovers(out, kind):
            if not _alive(pid):
                remove_fragment(path)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (True), or False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def swap_in(staging: Path, out: Path) -> None:
    """Make ``staging`` be ``out`` in one step; the old ``out`` (if any) is removed afterwards."""
    if not out.exists():
        os.rename(staging, out)
    elif _exchange(staging, out):
        remove_fragment(staging)  # now the old set
    else:
        aside = out.parent / f".{out.name}.old-{os.getpid()}-{os.urandom(4).hex()}"
        os.rename(out, aside)
        os.rename(staging, out)
        remove_fragment(aside)
    _fsync_dir(out.parent)


def _carry_over(out: Path, staging: Path, keep: set[str]) -> None:
    """Files in ``out`` the new set does not write (a user's notes): linked or copied across."""
    if not out.is_dir():
        return
    for path in out.iterdir():
        if path.name in keep or (staging / path.name).exists():
            continue
        target = staging / path.name
        if path.is_dir():
            shutil.copytree(path, target, copy_function=shutil.copy2, symlinks=True)
        else:
            try:
                os.link(path, target, follow_symlinks=False)
            except OSError:
                shutil.copy2(path, target, follow_symlinks=False)


@contextmanager
def staged_folder(out: str | Path, replaced: set[str] | None = None) -> Iterator[Path]:
    """Yield an empty staging folder for ``out``'s new contents; swap it in when the block succeeds.

    ``replaced``: names in the old ``out`` that belong to the old set (not carried over); anything
    else there is carried into the new folder. When the block raises, the staging folder is removed
    and ``out`` is untouched.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-{os.getpid()}-", dir=out.parent))
    marker = staging / UNFINISHED
    marker.write_text("an unfinished output folder (its writer was interrupted): not a dataset\n")
    try:
        yield staging
        _carry_over(out, staging, (replaced or set()) | {UNFINISHED})
        for path in staging.rglob("*"):
            if path.is_file() and path != marker:
                with path.open("rb") as handle:
                    os.fsync(handle.fileno())
        marker.unlink()
        _fsync_dir(staging)
        swap_in(staging, out)
    except BaseException:
        if staging.is_dir():
            remove_fragment(staging)
        raise
