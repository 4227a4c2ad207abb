"""inspect_ai task file: ``inspect eval karma/tasks/inspect_tasks.py@<task> -T data=... --model karma/llamacpp``.

inspect runs a task file from its own folder, so give ``data`` as an absolute path (the Karma-MV
default is this checkout's ``data/sample``).
"""

from __future__ import annotations

from inspect_ai import Task, task

from karma.core.paths import project_root
from karma.tasks.inspect_bridge import karma_inspect_task

# The checkout's sample data (a relative path when karma runs from a wheel without the checkout).
_SAMPLE = str(project_root() / "data" / "sample") if project_root() is not None else "data/sample"


@task
def karma_mv(
    data: str = _SAMPLE,
    limit: int | None = None,
    max_tokens: int = 8,
) -> Task:
    """Karma-MV, graph-off arm (the LLM pipeline's prompt)."""
    return karma_inspect_task("karma-mv", data, limit=limit, max_tokens=max_tokens)


@task
def wildscore(
    data: str, arm: str = "text_only", limit: int | None = None, max_tokens: int = 8, image_as: str = "image"
) -> Task:
    """WildScore, one arm (image or text_only) with the paper's system prompts."""
    return karma_inspect_task(
        "wildscore", data, arm=arm, limit=limit, max_tokens=max_tokens, image_as=image_as
    )


@task
def harmonyset_mc(data: str, arm: str = "av", limit: int | None = None, max_tokens: int = 8) -> Task:
    """HarmonySet-MC, one arm (av or silent_audio)."""
    return karma_inspect_task("harmonyset-mc", data, arm=arm, limit=limit, max_tokens=max_tokens)
