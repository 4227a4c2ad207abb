"""How many CPU cores this process can use now: the cores it may run on, less the ones busy elsewhere.

llama.cpp splits every matrix product over its threads and makes them wait for each other at each
step; on a shared machine where other processes hold the cores, a thread that is not scheduled stalls
all the others (measured: ``karma ask`` with two threads at load 5 on 2 cores took 28 s generating and
100 s scoring, against 7.8 s and 7.7 s with one thread). So thread counts are chosen from the cores
that are free when the model loads:

* ``usable_cores``: the cores in this process's affinity mask (what ``taskset`` / a container's
  cpuset allows), not ``os.cpu_count()``;
* ``busy_elsewhere``: runnable tasks right now, from ``/proc/loadavg``'s fourth field (instantaneous,
  unlike the 1-minute average that lags a minute behind a job that just started), sampled a few times
  and the median taken, less this process's own running threads;
* ``free_cores`` = usable - busy elsewhere, at least 1.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from pydantic import BaseModel

LOADAVG = Path("/proc/loadavg")


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _runnable(text: str) -> int:
    """Runnable tasks from a ``/proc/loadavg`` line (its fourth field is ``running/total``)."""
    return int(text.split()[3].split("/")[0])


def _own_running() -> int:
    """Threads of this process in state R (running or runnable) now."""
    count = 0
    try:
        for task in Path("/proc/self/task").iterdir():
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2] == "R":
                count += 1
    except OSError:
        return 1
    return max(count, 1)


def busy_elsewhere(samples: int = 5, interval_s: float = 0.02) -> int:
    """Runnable tasks of other processes now (median of ``samples`` readings); 0 where unknown."""
    if not LOADAVG.is_file():
        return 0
    readings = []
    for i in range(samples):
        try:
            readings.append(_runnable(LOADAVG.read_text()) - _own_running())
        except (OSError, ValueError, IndexError):
            return 0
        if i + 1 < samples:
            time.sleep(interval_s)
    return max(0, int(statistics.median(readings)))


class CpuPlan(BaseModel):
    """The cores seen when a CPU model loaded and the threads chosen from them (run config)."""

    usable_cores: int
    """Cores in this process's affinity mask."""
    busy_elsewhere: int
    """Runnable tasks of other processes when the model loaded."""
    free_cores: int
    """usable - busy elsewhere, at least 1."""
    load_1min: float | None
    """The 1-minute load average then (for the record; the choice uses the instantaneous count)."""


def cpu_plan() -> CpuPlan:
    """Measure the machine now."""
    usable = usable_cores()
    busy = busy_elsewhere()
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    return CpuPlan(
        usable_cores=usable,
        busy_elsewhere=busy,
        free_cores=max(1, usable - busy),
        load_1min=round(load, 2) if load is not None else None,
    )
