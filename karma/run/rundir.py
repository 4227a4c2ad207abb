"""The run folder every task's run shares: one lock per folder, and the identity check a resume passes.

* :func:`locked_run_folder` holds ``OUT``'s lock for a run (a second run on it is refused) and removes
  a folder it created when the run is refused before writing anything;
* :func:`check_resumable` refuses to resume a folder whose stored identity or content hashes differ
  from this call's (:class:`RunMismatchError`, exit 2, naming every differing key).

Each task keeps its own file layout inside the folder (Karma-MV's is ``karma.eval.rundir.RunDir``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from karma.core.errors import InputError


@contextmanager
def locked_run_folder(out: str | Path, purpose: str = "task run") -> Iterator[Path]:
    """Hold ``out``'s run lock (``karma.core.lock.FolderLock``) for the block.

    A second run on the same folder is refused at once (exit 2, naming the holder). When the block
    fails and the folder was created here and holds nothing but the lock file, the folder is removed:
    a refused run (a bad backend option, a model file that is not there) leaves no folder behind.
    """
    from karma.core.lock import LOCK_FILE, FolderLock

    folder = Path(out)
    created = not folder.exists()
    lock = FolderLock(folder, purpose)
    with lock:
        if lock.stale_note():
            print(f"note: {lock.stale_note()}", file=sys.stderr)
        try:
            yield folder
        except BaseException:
            if created and {p.name for p in folder.iterdir()} <= {LOCK_FILE}:
                (folder / LOCK_FILE).unlink(missing_ok=True)
                lock.release()
                with suppress(OSError):
                    folder.rmdir()
            raise


class RunMismatchError(InputError):
    """A resumed run was started with settings that change answers."""


CONTENT_PINNED: frozenset[str] = frozenset({"data", "graph_path"})
"""Identity keys that name a path (the data folder, a given graph): a run is its content, which
``hashes.data`` and the graphs' hashes pin, so a run folder resumes where the data sit at another path."""


def check_resumable(stored: dict[str, Any], fresh: dict[str, Any], path: Path) -> None:
    """Refuse to resume when anything that changes answers differs between the runs.

    ``stored`` and ``fresh`` are config.json payloads; their ``identity`` and ``hashes`` parts must
    be equal, apart from the paths in ``CONTENT_PINNED`` (older folders stored them in the identity;
    ``hashes`` compares their content). The error lists every differing key so the user sees what
    changed.
    """
    differences: list[str] = []
    for part in ("identity", "hashes"):
        old, new = stored.get(part, {}), fresh.get(part, {})
        skip = CONTENT_PINNED if part == "identity" else frozenset()
        for key in sorted((set(old) | set(new)) - skip):
            if old.get(key) != new.get(key):
                differences.append(f"{part}.{key}: {old.get(key)!r} -> {new.get(key)!r}")
    if differences:
        raise RunMismatchError(
            f"{path} holds a run with different settings; use a new --out or the old settings:\n  "
            + "\n  ".join(differences)
        )
