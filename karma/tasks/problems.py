"""Problems found in a task's published files, located by file, row and field."""

from __future__ import annotations

from pydantic import BaseModel

from karma.core.errors import InputError


class ItemProblem(BaseModel):
    """One problem in one row (or the whole file) of a task's data."""

    file: str
    """The file, as given."""
    row: int | str | None = None
    """Row number (1-based: the n-th data row of a CSV, the n-th item of a JSON list) or item id."""
    field: str | None = None
    """The offending field or column."""
    reason: str
    """What is wrong."""

    def location(self) -> str:
        parts = [self.file]
        if self.row is not None:
            parts.append(f"row {self.row}")
        if self.field is not None:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.location()}: {self.reason}"


NOTE_ROWS_SHOWN = 10
"""Rows named in one note; the rest are counted."""


class Notes:
    """What a loader tolerated (read differently from the published format, never an error), one note per
    kind with the rows it touched, for ``karma data validate`` to print beside the problems.

    Loaders attach the result to :class:`karma.tasks.base.TaskData` as ``notes``.
    """

    def __init__(self, file: str):
        self.file = file
        self._rows: dict[tuple[str | None, str], list[int | str]] = {}

    def add(self, field: str | None, reason: str, row: int | str | None = None) -> None:
        """Record that ``row`` (None: the whole file) needed ``reason`` in ``field``."""
        rows = self._rows.setdefault((field, reason), [])
        if row is not None:
            rows.append(row)

    def notes(self) -> list[ItemProblem]:
        out = []
        for (field, reason), rows in self._rows.items():
            if not rows:
                out.append(ItemProblem(file=self.file, field=field, reason=reason))
                continue
            shown = ", ".join(str(r) for r in rows[:NOTE_ROWS_SHOWN])
            more = f" and {len(rows) - NOTE_ROWS_SHOWN} more" if len(rows) > NOTE_ROWS_SHOWN else ""
            row: int | str = rows[0] if len(rows) == 1 else f"{shown}{more} ({len(rows)} rows)"
            out.append(ItemProblem(file=self.file, row=row, field=field, reason=reason))
        return out


class TaskDataError(InputError):
    """Strict loading found problems; the message names the first one by file, row and field."""

    def __init__(self, problems: list[ItemProblem]):
        self.problems = problems
        more = f" (and {len(problems) - 1} more problems; `karma data validate --task ...` lists them)"
        super().__init__(str(problems[0]) + (more if len(problems) > 1 else ""))


def pydantic_reason(exc: Exception) -> tuple[str | None, str]:
    """(field, reason) from a pydantic ValidationError (first error), else (None, str(exc))."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or None
        return loc, str(first.get("msg", exc)).removeprefix("Value error, ")
    return None, str(exc)
