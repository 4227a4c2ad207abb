"""Problems found while reading Karma-MV files, located by file, transition, question and field."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from karma.core.errors import InputError

Severity = Literal["error", "warning", "inferred"]


class DataProblem(BaseModel):
    """One problem (or one thing the loader had to infer) in an input file."""

    file: str
    """Path of the file, as given."""
    transition: int | None = None
    """0-based transition index in the QA file (None for file-level problems)."""
    question: int | None = None
    """0-based question index within the transition."""
    scene: str | None = None
    """Scene id, for feature-file problems."""
    field: str | None = None
    """The offending field (``options.b``, ``answer``, ``Brightness``, ...)."""
    reason: str
    """What is wrong, or what was inferred."""
    severity: Severity = "error"
    """error: the record is rejected (strict mode fails); warning: kept but suspicious;
    inferred: the loader normalized a published variant and says how."""

    def location(self) -> str:
        parts = [self.file]
        if self.transition is not None:
            parts.append(f"transition {self.transition}")
        if self.question is not None:
            parts.append(f"question {self.question}")
        if self.scene is not None:
            parts.append(f"scene {self.scene}")
        if self.field is not None:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"[{self.severity}] {self.location()}: {self.reason}"


class DataValidationError(InputError):
    """Raised by strict loading when any error was found; carries every problem."""

    def __init__(self, problems: list[DataProblem]):
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        head = "\n".join(str(p) for p in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} data error(s):\n{head}{more}")
