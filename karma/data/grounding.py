"""What each made question rests on: ``question_grounding.jsonl``, written by ``karma qa make``.

One JSON object a line with at least ``question_id`` (``<video>/t<NNN>/q<M>``, the ids ``karma eval``
logs) and ``grounding``: ``observed`` (the answer is the transition's own detected change) or ``rule``
(the answer follows a fact of a named graph built without the video). ``karma eval`` and ``karma
report`` split accuracy and the graph's paired effect by it when the data folder holds the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from karma.core.errors import InputError

GROUNDING = "question_grounding.jsonl"
"""File name of the grounding records inside a question folder."""


def read_groundings(folder: str | Path) -> dict[str, str]:
    """``question_id -> grounding`` of ``folder/question_grounding.jsonl``; empty when there is none.

    A line that is not a JSON object with string ``question_id`` and ``grounding`` is an InputError
    naming the file, the line and the field (nothing is skipped silently)."""
    path = Path(folder) / GROUNDING
    if not path.is_file():
        return {}
    found: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}: line {number}: not a JSON object")
        for field in ("question_id", "grounding"):
            if not isinstance(record.get(field), str) or not record[field]:
                raise InputError(f"{path}: line {number}: field {field!r} missing or not a string")
        found[record["question_id"]] = record["grounding"]
    return found
