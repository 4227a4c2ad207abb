"""One flat row per question, for pandas, Hugging Face ``datasets``, lmms-eval or inspect_ai users.

``karma data export DATA --out FILE --format parquet|jsonl`` writes what karma's loader kept (so the
rows are exactly the questions ``karma eval`` would score). Columns (:data:`COLUMNS`, in order):

- ``question_id`` (``<video>/t<NNN>/q<M>``), ``video_id``, ``transition_id`` (``<video>/t<NNN>``),
  ``transition_index``, ``question_index`` (positions in the QA file, 0-based);
- ``type`` (evidential / predictive / counterfactual / descriptive), ``type_published`` (the spelling
  in the file, null when inferred from position);
- ``question``, ``options`` (an object with keys ``a``-``d``), ``answer`` (a letter), ``explanation``;
- ``past_scene`` / ``current_scene`` (``scene_NNN.mp4``, the clip names), and each scene's
  ``*_start_time`` / ``*_end_time`` (``HH:MM:SS.mmm``) and ``*_start_s`` / ``*_end_s`` (seconds);
  null when the QA file gave the scene without times.

Rows are sorted by ``question_id``; each question appears once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from karma.core.errors import InputError
from karma.core.records import OPTION_LETTERS, SceneRef
from karma.data.dataset import Dataset

ExportFormat = Literal["parquet", "jsonl"]
EXPORT_FORMATS: tuple[str, ...] = ("parquet", "jsonl")

COLUMNS: tuple[str, ...] = (
    "question_id",
    "video_id",
    "transition_id",
    "transition_index",
    "question_index",
    "type",
    "type_published",
    "question",
    "options",
    "answer",
    "explanation",
    "past_scene",
    "past_start_time",
    "past_end_time",
    "past_start_s",
    "past_end_s",
    "current_scene",
    "current_start_time",
    "current_end_time",
    "current_start_s",
    "current_end_s",
)
"""The export's columns, in order."""


def _scene(prefix: str, scene: SceneRef) -> dict[str, object]:
    return {
        f"{prefix}_scene": scene.name,
        f"{prefix}_start_time": scene.start_time,
        f"{prefix}_end_time": scene.end_time,
        f"{prefix}_start_s": scene.start_seconds,
        f"{prefix}_end_s": scene.end_seconds,
    }


def question_rows(dataset: Dataset) -> list[dict[str, object]]:
    """One dict per kept question, columns as :data:`COLUMNS`, sorted by question id."""
    rows = []
    for transition, question in dataset.iter_questions():
        row: dict[str, object] = {
            "question_id": transition.question_id(question),
            "video_id": transition.video_id,
            "transition_id": transition.transition_id,
            "transition_index": transition.index,
            "question_index": question.index,
            "type": question.type.value,
            "type_published": question.raw_type,
            "question": question.question,
            "options": {letter: question.options[letter] for letter in OPTION_LETTERS},  # type: ignore[index]
            "answer": question.answer,
            "explanation": question.explanation,
            **_scene("past", transition.past_scene),
            **_scene("current", transition.current_scene),
        }
        rows.append({column: row[column] for column in COLUMNS})
    return sorted(rows, key=lambda r: str(r["question_id"]))


def _arrow_schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    text, number, integer = pa.string(), pa.float64(), pa.int64()
    types = {
        "transition_index": integer,
        "question_index": integer,
        "options": pa.struct([(letter, text) for letter in OPTION_LETTERS]),
        **{f"{p}_{e}_s": number for p in ("past", "current") for e in ("start", "end")},
    }
    return pa.schema([(column, types.get(column, text)) for column in COLUMNS])


def export_questions(dataset: Dataset, out: str | Path, fmt: ExportFormat = "parquet") -> int:
    """Write the rows to ``out`` (parquet or JSON lines, written atomically); returns the row count."""
    from karma.core.atomic import atomic_path

    if fmt not in EXPORT_FORMATS:
        raise InputError(f"format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    rows = question_rows(dataset)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        if fmt == "jsonl":
            with open(tmp, "w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows, schema=_arrow_schema()), tmp)
    return len(rows)
