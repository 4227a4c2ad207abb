"""The one runner: the skeleton every command that asks a model shares, in one place.

Karma-MV (``karma.eval.runner``), the MCQ tasks (``karma.tasks.runner``), HarmonySet-OE and its judge
(``karma.tasks.harmonyset_oe``) and the qa passes (``karma.qa.passes`` under ``qa verify`` and
``qa paraphrase``) differ in what they ask and what each answer becomes; the run around the asking
is the same, and it is written here once:

* the caller holds the run folder's lock for the call (``karma.run.rundir.locked_run_folder``: a
  second run on it is refused, a run refused before its first record leaves no folder);
* the backend is the caller's (left open) or opened here through the preflight the caller names
  and closed at the end (:func:`run_backend`);
* ``config.json`` is written once per call (:func:`write_run_config`): a folder that holds a run is
  resumed only when its identity and content hashes match (``check_resumable``, exit 2 otherwise);
* the error-rate stop (:class:`~karma.run.hygiene.ErrorGuard`, whole call and sliding window) is
  started before the first request and its state written when the call ends;
* the response cache is opened (``--cache``, the shared one, or none) and closed whatever happens;
* the requests go through the one driver (:func:`karma.run.driver.answer`: batches, concurrency,
  cache hits), each answer written by the caller's ``write`` as it comes back;
* the run's results are recomputed from its records (the caller's ``finalize``) before the guard
  records that the call completed.

A caller passes its config payload, its works (the (item, arm) pairs not yet answered: the resume keys), its record
writer and its finalize; :func:`run_answers` is the entry every run path calls, and the only caller
of the driver's ``answer`` (``tests/karma/test_one_driver.py``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_json
from karma.core.errors import InputError
from karma.run.cache import ResponseCache
from karma.run.driver import SchedulerCounts, Work, Write, answer, open_response_cache
from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE, HYGIENE_FILE, ErrorGuard
from karma.run.rundir import check_resumable

__all__ = ["CONFIG_FILE", "RunOutcome", "run_answers", "run_backend", "write_run_config"]

CONFIG_FILE = "config.json"


@dataclass
class RunOutcome:
    """What one :func:`run_answers` call did."""

    answered: int
    """Records written (cache hits included)."""
    cached: int
    """Of those, answered from the response cache."""
    elapsed_s: float
    """Wall time of the answering loop (finalize not included)."""
    results: Any = None
    """What the caller's ``finalize`` returned (None without one)."""


CacheChoice = ResponseCache | tuple[bool, str | Path | None] | None
"""An open cache (the caller closes it), ``(use_cache, cache_path)`` to open one here (and close it
at the end), or None for no cache."""


def run_answers(
    backend: Any,
    works: Iterable[Work],
    write: Write,
    *,
    out: str | Path,
    guard: ErrorGuard | None = None,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    hygiene_record: str = HYGIENE_FILE,
    stale: tuple[str, ...] = ("results.json",),
    cache: CacheChoice = None,
    records: Sequence[AbstractContextManager[Any]] = (),
    batch_size: int | None = None,
    concurrency: int | None = None,
    advance: Callable[[], None] | None = None,
    finalize: Callable[[], Any] | None = None,
    purpose: str = "karma-run",
) -> RunOutcome:
    """Answer ``works`` through the one driver under the error-rate stop, then ``finalize``.

    ``guard``: a guard the caller started already (Karma-MV's notes its allowed empty graphs in
    config.json first); without one, a guard on ``out`` with ``max_error_rate`` writing
    ``hygiene_record`` (``stale``: the files a stop removes) is started here. ``records``: the
    caller's open record writers (and its progress bar), entered here and closed when the answering
    ends, before ``finalize`` reads the records back. ``batch_size`` / ``concurrency`` left out are the backend's (``karma.run.driver.batching``). The guard records
    the call as complete only after ``finalize`` (the results of a stopped call are recomputed by
    ``karma report`` or the next run).
    """
    if guard is None:
        guard = ErrorGuard(Path(out), max_error_rate, record=hygiene_record, stale=stale)
        guard.start()
    opened = None
    if isinstance(cache, tuple):
        opened = cache = open_response_cache(*cache)
    try:
        started = time.perf_counter()
        with ExitStack() as stack:
            for writer in records:
                stack.enter_context(writer)
            counts: SchedulerCounts = answer(
                backend, works, write, batch_size=batch_size, concurrency=concurrency, cache=cache,
                guard=guard, advance=advance, purpose=purpose,
            )  # fmt: skip
        elapsed = time.perf_counter() - started
        results = finalize() if finalize is not None else None
        guard.finish()
    finally:
        if opened is not None:
            opened.close()
    return RunOutcome(answered=counts.answered, cached=counts.cached, elapsed_s=elapsed, results=results)


def write_run_config(
    out: str | Path,
    payload: dict[str, Any],
    *,
    upgrade: Callable[[dict[str, Any]], None] | None = None,
    merge: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> Path:
    """Write ``out/config.json`` for this call, after checking a stored one still matches.

    A folder that already holds a run is resumed only when its stored ``identity`` and ``hashes``
    equal the fresh ones (``karma.run.rundir.check_resumable``; exit 2 naming every difference).
    ``upgrade(stored)`` fills in what older folders lack before the check (fields added since, with
    the value those runs used); ``merge(stored, payload)`` runs after it (Karma-MV checks and keeps
    the graphs of earlier calls). ``default`` is ``json.dumps``'s (``str`` for paths in a payload).
    A stored file that is not JSON is refused (exit 2), not resumed over.
    """
    path = Path(out) / CONFIG_FILE
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not valid JSON ({exc}); not a usable karma run directory") from None
        if upgrade is not None:
            upgrade(stored)
        check_resumable(stored, payload, Path(out))
        if merge is not None:
            merge(stored, payload)
    return atomic_write_json(path, payload, indent=2, sort_keys=True, default=default)


@contextmanager
def run_backend(
    given: Any, open_backend: Callable[[], Any], wrap: Callable[[Any], Any] | None = None
) -> Iterator[Any]:
    """The run's backend for the block: ``given`` (a caller's, a test's or a benchmark's: left open),
    else ``open_backend()`` (built and checked by ``pipelines.backends.preflight`` before the first
    request) and closed when the block ends; ``wrap`` adapts either to the run's answer mode."""
    owns = given is None
    backend = open_backend() if owns else given
    if wrap is not None:
        backend = wrap(backend)
    try:
        yield backend
    finally:
        if owns:
            backend.close()
