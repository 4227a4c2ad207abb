"""Registries by name with lazy factories: backends, retrievers, tasks, executors.

A registry maps a name to ``"module:attribute"`` (imported on first use) plus a one-line help text,
so the CLI can list choices and help without importing torch or vLLM. A missing optional dependency
becomes a :class:`~karma.core.errors.MissingExtraError` that names the pip extra.

    RETRIEVERS = Registry("retriever")
    RETRIEVERS.register("hybrid", "retrieval.hybrid:HybridRetriever", help="embeddings + graph expansion")
    cls = RETRIEVERS.load("hybrid")

Plug-ins outside the tree register the same way from their own module, named in ``$KARMA_PLUGINS``
(comma-separated module names, imported by :func:`load_plugins` when ``karma.cli`` is imported):

    # my_pkg/karma_plugin.py
    from pipelines.backends import BACKENDS
    BACKENDS.register("mine", "my_pkg.backend:MyBackend", help="...")
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from karma.core.errors import InputError, MissingExtraError


@dataclass(frozen=True)
class Entry:
    """One registered name."""

    name: str
    target: str
    """``"package.module:attribute"``, imported on first use."""
    help: str = ""
    """One line for ``--help`` and error messages."""
    extra: str | None = None
    """The pip extra that installs what ``target`` needs (``pip install -e ".[extra]"``)."""


class Registry:
    """Names -> lazily imported objects, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, target: str, *, help: str = "", extra: str | None = None) -> None:
        """Register ``name``; registering the same name twice with another target is an error."""
        if ":" not in target:
            raise ValueError(f"{self.kind} {name!r}: target must be 'module:attribute', got {target!r}")
        old = self._entries.get(name)
        if old is not None and old.target != target:
            raise ValueError(f"{self.kind} {name!r} is already registered as {old.target}")
        self._entries[name] = Entry(name, target, help, extra)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register their own entries clean up with this)."""
        self._entries.pop(name, None)

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def entries(self) -> Iterator[Entry]:
        """Registered entries in registration order."""
        return iter(self._entries.values())

    def entry(self, name: str) -> Entry:
        """The entry for ``name``; an unknown name is an :class:`InputError` listing the valid ones."""
        try:
            return self._entries[name]
        except KeyError:
            raise InputError(
                f"unknown {self.kind} {name!r}; choose one of: {', '.join(self._entries)}"
            ) from None

    def load(self, name: str) -> Any:
        """Import and return the object registered under ``name``."""
        entry = self.entry(name)
        module_name, attr = entry.target.split(":", 1)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            if entry.extra:
                raise MissingExtraError(
                    f"{self.kind} {name!r} needs the optional dependency {exc.name or exc}: "
                    f'pip install -e ".[{entry.extra}]"'
                ) from exc
            raise
        return getattr(module, attr)

    def help_text(self) -> str:
        """``name: help`` pairs joined for a CLI help string."""
        return "; ".join(f"{e.name}: {e.help}" if e.help else e.name for e in self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        """Registered names in registration order (``", ".join(REGISTRY)`` lists the choices)."""
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


PLUGINS_ENV = "KARMA_PLUGINS"
"""Environment variable naming plug-in modules (comma-separated) that register backends, retrievers
or tasks; ``karma`` imports them before it parses a command."""


def load_plugins(value: str | None = None) -> list[str]:
    """Import each module named in ``value`` (default: ``$KARMA_PLUGINS``), in order, so the
    ``register`` lines they hold run; returns the module names. A module that cannot be imported is an
    :class:`InputError` naming the variable and the module."""
    raw = os.environ.get(PLUGINS_ENV, "") if value is None else value
    names = [part.strip() for part in raw.split(",") if part.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise InputError(f"{PLUGINS_ENV}: cannot import plug-in module {name!r}: {exc}") from None
    return names
