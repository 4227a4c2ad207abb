"""The canonical on-disk form of a CKG: one JSON document (``graph.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from graph.model import CausalGraph
from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError

GRAPH_JSON = "graph.json"


def write_json(graph: CausalGraph, path: str | Path) -> Path:
    """Write the graph as JSON (keys in id order, so equal graphs give identical files)."""
    path = Path(path)
    payload = graph.model_dump(mode="json")
    try:  # NaN / Infinity are not JSON: refused rather than written as tokens other readers reject
        text = json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"{path}: the graph holds a non-finite number ({exc}); not written") from None
    atomic_write_text(path, text + "\n")
    return path


def read_json(path: str | Path) -> CausalGraph:
    """Read a graph written by ``write_json``; errors name the file and the bad field."""
    path = Path(path)
    try:
        return CausalGraph.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"graph file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a karma graph: not UTF-8 text (byte {exc.start})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: not a karma graph: {exc}") from exc
