"""inspect_ai task file: ``inspect eval karma/tasks/inspect_tasks.py@<task> -T data=... --model karma/llamacpp``.

inspect runs a task file from its own folder, so give ``data`` as an absolute path (the Karma-MV
default is this checkout's ``data/sample``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from karma.core.paths import project_root
from karma.tasks.inspect_bridge import karma_inspect_task, task_parameters

# The checkout's sample data (a relative path when karma runs from a wheel without the checkout).
_SAMPLE = str(project_root() / "data" / "sample") if project_root() is not None else "data/sample"


# Each task's parameters are generated from its options model (task_parameters): data, arm, limit,
# max_tokens, then the options `karma tasks show NAME` lists, with their defaults.


@task
@task_parameters("karma-mv", data=_SAMPLE, arm="off")
def karma_mv(data: str, arm: str, limit: int | None, max_tokens: int, **options: Any) -> Task:
    """Karma-MV, graph-off arm (the LLM pipeline's prompt)."""
    return karma_inspect_task("karma-mv", data, arm=arm, limit=limit, max_tokens=max_tokens, **options)


@task
@task_parameters("wildscore", arm="text_only")
def wildscore(data: str, arm: str, limit: int | None, max_tokens: int, **options: Any) -> Task:
    """WildScore, one arm (image or text_only) with the paper's system prompts."""
    return karma_inspect_task("wildscore", data, arm=arm, limit=limit, max_tokens=max_tokens, **options)


@task
@task_parameters("harmonyset-mc", arm="av")
def harmonyset_mc(data: str, arm: str, limit: int | None, max_tokens: int, **options: Any) -> Task:
    """HarmonySet-MC, one arm (av or silent_audio)."""
    return karma_inspect_task("harmonyset-mc", data, arm=arm, limit=limit, max_tokens=max_tokens, **options)
