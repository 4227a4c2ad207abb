"""The one run driver: every command that asks a model answers through :func:`answer`, here.

Four run paths used to build their own :class:`~karma.run.scheduler.Scheduler`, each with its own
defaults: Karma-MV (``karma eval``) took the backend's batch and the response cache while the MCQ
task runs ran batch 1, concurrency 1 and no cache, and the qa passes and the judge chose again. This
module is now the only importer of the scheduler (``tests/karma/test_one_driver.py`` parses every
module and keeps it that way), so the contract is decided once:

* :func:`batching`: the batch size and concurrency a run gets when the user named none: the
  backend's own preference (``preferred_batch_size``), 16 for a backend that batches inside one call
  (``Backend.batches_in_one_call``), else 1; concurrency = the backend's ``max_concurrency`` or 1;
* :func:`open_response_cache`: ``--cache PATH``, the shared cache under the karma cache folder, or
  none with ``--no-cache``. The key covers everything that changes an answer
  (``karma.run.cache.cache_key``), so one file is safely shared by every task and run;
* :func:`answer`: the scheduler run itself (cache, batches, concurrent calls, error guard, progress).

:func:`answer` is called by the one runner alone (``karma.run.runner.run_answers``, which adds the
error-rate guard, the cache's lifetime and finalize around it). The run paths keep what is theirs
(which work to ask, the record each answer becomes): Karma-MV
(``karma.eval.runner``, registered as the task ``karma-mv`` in ``karma.tasks.karma_mv``), the MCQ tasks
(``karma.tasks.runner``), HarmonySet-OE and its judge (``karma.tasks.harmonyset_oe``) and the qa passes
(``karma.qa.passes.ModelPass`` under ``qa verify`` and ``qa paraphrase``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from karma.run.cache import CACHE_FILE_NAME, ResponseCache
from karma.run.scheduler import Scheduler, SchedulerCounts, Work, Write

__all__ = [
    "CALL_BATCH",
    "SchedulerCounts",
    "Work",
    "Write",
    "answer",
    "batching",
    "open_response_cache",
]

CALL_BATCH = 16
"""Requests per call for a backend that batches inside one call and names no preference of its own."""


def batching(
    backend: Any,
    *,
    batch_size: int | None = None,
    concurrency: int | None = None,
    pending: int = 0,
    backend_name: str | None = None,
) -> tuple[int, int]:
    """(batch size, concurrency) of a run: the values given, else the backend's.

    ``backend_name`` names the registered backend class when ``backend`` is wrapped (the loglik
    wrapper): the class says whether it batches in one call.
    """
    if batch_size is None or batch_size < 1:
        preferred = getattr(backend, "preferred_batch_size", None)
        if callable(preferred):
            batch_size = int(preferred(pending))
        else:
            batch_size = CALL_BATCH if _batches_in_one_call(backend, backend_name) else 1
    if concurrency is None or concurrency < 1:
        concurrency = int(getattr(backend, "max_concurrency", 1) or 1)
    return max(1, batch_size), max(1, concurrency)


def _batches_in_one_call(backend: Any, backend_name: str | None) -> bool:
    if backend_name is not None:
        from pipelines.backends import backend_class

        try:
            return bool(backend_class(backend_name).batches_in_one_call)
        except Exception:  # an unregistered name (a backend passed in by a test or benchmark)
            pass
    return bool(getattr(backend, "batches_in_one_call", False))


RESPONSE_CACHE_ENV = "KARMA_RESPONSE_CACHE"
"""Environment variable naming the shared response cache file (instead of the cache root's)."""


def open_response_cache(use_cache: bool = True, cache_path: str | Path | None = None) -> ResponseCache | None:
    """The response cache of a run, or None when ``use_cache`` is off: ``cache_path`` (``--cache``),
    else the shared one, ``$KARMA_RESPONSE_CACHE`` if set (the test suite points it at a file of its
    own, so no session answers from another's responses), else ``<cache root>/eval/responses.sqlite``."""
    if not use_cache:
        return None
    if cache_path:
        return ResponseCache(Path(cache_path))
    shared = os.environ.get(RESPONSE_CACHE_ENV)
    if shared:
        return ResponseCache(Path(shared).expanduser())
    from karma.core.paths import cache_dir

    return ResponseCache(cache_dir("eval") / CACHE_FILE_NAME)


def answer(
    backend: Any,
    works: Iterable[Work],
    write: Write,
    *,
    batch_size: int | None = None,
    concurrency: int | None = None,
    cache: ResponseCache | None = None,
    guard: Any = None,
    advance: Callable[[], None] | None = None,
    purpose: str = "karma-run",
) -> SchedulerCounts:
    """Answer every work item through the one scheduler; ``write(work, completion, cached)`` records
    each answer (a cache hit included); ``guard`` stops the run past its error rate.

    ``batch_size`` / ``concurrency`` left out (None) are the backend's (:func:`batching`), so every
    pass that asks a model (a task run, the judge, the qa passes) gets the backend's batch without
    saying so. ``write`` is always called from the calling thread, one record at a time.
    """
    if batch_size is None or concurrency is None:
        if not isinstance(works, list):
            works = list(works)
        batch_size, concurrency = batching(
            backend, batch_size=batch_size, concurrency=concurrency, pending=len(works)
        )
    scheduler = Scheduler(
        backend, batch_size=batch_size, concurrency=concurrency, cache=cache, guard=guard,
        advance=advance, thread_prefix=purpose,
    )  # fmt: skip
    return scheduler.run(works, write)
