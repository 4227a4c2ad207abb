"""Run a registered multiple-choice task: every selected item in each arm, resumable.

The run directory holds ``config.json`` (task, arms, the data / template / model hashes),
``samples.jsonl`` (one :class:`TaskSample` per (item, arm), fsynced as it is answered) and
``results.json`` (:func:`karma.tasks.results.aggregate_task`). A rerun of the same command skips
finished (item, arm) pairs and retries the ones whose request failed in the backend; changed
settings (data, templates, model, decoding, arms' wording) are refused.

Safety is karma eval's (docs/reliability.md): the run folder is locked for the whole call
(:func:`locked_run_folder`, ``karma.core.lock``), the answers go through the one runner
(``karma.run.runner.run_answers``: the cache, the driver, ``--max-error-rate`` stopping a failing
backend, finalize), and everything that can be refused (task, arms, options, data) is refused
before the folder is created; a refused run leaves no folder behind.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError
from karma.core.hashing import canonical_hash
from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE
from karma.run.jsonl import JsonlAppender, read_jsonl
from karma.run.rundir import locked_run_folder
from karma.run.runner import RunOutcome, run_answers, run_backend, write_run_config
from karma.tasks.base import Task, TaskData
from karma.tasks.records import TaskItem, TaskSample
from karma.tasks.results import aggregate_task
from karma.tasks.templates import TaskTemplate

CONFIG_SCHEMA = 1
SELECTION_FIELDS = frozenset({"limit", "categories"})
EXECUTION_FIELDS = frozenset(
    {
        "out",
        "batch_size",
        "backend_options",
        "progress",
        "concurrency",
        "max_error_rate",
        "allow_backend_errors",
        "use_cache",
        "cache_path",
    }
)
IDENTITY_DEFAULTS: dict[str, object] = {"model": None, "temperature": 0.0, "seed": 0}
"""Identity fields added after the first task runs, with the value those runs used (so they resume)."""


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
    model: str | None = None
    """``--model`` as given (a registry name or path), already resolved into ``backend_options``."""
    task_options: dict[str, object] = Field(default_factory=dict)
    """Keyword options for the task (``image_as=video`` for video-only models, ...)."""
    max_tokens: int = Field(8, ge=1)
    """Output budget per answer (same in every arm)."""
    temperature: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    """Decoding temperature (same in every arm; 0 = greedy)."""
    seed: int = 0
    """Decoding seed, for backends that take one."""
    limit: int | None = Field(None, ge=1)
    """Answer only the first N items."""
    categories: list[str] | None = None
    """Answer only items of these categories."""
    batch_size: int | None = Field(None, ge=1)
    """Requests per backend call (None: the backend's, ``karma.run.driver.batching``)."""
    concurrency: int | None = Field(None, ge=1)
    """Backend calls in flight at once (None: the backend's ``max_concurrency`` or 1)."""
    use_cache: bool = True
    """Read and write the response cache (greedy requests only; ``--no-cache`` turns it off)."""
    cache_path: str | None = None
    """The response cache file (``--cache``; default: the one shared with ``karma eval``)."""
    max_error_rate: float = Field(DEFAULT_MAX_ERROR_RATE, ge=0.0, le=1.0)
    """Stop once more than this share of this call's requests failed in the backend (1 = never)."""
    allow_backend_errors: bool = False
    """Exit 0 although some requests failed in the backend (the CLI's exit code only)."""
    bootstrap_resamples: int = Field(2000, ge=1)
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
    """Pairs found finished and skipped (pairs whose last request failed in the backend are retried)."""
    answered: int
    """Pairs answered by this call (backend errors included)."""
    cache_hits: int = 0
    """Of those, answered from the response cache."""
    elapsed_s: float
    """Wall time of the answering loop."""
    data_problems: int = 0
    """Rows the lenient loader left out."""
    backend_errors: int = 0
    """Pairs of the run whose latest request failed in the backend (retried by a rerun)."""


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


def finished_keys(run_dir: Path) -> set[tuple[str, str]]:
    """(item, arm) pairs whose latest record is an answer: what a rerun skips (backend errors are retried)."""
    return {r.key for r in read_samples(run_dir) if r.error is None}


@dataclass
class _Prepared:
    """What :func:`run_task` checks before it touches the run folder."""

    task: Task
    arms: list[str]
    data: TaskData
    items: list[TaskItem]
    templates: dict[str, TaskTemplate]


def prepare_task(config: TaskRunConfig) -> _Prepared:
    """Task, arms, data, selection, templates and the response cache, each refused (InputError)
    before any work."""
    task = build_task(config)
    if task.kind != "mcq":
        raise InputError(f"task {task.name} is an analysis, not answered by a model (see docs/tasks.md)")
    arms = task.check_arms(config.arms or list(task.arms))
    data = task.load(config.data, lenient=config.lenient)
    if not data.items:
        raise InputError(f"{', '.join(data.files) or config.data}: no valid {task.name} item to answer")
    items = select_items(data.items, config)
    templates = {arm: task.template(arm) for arm in arms}
    if config.use_cache and config.cache_path:  # a --cache that is a folder: refused before the run folder
        from karma.run.cache import ResponseCache

        ResponseCache(Path(config.cache_path)).close()
    return _Prepared(task=task, arms=arms, data=data, items=items, templates=templates)


def _config_payload(config: TaskRunConfig, prep: _Prepared, backend: Any) -> dict[str, Any]:
    return {
        "schema": CONFIG_SCHEMA,
        "task": prep.task.describe(),
        "identity": config.identity() | {"arms": prep.arms},
        "hashes": {
            "data": _data_hash(prep.data.items),
            "model": backend.model_id,
            "backend_settings": canonical_hash(backend.settings, 16),
            **{f"template.{arm}": t.sha256 for arm, t in prep.templates.items()},
            **{f"template_version.{arm}": t.version for arm, t in prep.templates.items()},
        },
        "backend_settings": backend.settings,
        "task_options_resolved": _resolved_options(prep.task, config.task_options),
        "hygiene": {"max_error_rate": config.max_error_rate},
        "config": config.model_dump(mode="json"),
        "command": sys.argv,
    }


def _resolved_options(task: Task, given: dict[str, Any]) -> dict[str, Any]:
    """Every option of ``task`` with the value the run used (given or default), for config.json; the
    identity keeps only the options given, so runs made before an option existed still resume."""
    from karma.tasks.options import validate_options

    model = getattr(task, "options_model", None)
    if model is None:
        return dict(given)
    return validate_options(task.name, model, given).model_dump(mode="json")


def _write_config(out: Path, payload: dict[str, Any]) -> None:
    def upgrade(stored: dict[str, Any]) -> None:
        identity = stored.get("identity", {})
        for key, value in IDENTITY_DEFAULTS.items():
            identity.setdefault(key, value)

    write_run_config(out, payload, upgrade=upgrade, default=str)


def run_task(config: TaskRunConfig, *, backend: Any = None, progress: bool = False) -> TaskRunSummary:
    """Answer every selected item in each arm, resuming what ``config.out`` already holds.

    ``backend`` may be passed in (tests pass the tiny Omni thinker); by default it is built from
    ``config.backend`` / ``config.backend_options`` and closed at the end. ``config.out`` is locked
    for the whole call; a second run on it fails at once naming this one.
    """
    prep = prepare_task(config)
    from pipelines.backends.preflight import open_backend

    with (  # the backend's options, model files and device checked before the first request
        locked_run_folder(config.out, "task run") as out,
        run_backend(backend, lambda: open_backend(config.backend, config.backend_options)) as backend,
    ):
        _write_config(out, _config_payload(config, prep, backend))
        done = finished_keys(out)
        todo = [(i, a) for i in prep.items for a in prep.arms if (i.id, a) not in done]
        outcome = _answer(config, prep, backend, todo, out, progress)
    from karma.run.hygiene import backend_error_count

    selected = len(prep.items) * len(prep.arms)
    return TaskRunSummary(
        run_dir=str(out),
        selected=selected,
        already_done=selected - len(todo),
        answered=outcome.answered,
        cache_hits=outcome.cached,
        elapsed_s=outcome.elapsed_s,
        data_problems=len(prep.data.problems),
        backend_errors=backend_error_count(outcome.results),
    )


def _request(config: TaskRunConfig, prep: _Prepared, item: TaskItem, arm: str, media_dir: Path) -> Any:
    request = prep.task.request(item, arm, max_tokens=config.max_tokens, media_dir=media_dir)
    return request.model_copy(update={"temperature": config.temperature, "seed": config.seed})


def _sample(
    prep: _Prepared, item: TaskItem, arm: str, request: Any, completion: Any, cached: bool = False
) -> TaskSample:
    from pipelines.answering import request_hash
    from pipelines.parsing import parse_answer

    failed = completion.error is not None
    parsed = parse_answer(None if failed else completion.text, letters=item.letters, options=item.options)
    return TaskSample(
        item_id=item.id,
        task=prep.task.name,
        arm=arm,
        category=item.category,
        subcategory=item.subcategory,
        cluster_id=item.cluster_id,
        groups=dict(item.meta),
        k=item.k,
        answer=item.answer,
        prompt_hash=request_hash(request),
        template_version=prep.templates[arm].version,
        raw_completion=completion.text,
        parsed_letter=parsed.letter,
        parse_status=parsed.status,
        parse_rule="backend_error" if failed else parsed.rule,
        correct=not failed and parsed.letter is not None and parsed.letter == item.answer,
        error=completion.error,
        finish_reason=completion.finish_reason,
        latency_s=0.0 if cached else completion.latency_s,
        cached=cached,
    )


def _answer(
    config: TaskRunConfig,
    prep: _Prepared,
    backend: Any,
    todo: list[tuple[TaskItem, str]],
    out: Path,
    progress: bool,
) -> RunOutcome:
    """Answer ``todo`` through the one runner (``karma.run.runner.run_answers``): the response cache
    (unless ``--no-cache``), the backend's batch and concurrency unless given, the error-rate stop past
    ``--max-error-rate``; each record is appended as it comes back (fsynced), then results.json."""
    from karma.run.driver import Work, batching

    works = (
        Work((item.id, arm), _request(config, prep, item, arm, out / "media"), item) for item, arm in todo
    )
    batch_size, concurrency = batching(
        backend, batch_size=config.batch_size, concurrency=config.concurrency, pending=len(todo),
        backend_name=config.backend,
    )  # fmt: skip
    written = 0
    samples = JsonlAppender(out / "samples.jsonl")

    def write(work: Work, completion: Any, cached: bool) -> None:
        nonlocal written
        samples.append(_sample(prep, work.payload, work.key[1], work.request, completion, cached))
        written += 1
        if progress:
            print(f"\r{prep.task.name}: {written}/{len(todo)}", end="", file=sys.stderr)

    def finish() -> dict[str, Any]:
        if progress and todo:
            print(file=sys.stderr)
        return finalize_task(out)

    return run_answers(
        backend, works, write, out=out, max_error_rate=config.max_error_rate,
        cache=(config.use_cache, config.cache_path), records=[samples], batch_size=batch_size,
        concurrency=concurrency, finalize=finish, purpose="karma-task",
    )  # fmt: skip


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
