"""A response cache for deterministic decoding, keyed on everything that can change an answer.

Harness users' classic complaint is a cache that returns a stale or a sampled answer. Here:

* the key hashes the backend's ``settings`` (backend name, model id with the weights' hash, context
  size, server URL, ...), the model id again (in case a backend forgets it in ``settings``) and the
  *whole* request (every message, max_tokens, temperature, seed, constrained choices) — a change in
  any of them is a miss;
* only temperature-0 requests are read or written (sampled answers are never cached);
* failed requests are never stored, so a transient server error is retried on the next run.

Storage is one SQLite file (WAL mode, so several runs can share it); each put is committed at once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from karma.core.hashing import canonical_hash
from pipelines.backends.base import ChatRequest, Completion

CACHE_FILE_NAME = "responses.sqlite"
CACHE_SCHEMA_VERSION = 1


def cache_key(settings: Mapping[str, object], model_id: str, request: ChatRequest) -> str:
    """sha256 over the backend settings, the model id and the full request, plus the bytes of every
    local media file the request names (a clip or image replaced at the same path is a miss, not a
    stale answer). A text-only request's key is what it always was."""
    payload: dict[str, object] = {
        "schema": CACHE_SCHEMA_VERSION,
        "settings": dict(settings),
        "model_id": model_id,
        "request": request.model_dump(mode="json"),
    }
    media = media_hashes(request)
    if media:
        payload["media"] = media
    return canonical_hash(payload)


def media_hashes(request: ChatRequest) -> dict[str, str]:
    """``file://`` URL -> sha256 of the file's bytes (``missing`` when unreadable) for each media part."""
    import hashlib
    from urllib.parse import unquote, urlparse

    out: dict[str, str] = {}
    for message in request.messages:
        if isinstance(message.content, str):
            continue
        for part in message.content:
            url = part.url or ""
            if not url.startswith("file://") or url in out:
                continue
            try:
                out[url] = hashlib.sha256(Path(unquote(urlparse(url).path)).read_bytes()).hexdigest()
            except OSError:
                out[url] = "missing"
    return out


def request_hash(request: ChatRequest) -> str:
    """Short hash of a request alone (what ``prompt_hash`` means when a pipeline gives none)."""
    return canonical_hash(request.model_dump(mode="json"), 16)


def is_cacheable(request: ChatRequest) -> bool:
    """Only greedy decoding gives one answer per prompt."""
    return request.temperature == 0.0


class ResponseCache:
    """SQLite-backed map from cache keys to completions."""

    def __init__(self, path: Path) -> None:
        from karma.core.errors import InputError

        self.path = path
        if path.is_dir():
            raise InputError(
                f"{path}: --cache is a folder, expected a response cache file (e.g. {CACHE_FILE_NAME})"
            )
        if path.parent.exists() and not path.parent.is_dir():
            raise InputError(f"{path.parent}: is a file, expected the folder of the response cache")
        path.parent.mkdir(parents=True, exist_ok=True)
        # SQLite's own locks serialize writers of several runs sharing the file (WAL: readers never wait).
        self._db = sqlite3.connect(str(path), timeout=30.0)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, completion TEXT NOT NULL, model_id TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise InputError(f"{path}: not a karma response cache (SQLite says: {exc})") from None
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Completion | None:
        row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Completion.model_validate_json(row[0])

    def put(self, key: str, model_id: str, completion: Completion) -> None:
        if completion.error is not None:
            return
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, completion, model_id, created) VALUES (?, ?, ?, ?)",
            (key, completion.model_dump_json(), model_id, time.time()),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
