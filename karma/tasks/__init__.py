"""Registered benchmark tasks: Karma-MV and its neighbours (WildScore, HarmonySet, AImoclips).

``TASKS`` maps a task name to its class (imported on first use); ``get_task(name)`` builds one.
A multiple-choice task runs through ``karma eval --task NAME``; ``karma data validate --task NAME``
checks its published files; see docs/tasks.md for each task's format, metrics and comparability.
"""

from __future__ import annotations

from typing import Any

from karma.core.registry import Registry

TASKS = Registry("task")
TASKS.register(
    "karma-mv", "karma.tasks.karma_mv:KarmaMvTask", help="Karma-MV causal music-video QA (default)"
)
TASKS.register(
    "wildscore", "karma.tasks.wildscore:WildScoreTask", help="WildScore score-image MCQ, 2-4 options"
)
TASKS.register(
    "harmonyset-mc",
    "karma.tasks.harmonyset:HarmonySetMcTask",
    help="HarmonySet video-music MCQ (shape unverified)",
)
TASKS.register(
    "harmonyset-oe",
    "karma.tasks.harmonyset_oe:HarmonySetOeTask",
    help="HarmonySet open answers, judged by karma's judge (not paper-comparable)",
)
TASKS.register(
    "aimoclips", "karma.tasks.aimoclips:AImoclipsTask", help="AImoclips valence/arousal ratings (analysis)"
)

DEFAULT_TASK = "karma-mv"


def get_task(name: str, **options: Any) -> Any:
    """An instance of the task registered as ``name`` (``options`` go to its constructor)."""
    from karma.core.errors import InputError

    cls = TASKS.load(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise InputError(f"task {name}: bad --task-opt ({exc})") from exc
