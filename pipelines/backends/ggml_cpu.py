"""Which of llama.cpp's CPU kernels this process uses: point ggml to the best CPU variant installed.

scripts/setup.sh installs llama-cpp-python built with runtime CPU dispatch (``GGML_BACKEND_DL=ON``,
``GGML_CPU_ALL_VARIANTS=ON``; scripts/build_llama_wheel.sh): the CPU backend is not linked into
``libggml.so`` but shipped as one loadable module per x86 instruction-set level in
``llama_cpp/lib`` (``libggml-cpu-x64.so``, ``-haswell``, ``-skylakex``, ``-icelake``, ``-zen4`` by
default; ggml's whole list with ``KARMA_LLAMA_CPU_VARIANTS=all``). Each module reports a score for the CPU it runs on (0: cannot run here), and ggml
loads the best one when the first model is created (``llama_backend_init``).

ggml looks for those modules only in the interpreter's folder and the working directory, and
llama-cpp-python 0.3.36 does not tell it about ``llama_cpp/lib``: with nothing found, no CPU backend
is loaded and every model load fails ("no backends are loaded"). ggml also loads the one module named
by ``GGML_BACKEND_PATH``. So before llama.cpp starts, karma asks every installed module for its score
(the same ``ggml_backend_score`` ggml itself calls) and sets ``GGML_BACKEND_PATH`` to the best one;
child processes (``python -m llama_cpp.server``) inherit it. A portable build (no modules) is left
alone, and so is a ``GGML_BACKEND_PATH`` the user set.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

ENV = "GGML_BACKEND_PATH"


def llama_lib_dir() -> Path | None:
    """llama-cpp-python's ``llama_cpp/lib`` folder, found without importing llama_cpp (importing it
    loads libllama, which must happen after ``GGML_BACKEND_PATH`` is set); None when not installed."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return lib if lib.is_dir() else None


def cpu_variants(lib: Path | None = None) -> list[Path]:
    """The CPU backend modules of a dispatch build (empty for a portable build)."""
    lib = lib if lib is not None else llama_lib_dir()
    if lib is None:
        return []
    return sorted(p for p in lib.glob("libggml-cpu-*.so") if p.is_file())


@lru_cache(maxsize=4)
def best_cpu_variant(lib: Path | None = None) -> tuple[Path, int] | None:
    """The installed CPU module with the highest ``ggml_backend_score`` on this CPU, and its score;
    None without modules or when none can run here. Each module's score function checks the CPU's
    features (cpuid) before anything that needs them, which is how ggml itself picks."""
    variants = cpu_variants(lib)
    if not variants:
        return None
    base = variants[0].parent / "libggml-base.so"
    if base.is_file():  # the modules link it; load it first so that they resolve against this copy
        ctypes.CDLL(str(base), mode=ctypes.RTLD_GLOBAL)
    best: tuple[Path, int] | None = None
    for path in variants:
        try:
            module = ctypes.CDLL(str(path))
            score_fn = module.ggml_backend_score
        except (OSError, AttributeError):
            continue
        score_fn.restype = ctypes.c_int
        score = int(score_fn())
        if score > 0 and (best is None or score > best[1]):
            best = (path, score)
    return best


def use_best_cpu_variant() -> str | None:
    """Set ``GGML_BACKEND_PATH`` to the best CPU module of a dispatch build (before llama.cpp is
    first used in this process or a child); returns the variant's name (``icelake``), the name from
    a ``GGML_BACKEND_PATH`` already set, or None for a portable build."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV]).name.removeprefix("libggml-cpu-").removesuffix(".so")
    best = best_cpu_variant()
    if best is None:
        return None
    os.environ[ENV] = str(best[0])
    return best[0].name.removeprefix("libggml-cpu-").removesuffix(".so")
