"""Run a registered multiple-choice task: every selected item in each arm, resumable.

The run directory holds ``config.json`` (task, arms, the data / template / model hashes),
``samples.jsonl`` (one :class:`TaskSample` per (item, arm), fsynced as it is answered) and
``results.json`` (:func:`karma.tasks.results.aggregate_task`). A rerun of the same command skips
finished (item, arm) pairs; changed settings (data, templates, model, arms' wording) are refused.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError
from karma.core.hashing import canonical_hash
from karma.eval.jsonl import JsonlAppender, read_jsonl
from karma.eval.rundir import check_resumable
from karma.tasks.base import Task
from karma.tasks.records import TaskItem, TaskSample
from karma.tasks.results import aggregate_task

CONFIG_SCHEMA = 1
SELECTION_FIELDS = frozenset({"limit", "categories"})
EXECUTION_FIELDS = frozenset({"out", "batch_size", "backend_options", "progress"})


class TaskRunConfig(BaseModel):
    """Everything ``karma eval --task NAME`` needs for a task other than Karma-MV."""

    task: str
    """Registered task name."""
    data: str
    """The task's published files (see ``karma data validate --task NAME``)."""
    out: str
    """The run directory."""
    lenient: bool = False
    """Leave out invalid rows (listed) instead of refusing the data."""
    arms: list[str] = Field(default_factory=list)
    """Arms to run (default: all of the task's arms)."""
    backend: str = "llamacpp"
    """Model backend name."""
    backend_options: dict[str, object] = Field(default_factory=dict)
    """Keyword options for the backend."""
    task_options: dict[str, object] = Field(default_factory=dict)
    """Keyword options for the task (``image_as=video`` for video-only models, ...)."""
    max_tokens: int = 8
    """Output budget per answer (same in every arm)."""
    limit: int | None = None
    """Answer only the first N items."""
    categories: list[str] | None = None
    """Answer only items of these categories."""
    batch_size: int = 1
    """Requests per backend call."""
    bootstrap_resamples: int = 2000
    """Bootstrap resamples of the intervals."""
    bootstrap_seed: int = 0
    """Seed of the bootstrap."""

    def identity(self) -> dict[str, Any]:
        """The fields that decide answers (resuming with other values is refused)."""
        skip = SELECTION_FIELDS | EXECUTION_FIELDS
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in skip}


class TaskRunSummary(BaseModel):
    """What one :func:`run_task` call did."""

    run_dir: str
    """The run directory."""
    selected: int
    """(item, arm) pairs selected."""
    already_done: int
    """Pairs found finished and skipped."""
    answered: int
    """Pairs answered by this call."""
    elapsed_s: float
    """Wall time of the answering loop."""
    data_problems: int = 0
    """Rows the lenient loader left out."""


def build_task(config: TaskRunConfig) -> Task:
    from karma.tasks import get_task

    return get_task(config.task, **config.task_options)


def select_items(items: list[TaskItem], config: TaskRunConfig) -> list[TaskItem]:
    chosen = items
    if config.categories:
        wanted = set(config.categories)
        unknown = wanted - {i.category for i in items}
        if unknown:
            raise InputError(f"--categories: no items of {', '.join(sorted(unknown))} in {config.data}")
        chosen = [i for i in items if i.category in wanted]
    return chosen[: config.limit] if config.limit else chosen


def _data_hash(items: list[TaskItem]) -> str:
    return canonical_hash([i.model_dump(mode="json", exclude={"source", "media"}) for i in items], 16)


def read_samples(run_dir: Path) -> list[TaskSample]:
    """The run's records, the last one per (item, arm) winning (a torn last line is ignored)."""
    records, _ = read_jsonl(run_dir / "samples.jsonl", TaskSample)
    return list({r.key: r for r in records}.values())


def run_task(config: TaskRunConfig, *, backend: Any = None, progress: bool = False) -> TaskRunSummary:
    """Answer every selected item in each arm, resuming what ``config.out`` already holds.

    ``backend`` may be passed in (tests pass the tiny Omni thinker); by default it is built from
    ``config.backend`` / ``config.backend_options`` and closed at the end.
    """
    from pipelines.answering import request_hash
    from pipelines.parsing import parse_answer

    task = build_task(config)
    if task.kind != "mcq":
        raise InputError(f"task {task.name} is an analysis, not answered by a model (see docs/tasks.md)")
    arms = task.check_arms(config.arms or list(task.arms))
    data = task.load(config.data, lenient=config.lenient)
    items = select_items(data.items, config)
    out = Path(config.out)
    owns_backend = backend is None
    if backend is None:
        from pipelines.backends import get_backend

        backend = get_backend(config.backend, **config.backend_options)
    try:
        templates = {arm: task.template(arm) for arm in arms}
        payload = {
            "schema": CONFIG_SCHEMA,
            "task": task.describe(),
            "identity": config.identity() | {"arms": arms},
            "hashes": {
                "data": _data_hash(data.items),
                "model": backend.model_id,
                "backend_settings": canonical_hash(backend.settings, 16),
                **{f"template.{arm}": t.sha256 for arm, t in templates.items()},
                **{f"template_version.{arm}": t.version for arm, t in templates.items()},
            },
            "backend_settings": backend.settings,
            "config": config.model_dump(mode="json"),
            "command": sys.argv,
        }
        config_path = out / "config.json"
        if config_path.exists():
            check_resumable(json.loads(config_path.read_text()), payload, out)
        out.mkdir(parents=True, exist_ok=True)
        _write_json(config_path, payload)
        done = {r.key for r in read_samples(out)}
        todo = [(item, arm) for item in items for arm in arms if (item.id, arm) not in done]
        media_dir = out / "media"
        started = time.perf_counter()
        answered = 0
        with JsonlAppender(out / "samples.jsonl") as samples:
            for start in range(0, len(todo), max(1, config.batch_size)):
                batch = todo[start : start + max(1, config.batch_size)]
                requests = [
                    task.request(i, a, max_tokens=config.max_tokens, media_dir=media_dir) for i, a in batch
                ]
                completions = backend.generate(requests)
                if len(completions) != len(batch):
                    raise RuntimeError(
                        f"backend returned {len(completions)} completions for {len(batch)} requests"
                    )
                for (item, arm), request, completion in zip(batch, requests, completions, strict=True):
                    parsed = parse_answer(completion.text, letters=item.letters, options=item.options)
                    samples.append(
                        TaskSample(
                            item_id=item.id,
                            task=task.name,
                            arm=arm,
                            category=item.category,
                            subcategory=item.subcategory,
                            cluster_id=item.cluster_id,
                            groups=dict(item.meta),
                            k=item.k,
                            answer=item.answer,
                            prompt_hash=request_hash(request),
                            template_version=templates[arm].version,
                            raw_completion=completion.text,
                            parsed_letter=parsed.letter,
                            parse_status=parsed.status,
                            parse_rule=parsed.rule,
                            correct=parsed.letter is not None and parsed.letter == item.answer,
                            error=completion.error,
                            finish_reason=completion.finish_reason,
                            latency_s=completion.latency_s,
                        )
                    )
                    answered += 1
                if progress:
                    print(f"\r{task.name}: {start + len(batch)}/{len(todo)}", end="", file=sys.stderr)
        if progress and todo:
            print(file=sys.stderr)
        elapsed = time.perf_counter() - started
        finalize_task(out)
        return TaskRunSummary(
            run_dir=str(out),
            selected=len(items) * len(arms),
            already_done=len(items) * len(arms) - len(todo),
            answered=answered,
            elapsed_s=elapsed,
            data_problems=len(data.problems),
        )
    finally:
        if owns_backend:
            backend.close()


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")


def finalize_task(run_dir: Path) -> dict[str, Any]:
    """(Re)compute ``results.json`` of a task run from its samples."""
    stored = json.loads((run_dir / "config.json").read_text())
    config = TaskRunConfig.model_validate(stored["config"])
    results = aggregate_task(
        read_samples(run_dir),
        task=config.task,
        arms=stored["identity"]["arms"],
        resamples=config.bootstrap_resamples,
        seed=config.bootstrap_seed,
    )
    _write_json(run_dir / "results.json", results)
    return results


def is_task_run(run_dir: Path) -> bool:
    """True for a run directory written by :func:`run_task` (not a Karma-MV ``karma eval`` run)."""
    path = Path(run_dir) / "config.json"
    if not path.exists():
        return False
    task = json.loads(path.read_text()).get("task")
    return isinstance(task, dict) and task.get("task") != "karma-mv"
