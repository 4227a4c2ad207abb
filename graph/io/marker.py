"""The completion marker of a karma graph folder: written last, checked first.

``karma-complete.json`` holds the graph's content hash and the sha256 of every file of the folder.
:func:`graph.io.save_graph` stages the whole folder and swaps it in at once (see
``karma.core.atomic.atomic_directory``), writing the marker as the last file, so a folder with a
valid marker is complete by construction.

Reading rule (:func:`check_folder`):

* a folder with ``graph.json`` (written by karma) must carry the marker and every listed file must
  match its hash; otherwise it is refused with a one-line error (an interrupted or pre-marker
  write). A lone ``graph.json`` *file* is still read directly: it is one file, validated field by
  field, and ``karma graph import OLD/graph.json --out NEW`` turns it into a marked folder;
* a folder with only GraphRAG tables or a GraphML file and no ``graph.json`` is an import from
  another tool (Microsoft GraphRAG, Gephi, ...) and is read without a marker.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from karma.core.atomic import atomic_write_json
from karma.core.errors import InputError

COMPLETE_FILE = "karma-complete.json"
MARKER_FORMAT = 1


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_marker(folder: Path, content_hash: str, files: list[str]) -> Path:
    """Write the marker for ``files`` (names inside ``folder``) and the graph's content hash."""
    payload = {
        "format": MARKER_FORMAT,
        "content_hash": content_hash,
        "files": {name: file_sha256(folder / name) for name in sorted(files)},
    }
    return atomic_write_json(folder / COMPLETE_FILE, payload, indent=1, sort_keys=True)


def read_marker(folder: Path) -> dict | None:
    """The marker payload, or None when the folder has none."""
    path = folder / COMPLETE_FILE
    if not path.is_file():
        return None
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise InputError(f"{path}: completion marker is not valid JSON; rebuild the graph folder") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("files"), dict):
        raise InputError(f"{path}: completion marker lacks its file list; rebuild the graph folder")
    return payload


def check_folder(folder: Path, graph_file: str) -> dict | None:
    """Apply the reading rule (module doc); returns the marker (None for a foreign import folder)."""
    marker = read_marker(folder)
    if marker is None:
        if (folder / graph_file).is_file():
            raise InputError(
                f"{folder}: graph folder without its completion marker {COMPLETE_FILE} (an interrupted "
                f"or older karma wrote it); rebuild it with `karma graph build`, or convert it with "
                f"`karma graph import {folder / graph_file} --out NEW_FOLDER`"
            )
        return None
    for name, expected in sorted(marker["files"].items()):
        path = folder / name
        if not path.is_file():
            raise InputError(
                f"{folder}: {name} listed in {COMPLETE_FILE} is missing; rebuild the graph folder"
            )
        if file_sha256(path) != expected:
            raise InputError(
                f"{folder}: {name} does not match {COMPLETE_FILE} (a partial or foreign write); "
                "rebuild the graph folder"
            )
    return marker
