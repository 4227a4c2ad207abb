"""Crash-safe JSON lines: torn tails from a kill are tolerated and repaired, real corruption is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from karma.eval.records import SampleRecord
from karma.run.jsonl import JsonlAppender, JsonlCorruptError, read_jsonl


def _record(i: int, arm: str = "on") -> SampleRecord:
    return SampleRecord(
        question_id=f"v/t000/q{i}",
        video_id="v",
        transition_id="v/t000",
        question_type="evidential",
        arm=arm,  # type: ignore[arg-type]
        prompt_hash=f"h{i}",
        answer="a",
        raw_completion="ANSWER: a",
        parsed_letter="a",
        parse_status="ok",
        correct=True,
    )


def test_append_then_read_roundtrip(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    with JsonlAppender(path) as out:
        for i in range(3):
            out.append(_record(i))
    records, torn = read_jsonl(path, SampleRecord)
    assert [r.question_id for r in records] == ["v/t000/q0", "v/t000/q1", "v/t000/q2"]
    assert not torn


def test_torn_last_line_is_ignored_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    with JsonlAppender(path) as out:
        out.append(_record(0))
    whole = _record(1).model_dump_json()
    with path.open("a") as fh:
        fh.write(whole[: len(whole) // 2])  # a write cut off by SIGKILL
    records, torn = read_jsonl(path, SampleRecord)
    assert [r.question_id for r in records] == ["v/t000/q0"] and torn
    with JsonlAppender(path) as out:  # resume: the fragment must not glue onto the next record
        out.append(_record(1))
    records, torn = read_jsonl(path, SampleRecord)
    assert [r.question_id for r in records] == ["v/t000/q0", "v/t000/q1"] and not torn
    assert path.read_text().count("\n") == 2


def test_invalid_complete_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(_record(0).model_dump_json() + "\n" + '{"question_id": "v/t0\n')
    records, torn = read_jsonl(path, SampleRecord)
    assert len(records) == 1 and torn
    with JsonlAppender(path) as out:
        out.append(_record(1))
    assert [r.question_id for r in read_jsonl(path, SampleRecord)[0]] == ["v/t000/q0", "v/t000/q1"]


def test_corruption_before_the_last_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(_record(0).model_dump_json() + "\nnot json\n" + _record(1).model_dump_json() + "\n")
    with pytest.raises(JsonlCorruptError, match="line 2"):
        read_jsonl(path, SampleRecord)


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert read_jsonl(tmp_path / "none.jsonl", SampleRecord) == ([], False)
