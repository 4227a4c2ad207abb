"""Registered benchmark tasks: Karma-MV and its neighbours (WildScore, HarmonySet, AImoclips).

``TASKS`` maps a task name to its class (imported on first use); ``get_task(name, **options)`` builds
one from its own options (``-T key=value``, checked against the class's ``options_model``).
A multiple-choice task runs through ``karma eval --task NAME``; ``karma data validate --task NAME``
checks its published files; see docs/tasks.md for each task's format, metrics and comparability.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from karma.core.registry import Registry

if TYPE_CHECKING:
    from karma.tasks.options import TaskOptions

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
    """An instance of the task registered as ``name``, built from ``options`` checked against its
    options model (text from ``-T`` is coerced; an unknown option or a bad value is an InputError
    naming it)."""
    cls = TASKS.load(name)
    checked = resolve_options(name, options, cls=cls)  # validated here, once: the constructor keeps it
    return cls(checked) if cls.options_model.model_fields else cls()  # no options: nothing to hand over


def resolve_options(name: str, given: dict[str, Any], *, cls: Any = None) -> TaskOptions:
    """``given`` validated against the options model of task ``name``: every option, with defaults."""
    from karma.tasks.options import validate_options

    cls = cls if cls is not None else TASKS.load(name)
    return validate_options(name, cls.options_model, given)


def task_card(name: str) -> dict[str, Any]:
    """What ``karma tasks show NAME`` prints, read from the registry and the task's class (no task is
    built): title, kind, arms, metrics, the data it reads, comparability and its options."""
    from karma.tasks.options import describe_options

    entry = TASKS.entry(name)
    cls = TASKS.load(name)
    flags = getattr(cls, "option_flags", {})  # karma eval flags that are aliases of -T options
    return {
        "task": name,
        "default": name == DEFAULT_TASK,
        "help": entry.help,
        "title": cls.title,
        "kind": cls.kind,
        "arms": list(cls.arms),
        "metrics": list(cls.metrics),
        "cluster_unit": cls.cluster_unit,
        "data_help": cls.data_help,
        "paper_comparable": cls.paper_comparable,
        "options": [
            {**option, **({"flag": flags[option["name"]]} if option["name"] in flags else {})}
            for option in describe_options(cls.options_model)
        ],
    }
