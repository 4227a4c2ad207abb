"""Hand-made event tables for the builder's tests: one helper, so each test states only its columns
and which transition follows which (the shape ``graph.ckg.detect.build_event_table`` gives)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from graph.ckg.detect import EventTable


def event_table(
    columns: Mapping[str, Sequence[bool] | np.ndarray], prev: Sequence[int] | np.ndarray
) -> EventTable:
    """An event table with ``columns`` (event id -> occurs, per row; in the order given), every event
    defined on every row, no thresholds, and ``prev`` (each row's previous transition, -1 for none).

    Row ids are ``v<video>/t<index>``: a row without a previous transition starts a new video, as the
    builder's rows do (sorted by video and index), so the ids read like a corpus's transition ids."""
    names = list(columns)
    occurs = np.column_stack([np.asarray(columns[c], dtype=bool) for c in names])
    prev_rows = np.asarray(prev, dtype=np.int64)
    row_ids: list[str] = []
    video, index = -1, 0
    for p in prev_rows:
        video, index = (video + 1, 0) if p < 0 else (video, index + 1)
        row_ids.append(f"v{video:04d}/t{index:03d}")
    return EventTable(
        row_ids=row_ids,
        columns=names,
        occurs=occurs,
        defined=np.ones_like(occurs),
        thresholds={},
        prev=prev_rows,
    )
