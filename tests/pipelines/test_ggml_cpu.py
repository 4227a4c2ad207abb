"""The llama.cpp build scripts/setup.sh installs loads a CPU backend that this CPU can run, and the best
one it has (pipelines/backends/ggml_cpu.py).

With the dispatch build (scripts/build_llama_wheel.sh: x64, haswell, skylakex, icelake and zen4 by
default, ggml's whole list with KARMA_LLAMA_CPU_VARIANTS=all) one module per x86 level is installed;
the one picked must need only instructions this CPU has (from /proc/cpuinfo) and be the highest level among those; a fresh
process (no GGML_BACKEND_PATH yet) then loads SmolLM2 and answers. With a portable build
(KARMA_LLAMA_BUILD=portable) there are no modules and nothing is changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.backends.ggml_cpu import best_cpu_variant, cpu_variants, llama_lib_dir

ROOT = Path(__file__).resolve().parents[2]

# What each x86 module of GGML_CPU_ALL_VARIANTS needs, as /proc/cpuinfo flags (llama.cpp's
# ggml/src/CMakeLists.txt; AMX_INT8 is "amx_int8" there).
_HASWELL = {"sse4_2", "avx", "f16c", "fma", "avx2", "bmi2"}
_AVX512 = _HASWELL | {"avx512f"}
NEEDS = {
    "x64": set(),
    "sse42": {"sse4_2"},
    "sandybridge": {"sse4_2", "avx"},
    "ivybridge": {"sse4_2", "avx", "f16c"},
    "piledriver": {"sse4_2", "avx", "f16c", "fma"},
    "haswell": _HASWELL,
    "skylakex": _AVX512,
    "cannonlake": _AVX512 | {"avx512vbmi"},
    "cascadelake": _AVX512 | {"avx512_vnni"},
    "icelake": _AVX512 | {"avx512vbmi", "avx512_vnni"},
    "cooperlake": _AVX512 | {"avx512_vnni", "avx512_bf16"},
    "zen4": _AVX512 | {"avx512vbmi", "avx512_vnni", "avx512_bf16"},
    "alderlake": _HASWELL | {"avx_vnni"},
    "sapphirerapids": _AVX512 | {"avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8"},
}


def _cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def _name(path: Path) -> str:
    return path.name.removeprefix("libggml-cpu-").removesuffix(".so")


@pytest.mark.skipif(not Path("/proc/cpuinfo").is_file(), reason="needs /proc/cpuinfo (Linux)")
def test_the_picked_cpu_module_runs_here_and_is_the_best_that_does():
    lib = llama_lib_dir()
    assert lib is not None, "llama-cpp-python is not installed (scripts/setup.sh installs it)"
    variants = cpu_variants(lib)
    if not variants:
        assert best_cpu_variant(lib) is None  # a portable build: ggml's own CPU backend, nothing to pick
        return
    names = {_name(p) for p in variants}
    assert {"x64", "haswell", "skylakex", "icelake"} <= names, names
    best = best_cpu_variant(lib)
    assert best is not None and best[1] > 0
    flags = _cpu_flags()
    picked = _name(best[0])
    assert NEEDS[picked] <= flags, f"{picked} needs {sorted(NEEDS[picked] - flags)}, which this CPU lacks"
    runnable = [n for n in names if n in NEEDS and NEEDS[n] <= flags]
    assert len(NEEDS[picked]) == max(len(NEEDS[n]) for n in runnable), (picked, sorted(runnable))


@pytest.mark.slow
def test_a_fresh_process_loads_the_picked_module_and_answers():
    """A child without GGML_BACKEND_PATH: importing karma's backends sets it, llama.cpp loads that
    module and SmolLM2 answers greedily (with nothing set a dispatch build has no CPU backend at all)."""
    code = (
        "import json, os\n"
        "from pipelines.backends import ChatMessage, ChatRequest, get_backend\n"
        "backend = get_backend('llamacpp', n_ctx=512)\n"
        "(c,) = backend.generate([ChatRequest(messages=[ChatMessage(role='user', content='Say hi.')], max_tokens=4)])\n"
        "print(json.dumps({'path': os.environ.get('GGML_BACKEND_PATH'), 'error': c.error, 'tokens': c.completion_tokens}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GGML_BACKEND_PATH"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["error"] is None and result["tokens"] >= 1
    best = best_cpu_variant(llama_lib_dir())
    assert result["path"] == (str(best[0]) if best else None)
