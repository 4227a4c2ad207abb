"""Where karma keeps its caches and finds its own data files.

One cache root for every command: ``$KARMA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/karma``, else
``~/.cache/karma``. Caches (retrieval indexes keyed by graph hash, eval response caches, derived clips,
converted models, query vectors) live in named sub-folders of it, never next to a user's inputs.
Package data (world configs, templates) is found through :func:`package_data`, which works in an
editable checkout and in an installed wheel alike.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from karma.core.errors import InputError


def cache_root() -> Path:
    """The cache root (created on first use)."""
    env = os.environ.get("KARMA_CACHE_DIR")
    if env:
        root = Path(env).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "karma"
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_dir(kind: str) -> Path:
    """A named sub-folder of the cache root, e.g. ``cache_dir("index")`` (created on first use)."""
    if not kind or "/" in kind or kind.startswith("."):
        raise ValueError(f"cache kind must be a plain folder name, got {kind!r}")
    path = cache_root() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_data(package: str, *parts: str) -> Path:
    """A data file shipped inside ``package`` (e.g. ``package_data("pipelines.prompts", "llm.jinja")``)."""
    return Path(str(resources.files(package).joinpath(*parts)))


def project_root() -> Path | None:
    """The source checkout karma runs from, or None for an installed wheel.

    The checkout is the folder above the ``karma`` package when it holds ``pyproject.toml``; files
    that ship only with the checkout (``data/sample``, ``data/worlds``) are found through
    :func:`project_file`. This is the one place that looks upward from a module's own file.
    """
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "karma").is_dir() else None


def project_file(*parts: str) -> Path:
    """A file of the source checkout (e.g. ``project_file("data", "sample")``).

    Raises :class:`~karma.core.errors.InputError` naming the file when karma runs from an installed
    wheel, which does not carry the checkout's ``data/`` folder.
    """
    root = project_root()
    if root is None:
        raise InputError(
            f"{'/'.join(parts)} ships with karma's source checkout, not with the installed package; "
            "pass the file or folder explicitly"
        )
    return root.joinpath(*parts)
