"""The one canonical JSON form and hash used for cache keys, graph hashes and prompt hashes."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(payload: Any) -> str:
    """JSON with sorted keys and no spaces: equal payloads give equal bytes."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str, length: int | None = None) -> str:
    """Hex sha256 of ``text`` (UTF-8), cut to ``length`` characters when given."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest[:length] if length else digest


def canonical_hash(payload: Any, length: int | None = None) -> str:
    """sha256 of :func:`canonical_json` of ``payload``."""
    return sha256_text(canonical_json(payload), length)
