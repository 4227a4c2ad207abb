"""One writer per folder: an exclusive lock that names its holder and dies with it.

``FolderLock(folder)`` takes an exclusive ``flock`` on ``folder/.karma.lock`` and writes the
holder's pid, host, start time and command line into it. A second process asking for the same lock
gets :class:`LockedError` (an :class:`~karma.core.errors.InputError`, exit 2) at once, naming the
holder. The kernel drops a ``flock`` when its process ends in any way (``kill -9`` included), so a
lock file left by a killed run is *stale* by construction: the next run acquires the lock, notes
the dead holder in :attr:`FolderLock.stale_holder`, and carries on. Nothing is ever inferred from
a pid alone, so pid reuse cannot make a live lock look stale or a dead one look live.

The lock file is never deleted (deleting it would let two processes hold locks on two different
inodes of the same name); releasing truncates it and unlocks.

Limits: ``flock`` is per host; on a network filesystem shared by several hosts use one run folder
per host (the holder's host is written so the message says where the other run lives).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import IO, Any

from karma.core.errors import InputError

LOCK_FILE = ".karma.lock"
"""Name of the lock file inside a locked folder."""


class LockedError(InputError):
    """The folder is locked by another live process (the message names its pid and host)."""


def _describe(holder: dict[str, Any]) -> str:
    started = holder.get("started")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)) if started else "an unknown time"
    return f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')} (since {when})"


class FolderLock:
    """An exclusive, non-blocking lock on one folder (use as a context manager)."""

    def __init__(self, folder: str | Path, purpose: str = "run") -> None:
        self.folder = Path(folder)
        self.purpose = purpose
        self.path = self.folder / LOCK_FILE
        self.stale_holder: dict[str, Any] | None = None
        """Holder recorded by a previous process that died holding the lock (None if there was none)."""
        self._fh: IO[str] | None = None

    def read_holder(self) -> dict[str, Any] | None:
        """The holder recorded in the lock file (None when empty or unreadable)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            holder = json.loads(text) if text.strip() else None
        except ValueError:
            return None
        return holder if isinstance(holder, dict) else None

    def acquire(self) -> FolderLock:
        """Take the lock or raise :class:`LockedError` naming the live holder."""
        if self._fh is not None:
            return self
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError(f"{self.folder}: is a file, expected a {self.purpose} folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            holder = self.read_holder() or {}
            what = holder.get("purpose") or self.purpose  # the holder's own purpose names it best
            raise LockedError(
                f"{self.folder}: in use by another karma {what}, {_describe(holder)}; "
                f"wait for it to finish or use another folder (lock file {self.path})"
            ) from None
        except OSError:
            fh.close()
            raise
        previous = self.read_holder()
        if previous and previous.get("pid") != os.getpid():
            self.stale_holder = previous
        fh.seek(0)
        fh.truncate()
        fh.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": time.time(),
                    "purpose": self.purpose,
                    "command": sys.argv,
                }
            )
            + "\n"
        )
        fh.flush()
        os.fsync(fh.fileno())
        self._fh = fh
        return self

    def release(self) -> None:
        """Clear the holder and unlock (the lock file stays)."""
        if self._fh is None:
            return
        try:
            self._fh.seek(0)
            self._fh.truncate()
            self._fh.flush()
        finally:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def stale_note(self) -> str | None:
        """A one-line note about the dead holder whose lock was taken over (None if none)."""
        if not self.stale_holder:
            return None
        return f"{self.folder}: took over the lock of a run that ended without releasing it, {_describe(self.stale_holder)}"

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
