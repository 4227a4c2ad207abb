"""Karma-MV as the first registered task: `karma eval --task karma-mv` gives the same results.json,
byte for byte, as plain `karma eval` on the sample data (embedded llama.cpp model, 2 questions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from karma.tasks import DEFAULT_TASK, TASKS, get_task

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"


def _eval(out: Path, cache: Path, *extra: str) -> None:
    command = [
        sys.executable, "-m", "karma.cli.main", "eval", "--model", "smollm2-135m", "--data", str(SAMPLE), "--out", str(out),
        "--ckg", "both", "--retriever", "keyword", "--k", "4", "--limit", "2", "--whole-corpus-graph", "--constrain-choices",
        "--max-tokens", "4", "--cache", str(cache), "--no-progress", "--bootstrap-resamples", "200", *extra,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
def test_karma_mv_through_the_registry_gives_byte_identical_results(tmp_path: Path):
    pytest.importorskip("llama_cpp")
    cache = tmp_path / "cache.sqlite"
    _eval(tmp_path / "plain", cache)
    _eval(tmp_path / "task", cache, "--task", "karma-mv")
    plain = (tmp_path / "plain" / "results.json").read_bytes()
    assert plain == (tmp_path / "task" / "results.json").read_bytes()
    assert b'"n_questions": 2' in plain


def test_karma_mv_is_the_default_task_and_its_items_keep_the_published_fields():
    assert TASKS.names()[0] == DEFAULT_TASK == "karma-mv"
    data = get_task("karma-mv").load(SAMPLE)
    assert data.items and not data.problems
    first = data.items[0]
    assert first.letters == ("a", "b", "c", "d") and first.cluster_id == first.id.split("/")[0]
    assert {i.category for i in data.items} <= {"evidential", "predictive", "counterfactual", "descriptive"}


def test_every_registered_task_loads_and_describes_itself():
    for name in TASKS.names():
        task = get_task(name)
        info = task.describe()
        assert info["task"] == name and info["kind"] in {"mcq", "analysis", "open"} and info["metrics"]
