"""Lazy public names for a package ``__init__`` (PEP 562): the submodule is imported on first use.

    _EXPORTS = {"LlmPipeline": "pipelines.llm", ...}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)

so importing one light submodule (``pipelines.backends`` for the CLI's choices) does not load the
heavy rest of the package (numpy, FAISS, torch).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to its module."""
    names = list(public)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
