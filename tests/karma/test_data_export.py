"""``karma data export``: one row per question, and every question once through pandas and ``datasets``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.data import load_dataset
from karma.data.export import COLUMNS
from karma.synth import generate, load_world

WORLDS = Path(__file__).resolve().parents[2] / "data" / "worlds"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export_world")
    generate(load_world(WORLDS / "tiny.yaml"), out, videos=6, seed=2)
    # A published variant in the mix: one transition with plain-string scenes (no times).
    qa = sorted(out.glob("*_qa.json"))[0]
    doc = json.loads(qa.read_text())
    doc[0]["past_scene"], doc[0]["current_scene"] = (
        doc[0]["past_scene"]["name"],
        doc[0]["current_scene"]["name"],
    )
    qa.write_text(json.dumps(doc))
    return out


@pytest.fixture(scope="module")
def exported(world: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("export")
    files = {}
    for fmt in ("parquet", "jsonl"):
        path = out / f"karma_mv.{fmt}"
        result = CliRunner().invoke(app, ["data", "export", str(world), "--out", str(path), "--format", fmt])
        assert result.exit_code == 0, result.output
        files[fmt] = path
    return files


def expected(world: Path) -> dict[str, dict[str, object]]:
    dataset = load_dataset(world)
    return {
        t.question_id(q): {
            "answer": q.answer,
            "options": q.options,
            "type": q.type.value,
            "question": q.question,
        }
        for t, q in dataset.iter_questions()
    }


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_pandas_reads_every_question_once(world: Path, exported: dict[str, Path], fmt: str) -> None:
    import pandas as pd

    frame = pd.read_parquet(exported[fmt]) if fmt == "parquet" else pd.read_json(exported[fmt], lines=True)
    truth = expected(world)
    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == len(truth) > 30 and frame["question_id"].is_unique
    assert set(frame["question_id"]) == set(truth)
    for row in frame.itertuples():
        want = truth[row.question_id]
        assert (row.answer, row.type, row.question) == (want["answer"], want["type"], want["question"])
        assert dict(row.options) == want["options"]
    untimed = frame[frame["past_start_time"].isna()]
    assert len(untimed) == 3 and untimed["past_scene"].str.match(r"scene_\d{3}\.mp4").all()
    timed = frame.dropna(subset=["current_start_s"])
    assert (timed["current_end_s"] > timed["current_start_s"]).all()


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_datasets_load_dataset_reads_every_question_once(
    world: Path, exported: dict[str, Path], fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    datasets = pytest.importorskip("datasets")
    builder = "parquet" if fmt == "parquet" else "json"
    ds = datasets.load_dataset(
        builder, data_files=str(exported[fmt]), split="train", cache_dir=str(tmp_path / "c")
    )
    truth = expected(world)
    ids = ds["question_id"]
    assert len(ids) == len(set(ids)) == len(truth) and set(ids) == set(truth)
    first = ds[0]
    assert first["options"] == truth[first["question_id"]]["options"]
    assert first["answer"] == truth[first["question_id"]]["answer"]


def test_unknown_format_is_refused_in_one_line(world: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "export", str(world), "--out", str(tmp_path / "x.csv"), "--format", "csv"]
    )
    assert result.exit_code == 2
    assert "'--format': 'csv' is not one of 'parquet', 'jsonl'" in result.output
