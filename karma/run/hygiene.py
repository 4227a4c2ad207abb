"""Run hygiene: a run whose backend keeps failing stops, and a graph-on arm never runs on an empty graph
by accident.

* ``ErrorGuard`` counts this call's answered requests and their backend errors. Once
  ``MIN_JUDGED`` requests are back, an error rate above ``max_error_rate`` stops the run with
  :class:`ErrorRateExceeded` (exit 1), naming the first errors. The rate is judged twice: over the
  whole call, and over the last ``ERROR_WINDOW`` requests, because a server that dies after 2,000
  good answers would otherwise be noticed only after 500 more failures (the window notices it
  after ``max_error_rate * ERROR_WINDOW`` + 1, 11 at the defaults).
  The records already written stay; failed ones are retried by the next run with the same command,
  so a run resumed after the backend is fixed completes. ``max_error_rate=1`` never stops.
* ``check_graphs`` refuses (exit 2) a run whose graph-on arm would retrieve from a graph without
  edges, typically because the data has no feature files, unless ``allow_empty_graph`` is set; then
  the run goes on and the report says so.

Both facts are written to ``RUN_DIR/hygiene.json`` and shown by ``karma report``.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from karma.core.errors import InputError, RunError

DEFAULT_MAX_ERROR_RATE = 0.2
"""Default ``--max-error-rate``: more than one request in five failing in the backend is a broken
backend or server, not a hard question."""
MIN_JUDGED = 10
"""Answered requests needed before the rate is judged (the rate of a handful means little)."""
ERROR_WINDOW = 50
"""Requests in the sliding window of the error-rate stop (the last N answered, cache hits left out)."""
FIRST_ERRORS = 3
"""Errors quoted in the stop message."""
HYGIENE_FILE = "hygiene.json"


class ErrorRateExceeded(RunError):
    """The backend failed on more requests than ``--max-error-rate`` allows."""


class EmptyGraphError(InputError):
    """The graph-on arm would answer from a graph without edges."""


def read_hygiene(run_dir: str | Path, record: str = HYGIENE_FILE) -> dict[str, Any]:
    """``RUN_DIR/hygiene.json``, or an empty record for runs written before it existed."""
    path = Path(run_dir) / record
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def _write(run_dir: Path, payload: dict[str, Any], record: str = HYGIENE_FILE) -> None:
    from karma.core.atomic import atomic_write_text

    atomic_write_text(run_dir / record, json.dumps(payload, indent=2, sort_keys=True) + "\n")


def check_max_error_rate(max_error_rate: float) -> float:
    """``max_error_rate`` if it lies in [0, 1], else :class:`InputError` (called before a run folder is
    made, so a bad value leaves nothing behind)."""
    if not 0.0 <= max_error_rate <= 1.0:
        raise InputError(f"--max-error-rate must be between 0 and 1, got {max_error_rate}")
    return max_error_rate


class ErrorGuard:
    """Counts backend errors of one ``run_evaluation`` call and stops it past the limit."""

    def __init__(
        self,
        run_dir: str | Path,
        max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
        *,
        window: int = ERROR_WINDOW,
        record: str = HYGIENE_FILE,
        stale: tuple[str, ...] = ("results.json",),
    ):
        """``record``: the file (in ``run_dir``) the guard's state goes to; ``stale``: files a stop
        removes because they would describe an earlier call (a judge or qa pass names its own)."""
        check_max_error_rate(max_error_rate)
        self.run_dir = Path(run_dir)
        self.max_error_rate = max_error_rate
        self.answered = 0
        self.errors = 0
        self.window: deque[bool] = deque(maxlen=max(1, int(window)))
        self.first: list[str] = []
        self.record = record
        self.stale = stale
        self.state = read_hygiene(self.run_dir, record)
        previous = self.state.pop("stopped", None)
        if previous:
            self.state.setdefault("earlier_stops", []).append(previous)

    def start(self, empty_graphs: list[str] | None = None) -> None:
        """Note this call's limit and any allowed empty graphs (written when the call stops or ends)."""
        self.state["max_error_rate"] = self.max_error_rate
        if empty_graphs:
            self.state["empty_graph_allowed"] = empty_graphs
        else:
            self.state.pop("empty_graph_allowed", None)

    def observe(self, question_id: str, arm: str, error: str | None, cached: bool = False) -> None:
        """Count one written record; raise once the rate is judged and too high."""
        if cached:
            return
        self.answered += 1
        self.window.append(error is not None)
        if error is not None:
            self.errors += 1
            if len(self.first) < FIRST_ERRORS:
                self.first.append(f"{question_id} [{arm}]: {error[:200]}")
        if self.answered >= MIN_JUDGED:
            self._judge()

    def finish(self) -> None:
        """Record that this call completed (a call with fewer than ``MIN_JUDGED`` requests is never
        stopped; its backend errors still make ``karma eval`` exit non-zero)."""
        self.state["last_call"] = {"answered": self.answered, "backend_errors": self.errors}
        _write(self.run_dir, self.state, self.record)

    def _judge(self) -> None:
        if self.max_error_rate >= 1.0:
            return
        recent = sum(self.window)
        whole = self.errors > self.max_error_rate * self.answered
        windowed = len(self.window) == self.window.maxlen and recent > self.max_error_rate * len(self.window)
        if not (whole or windowed):
            return
        stop = {
            "answered": self.answered,
            "backend_errors": self.errors,
            "max_error_rate": self.max_error_rate,
            "window": {"requests": len(self.window), "backend_errors": recent},
            "first_errors": self.first,
        }
        self.state["stopped"] = stop
        _write(self.run_dir, self.state, self.record)
        # results.json would describe an earlier call: drop it so `karma report` recomputes it from
        # every record written so far.
        for name in self.stale:
            (self.run_dir / name).unlink(missing_ok=True)
        where = (
            f"{self.errors} of {self.answered} requests"
            if whole
            else f"{recent} of the last {len(self.window)} requests ({self.errors} of {self.answered} in all)"
        )
        raise ErrorRateExceeded(
            f"stopped: {where} failed in the backend "
            f"(over --max-error-rate {self.max_error_rate:g}); first errors: "
            + " | ".join(self.first)
            + f". Fix the backend and rerun the same command: {self.run_dir} resumes and retries the "
            "failed requests."
        )


def check_graphs(
    graphs: dict[str, dict[str, Any]],
    *,
    arms: list[str],
    retriever: str,
    allow_empty: bool,
    videos_without_features: int,
    videos: int,
) -> list[str]:
    """The graphs (of config.json's ``graphs``) the graph-on arm would use that have no edges.

    Raises :class:`EmptyGraphError` when there are any and ``allow_empty`` is off; returns their
    names when it is on (recorded and reported).
    """
    if "on" not in arms or retriever == "none":
        return []
    empty = sorted(key for key, info in graphs.items() if not info.get("edges"))
    if not empty or allow_empty:
        return empty
    why = (
        f"; {videos_without_features} of {videos} videos have no feature file"
        if videos_without_features
        else ""
    )
    raise EmptyGraphError(
        f"the graph-on arm would retrieve from an empty graph ({', '.join(empty)}: 0 edges{why}). "
        "Give feature files (<video>_causal_features.json) or --graph FILE, run --ckg off, or pass "
        "--allow-empty-graph to run it anyway"
    )


def start(config: Any, payload: dict[str, Any], dataset: Any) -> ErrorGuard:
    """The runner's one hook before the first request: refuse an empty graph-on arm, record the
    hygiene settings and the preset's provenance in ``payload`` (config.json), and return the guard."""
    from pipelines.presets import preset_record

    videos = list(getattr(dataset, "video_ids", []))
    features = getattr(dataset, "features", {})
    empty = check_graphs(
        payload.get("graphs", {}),
        arms=list(config.arms),
        retriever=config.retriever,
        allow_empty=config.allow_empty_graph,
        videos_without_features=sum(1 for v in videos if v not in features),
        videos=len(videos),
    )
    payload["hygiene"] = {"max_error_rate": config.max_error_rate, "empty_graph_allowed": empty}
    record = preset_record(getattr(config, "preset", None), config.backend)
    if record is not None:
        payload["preset"] = record
    guard = ErrorGuard(config.out, config.max_error_rate)
    guard.start(empty)
    return guard


def backend_error_count(results: dict[str, Any]) -> int:
    """Pairs of a results payload whose latest answer failed in the backend (all arms)."""
    return sum(int(arm["overall"].get("backend_errors", 0)) for arm in results.get("arms", {}).values())


def report_lines(run_dir: str | Path) -> list[str]:
    """What ``karma report`` says about a run's hygiene (nothing for a clean run)."""
    state = read_hygiene(run_dir)
    lines: list[str] = []
    stop = state.get("stopped")
    if stop:
        lines.append(
            f"- **stopped at the error-rate limit**: {stop['backend_errors']} of {stop['answered']} requests "
            f"failed in the backend (limit {stop['max_error_rate']:g}); the results cover only what was "
            "answered. First errors: " + "; ".join(f"`{e}`" for e in stop["first_errors"])
        )
    for earlier in state.get("earlier_stops", []) if not stop else []:
        lines.append(
            f"- an earlier call stopped at the error-rate limit ({earlier['backend_errors']} of "
            f"{earlier['answered']} failed); the run was resumed and its failed requests retried"
        )
    if state.get("empty_graph_allowed"):
        lines.append(
            "- **graph-on arm ran on an empty graph** (`--allow-empty-graph`): "
            + ", ".join(state["empty_graph_allowed"])
            + " had no edges, so that arm saw no facts"
        )
    return lines
