"""What a registered task is: a loader/validator for its published format, its items, prompts,
arms and metrics.

A multiple-choice task implements :meth:`Task.load` (published files -> :class:`TaskItem` records
plus located problems) and :meth:`Task.request` (one item in one arm -> one chat request). The
generic runner (``karma.tasks.runner``) answers, parses, scores and aggregates every such task the
same way; tasks that are not question answering (AImoclips, the AVAgent metrics) register analyses
instead and say so in ``kind``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from karma.tasks.options import TaskOptions
from karma.tasks.problems import ItemProblem, TaskDataError
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate

if TYPE_CHECKING:
    from pipelines.backends.base import ChatRequest


@dataclass
class TaskData:
    """A task's items as loaded, with every problem found on the way."""

    items: list[TaskItem]
    """Valid items, in file order."""
    problems: list[ItemProblem] = field(default_factory=list)
    """Rows rejected (lenient mode) or found suspicious, by file, row and field."""
    files: list[str] = field(default_factory=list)
    """The files read."""
    rows_seen: int = 0
    """Rows (items) read, valid or not."""
    notes: list[ItemProblem] = field(default_factory=list)
    """What the loader tolerated and read differently from the published format (never an error)."""


class Task(ABC):
    """One benchmark behind karma's runner, report and inspect_ai bridge."""

    name: ClassVar[str]
    """Registry name (``wildscore``)."""
    title: ClassVar[str]
    """Human title with the paper reference."""
    kind: ClassVar[Literal["mcq", "analysis", "open"]] = "mcq"
    """``mcq``: answered and scored by accuracy; ``open``: free answers scored by a judge pass;
    ``analysis``: statistics over files."""
    arms: ClassVar[tuple[str, ...]] = ("default",)
    """The arms the task compares on the same items (paired, McNemar); the first is the main one."""
    metrics: ClassVar[tuple[str, ...]] = ("accuracy",)
    """Metric names the task reports."""
    cluster_unit: ClassVar[str] = "item"
    """What :attr:`TaskItem.cluster_id` is (the bootstrap's resampling unit)."""
    letter_case: ClassVar[Literal["lower", "upper"]] = "upper"
    """How option letters are shown to the model."""
    paper_comparable: ClassVar[bool] = True
    """False when karma's protocol is known to differ from the paper's (see docs/tasks.md)."""
    data_help: ClassVar[str] = ""
    """What ``--data`` must point at."""
    options_model: ClassVar[type[TaskOptions]] = TaskOptions
    """The task's own options (``-T key=value``; none by default): ``karma.tasks.get_task`` validates
    them with this model once and hands a task that has options the validated instance (a task with
    none is built without arguments, so it may keep its own ``__init__(self)``)."""

    def __init__(self, options: TaskOptions | None = None, **given: Any) -> None:
        """Options: an instance of :attr:`options_model` (taken as it is: ``get_task`` has validated it
        already), or its fields as keywords (checked here); each field becomes an attribute."""
        from karma.tasks.options import bind_options

        bind_options(self, options, given)

    @abstractmethod
    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        """Read and validate the published files at ``path``.

        Strict (default): any problem raises :class:`TaskDataError` naming file, row and field.
        Lenient: problem rows are left out and listed in :attr:`TaskData.problems`.
        """

    def template(self, arm: str) -> TaskTemplate:
        """The versioned, hashed prompt template of ``arm``."""
        raise NotImplementedError(f"task {self.name} has no prompt template")

    def request(self, item: TaskItem, arm: str, *, max_tokens: int, media_dir: Path) -> ChatRequest:
        """The chat request for ``item`` in ``arm`` (``media_dir``: where converted media may go)."""
        raise NotImplementedError(f"task {self.name} is not answered by a model")

    def check_arms(self, arms: list[str]) -> list[str]:
        """``arms`` if every one is an arm of this task (InputError otherwise)."""
        from karma.core.errors import InputError

        unknown = [a for a in arms if a not in self.arms]
        if unknown:
            raise InputError(
                f"task {self.name} has no arm {', '.join(unknown)}; choose from {', '.join(self.arms)}"
            )
        return arms

    def describe(self) -> dict[str, Any]:
        """Name, kind, arms, metrics and comparability (for config.json and ``--help``)."""
        return {
            "task": self.name,
            "title": self.title,
            "kind": self.kind,
            "arms": list(self.arms),
            "metrics": list(self.metrics),
            "cluster_unit": self.cluster_unit,
            "paper_comparable": self.paper_comparable,
        }


def finish(data: TaskData, lenient: bool) -> TaskData:
    """Raise on problems in strict mode; return ``data`` otherwise."""
    if data.problems and not lenient:
        raise TaskDataError(data.problems)
    return data
