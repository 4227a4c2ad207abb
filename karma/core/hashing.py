"""The one canonical JSON form and hash used for cache keys, graph hashes and prompt hashes.

The form is ``json.dumps`` with sorted keys, no spaces and ASCII escapes (the ``json`` default), so
every hash karma wrote before this module existed (response-cache keys, prompt hashes, graph content
hashes, data hashes in run configs) keeps its value: caches and results stay byte-identical.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(payload: Any) -> str:
    """JSON with sorted keys, no spaces and ASCII escapes: equal payloads give equal bytes.

    Values JSON cannot hold (paths, datetimes) are written as ``str(value)``.
    """
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)


def sha256_text(text: str, length: int | None = None) -> str:
    """Hex sha256 of ``text`` (UTF-8), cut to ``length`` characters when given."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest[:length] if length else digest


def canonical_hash(payload: Any, length: int | None = None) -> str:
    """sha256 of :func:`canonical_json` of ``payload`` (hex, cut to ``length`` when given)."""
    return sha256_text(canonical_json(payload), length)


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
