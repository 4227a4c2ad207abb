"""One line describing the machine a benchmark ran on, printed with every result.

Numbers from different machines are not comparable: the same 2-core budget on a CPU with AVX-512
reads a prompt about twice as fast as on one without it. The line says which CPU, how many usable
cores, the widest vector extension llama.cpp and NumPy can use, and the load average.
"""

from __future__ import annotations

import os
from pathlib import Path

_VECTOR_FLAGS = ("avx512f", "avx2", "avx", "sse4_2", "neon", "asimd")


def _cpuinfo() -> tuple[str, set[str]]:
    model, flags = "unknown CPU", set()
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return model, flags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model") and model == "unknown CPU":
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return model, flags


def describe_machine() -> str:
    """E.g. ``AMD EPYC 9R14, 2 usable cores, avx512f, load average 0.4``."""
    model, flags = _cpuinfo()
    vector = next((flag for flag in _VECTOR_FLAGS if flag in flags), "no SIMD flag found")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} usable cores, {vector}, load average {os.getloadavg()[0]:.1f}"
