"""Cached artefacts that know their own health: every file karma reads back from a cache carries a
checksum or a completion record, and a bad one is named, then rebuilt or refused with the fix.

Why: a cache is trusted by construction (it is karma's own output), so a corrupt or replaced file used
to pass unnoticed: replaced query vectors changed retrieval scores without a word, random bytes gave an
``allow_pickle`` error on every later retrieve, a same-size corrupt model file was listed as installed.
Three tools cover the caches:

* ``seal`` / ``unseal``: one small binary value (a query vector) with a sha256 over its cache key and
  its bytes, so a file copied in from another key or altered in place fails;
* ``file_records`` / ``check_files``: the size and sha256 of every file of a cached folder (an
  index, a distilled model), recorded when it is written and checked when it is read;
* ``record_sidecar`` / ``reusable``: one cached file (a derived clip) with its sha256 beside it;
* ``note_rebuilt``: the one line on stderr that names a bad cache file karma is rebuilding.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path

from karma.core.hashing import file_sha256

SEAL_MAGIC = b"KSEAL1\n"
"""First bytes of a sealed value (a file of another format is never taken for one)."""
_NOTED: set[str] = set()


def seal(key: str, payload: bytes) -> bytes:
    """``payload`` with a checksum binding it to ``key`` (its cache key): what ``unseal`` checks."""
    return SEAL_MAGIC + hashlib.sha256(key.encode() + b"\0" + payload).digest() + payload


def unseal(key: str, raw: bytes) -> bytes | None:
    """The payload of ``seal(key, payload)``, or None when ``raw`` is not exactly that (truncated,
    altered, random bytes, another key's value, an older format)."""
    head = len(SEAL_MAGIC) + 32
    if len(raw) < head or not raw.startswith(SEAL_MAGIC):
        return None
    payload = raw[head:]
    if hashlib.sha256(key.encode() + b"\0" + payload).digest() != raw[len(SEAL_MAGIC) : head]:
        return None
    return payload


def file_records(folder: Path, names: Iterable[str]) -> dict[str, dict[str, object]]:
    """{name: {size, sha256}} of the files ``names`` in ``folder`` (written beside them at build)."""
    return {
        name: {"size": (folder / name).stat().st_size, "sha256": file_sha256(folder / name)}
        for name in sorted(names)
    }


def check_files(folder: Path, records: object) -> str | None:
    """None when every recorded file of ``folder`` has its recorded size and sha256, else the first
    problem in words naming the file (missing, another size, another hash, or no records at all)."""
    if not isinstance(records, dict) or not records:
        return f"{folder}: no checksums recorded (written by an older karma)"
    for name, record in sorted(records.items()):
        path = folder / name
        if not isinstance(record, dict) or "size" not in record or "sha256" not in record:
            return f"{path}: its checksum record is malformed"
        if not path.is_file():
            return f"{path}: missing"
        size = path.stat().st_size
        if size != record["size"]:
            return f"{path}: {size} bytes, {record['size']} when it was written"
        if file_sha256(path) != record["sha256"]:
            return (
                f"{path}: its sha256 differs from the one recorded when it was written (corrupt or replaced)"
            )
    return None


SIDECAR_SUFFIX = ".sha256"
"""Beside a cached file: the sha256 of its bytes, written right after it (``record_sidecar``)."""


def record_sidecar(path: Path) -> None:
    """Write ``path``'s sha256 beside it, so a later reuse can check the file before trusting it."""
    from karma.core.atomic import atomic_write_text

    atomic_write_text(path.with_name(path.name + SIDECAR_SUFFIX), file_sha256(path) + "\n")


def reusable(path: Path) -> bool:
    """True when the cached file ``path`` exists and matches the sha256 recorded beside it. A file
    without its record (a write killed in between, an older karma) is silently not reused; one whose
    bytes differ from its record is named on stderr. Either way the caller writes it again."""
    if not path.is_file():
        return False
    try:
        recorded = path.with_name(path.name + SIDECAR_SUFFIX).read_text().strip()
    except OSError:
        return False
    if file_sha256(path) != recorded:
        note_rebuilt(f"{path}: its sha256 differs from the one recorded when it was written")
        return False
    return True


def note_rebuilt(problem: str, action: str = "rebuilt") -> None:
    """Say once per process, on stderr, that a cache file was bad and what karma does about it."""
    line = f"note: cache: {problem}; {action}"
    if line not in _NOTED:
        _NOTED.add(line)
        print(line, file=sys.stderr, flush=True)
