"""Problems found in a task's published files, located by file, row and field."""

from __future__ import annotations

from pydantic import BaseModel

from karma.core.errors import InputError


class ItemProblem(BaseModel):
    """One problem in one row (or the whole file) of a task's data."""

    file: str
    """The file, as given."""
    row: int | str | None = None
    """Row number (1-based data row of a CSV, 0-based index of a JSON list) or item id."""
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
