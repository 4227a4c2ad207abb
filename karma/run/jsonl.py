"""Crash-safe JSON-lines files: append one record at a time, durable on disk before moving on.

A run may be killed with SIGKILL at any instant, including half-way through writing a line. The
reader therefore accepts a torn *last* line (no newline, or not valid JSON) and the writer cuts such a
tail off before appending, so a resumed run never glues a new record onto half an old one. A broken
line anywhere else is real corruption and is reported with its line number.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

from karma.core.errors import InputError

Model = TypeVar("Model", bound=BaseModel)


class JsonlCorruptError(InputError):
    """A line before the last one of a JSON-lines file is not a valid record."""


def _complete_prefix_length(path: Path) -> int:
    """Byte length of the file up to and including its last newline (0 for none)."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb") as fh:
        # Scan back in blocks: the torn tail is at most one record long.
        block = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            chunk = fh.read(end - start)
            pos = chunk.rfind(b"\n")
            if pos >= 0:
                return start + pos + 1
            end = start
    return 0


def read_jsonl(path: Path, model: type[Model]) -> tuple[list[Model], bool]:
    """All complete records of ``path`` and whether a torn last line was ignored.

    A missing file reads as empty. A trailing fragment without a newline is ignored (a write cut off
    by a kill); an invalid complete line is also ignored when it is the very last line (a kill between
    the write and the newline cannot produce it, but a full disk can); anything else raises.
    """
    if not path.exists():
        return [], False
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1] if b"\n" in data else b""
    torn = len(complete) != len(data)
    lines = complete.split(b"\n")[:-1] if complete else []
    records: list[Model] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(model.model_validate_json(line))
        except (ValidationError, ValueError) as exc:
            if number == len(lines) and not torn:
                torn = True
                break
            raise JsonlCorruptError(f"{path}: line {number} is not a valid {model.__name__}: {exc}") from exc
    return records, torn


class JsonlAppender:
    """Appends records to a JSON-lines file, flushed and fsynced per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            keep = _complete_prefix_length(path)
            if keep != path.stat().st_size:
                # Drop the torn tail of a killed run (see the module docstring).
                with path.open("r+b") as fh:
                    fh.truncate(keep)
            self._drop_invalid_last_line()
        self._fh: IO[bytes] | None = path.open("ab")

    def _drop_invalid_last_line(self) -> None:
        data = self.path.read_bytes()
        if not data:
            return
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            json.loads(data[start:])
        except ValueError:
            with self.path.open("r+b") as fh:
                fh.truncate(start)

    def append(self, record: BaseModel) -> None:
        """Write one record as one line and make it durable before returning."""
        if self._fh is None:
            raise ValueError(f"{self.path}: appender is closed")
        self._fh.write(record.model_dump_json().encode() + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
