"""The one answering loop: every run that asks a model questions sends them through :class:`Scheduler`.

``karma eval`` (Karma-MV), every registered task (``karma eval --task NAME``), HarmonySet-OE's answers
and its judge pass all hand the scheduler a stream of :class:`Work` (one chat request each, with the
(item, arm) key it answers) and a ``write`` callback that turns a completion into the run's record.
The scheduler owns what used to be written five times:

* the response cache: a greedy request already answered (same model, settings and request) is written
  from the cache at once, never sent; a fresh answer is cached *before* it is written, so a kill
  between the two costs a cache hit, never an answer;
* batching and concurrency: up to ``concurrency`` backend calls in worker threads, each with up to
  ``batch_size`` requests; the main thread prepares the next requests (retrieval) while the model
  works, and writes each record as its call returns;
* the error-rate stop: each written record is shown to the run's :class:`~karma.run.hygiene.ErrorGuard`,
  which raises ``ErrorRateExceeded`` past ``--max-error-rate``;
* progress (an optional ``advance`` callback).

The backend itself is called only through :func:`pipelines.answering.complete` (a source test keeps it
that way), which checks that one completion came back per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from karma.run.cache import ResponseCache, cache_key, is_cacheable


@dataclass
class Work:
    """One request to answer and what its record needs."""

    key: tuple[str, str]
    """(item id, arm): what the error guard counts and names."""
    request: Any
    """The chat request (``pipelines.backends.base.ChatRequest``)."""
    payload: Any = None
    """Whatever the caller's ``write`` needs to build the record (the prepared prompt, the item)."""
    cache_key: str | None = field(default=None, init=False)
    """The response-cache key, set when the request is cacheable and a cache is in use."""


@dataclass
class SchedulerCounts:
    """What one :meth:`Scheduler.run` call wrote."""

    answered: int = 0
    """Records written (cache hits included)."""
    cached: int = 0
    """Of those, answered from the response cache."""


Write = Callable[[Work, Any, bool], None]
"""``write(work, completion, cached)``: build and append the record of one answered request."""


class Scheduler:
    """Send :class:`Work` to one backend: cache, batches, concurrent calls, error guard, progress."""

    def __init__(
        self,
        backend: Any,
        *,
        batch_size: int = 1,
        concurrency: int = 1,
        cache: ResponseCache | None = None,
        guard: Any = None,
        advance: Callable[[], None] | None = None,
        thread_prefix: str = "karma-run",
    ) -> None:
        self.backend = backend
        self.batch_size = max(1, int(batch_size))
        self.concurrency = max(1, int(concurrency))
        self.cache = cache
        self.guard = guard
        self.advance = advance
        self.thread_prefix = thread_prefix
        self._settings: Any = None
        self._model_id: str | None = None

    def run(self, works: Iterable[Work], write: Write) -> SchedulerCounts:
        """Answer every work item (in order of submission; records in order of completion)."""
        from pipelines.answering import complete

        counts = SchedulerCounts()
        source: Iterator[Work] = iter(works)
        pending: list[Work] = []
        in_flight: dict[Future, list[Work]] = {}
        exhausted = False
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=self.thread_prefix) as pool:
            while True:
                while not exhausted and len(pending) < self.batch_size:
                    work = next(source, None)
                    if work is None:
                        exhausted = True
                    elif not self._from_cache(work, write, counts):
                        pending.append(work)
                if pending and len(in_flight) < self.concurrency:
                    batch, pending = pending, []
                    future = pool.submit(complete, self.backend, [w.request for w in batch])
                    in_flight[future] = batch
                    continue
                if not in_flight:
                    if exhausted and not pending:
                        return counts
                    continue
                finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in finished:
                    batch = in_flight.pop(future)
                    for work, completion in zip(batch, future.result(), strict=True):
                        self._write(work, completion, False, write, counts)

    def _from_cache(self, work: Work, write: Write, counts: SchedulerCounts) -> bool:
        """Write ``work`` from the response cache if it is there (True); set its cache key either way."""
        if self.cache is None or not is_cacheable(work.request):
            return False
        if self._model_id is None:
            self._settings, self._model_id = self.backend.settings, self.backend.model_id
        work.cache_key = cache_key(self._settings, self._model_id, work.request)
        hit = self.cache.get(work.cache_key)
        if hit is None:
            return False
        self._write(work, hit, True, write, counts)
        return True

    def _write(
        self, work: Work, completion: Any, cached: bool, write: Write, counts: SchedulerCounts
    ) -> None:
        # Cache first: a kill between the two writes then costs a cache hit, never a lost answer.
        if self.cache is not None and not cached and work.cache_key is not None:
            self.cache.put(work.cache_key, self._model_id or self.backend.model_id, completion)
        write(work, completion, cached)
        counts.answered += 1
        counts.cached += int(cached)
        if self.guard is not None:
            self.guard.observe(work.key[0], work.key[1], completion.error, cached)
        if self.advance is not None:
            self.advance()
