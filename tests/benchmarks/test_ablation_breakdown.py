"""benchmarks/ablation_breakdown.py: the true fact's rank in a prompt, and the table it prints from a
run folder and a world's question_truth.jsonl written here (not by karma)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "ablation_breakdown.py"


def _module():
    spec = importlib.util.spec_from_file_location("ablation_breakdown", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_true_fact_rank_counts_event_pairs_and_finds_any_true_cause() -> None:
    rank = _module().true_fact_rank
    shown = [
        "visual:motion:up->music:tempo:down|causes",
        "visual:motion:up->music:tempo:down|text_relation",  # a twin: same place
        "visual:brightness:down->music:loudness:up|causes",
        "visual:cut:up->music:loudness:up|co_moves",
    ]
    assert rank(shown, ["visual:brightness:down"], "music:loudness:up") == 2
    assert rank(shown, ["visual:hue:up", "visual:cut:up"], "music:loudness:up") == 3
    assert rank(shown, ["visual:motion:up"], "music:tempo:down") == 1
    assert rank(shown, ["visual:motion:up"], "music:tempo:up") is None
    assert rank([], ["visual:motion:up"], "music:tempo:down") is None


def test_the_table_splits_pairs_by_rank(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    samples, truth = [], []
    for i, (rank_facts, on, off) in enumerate(
        [(["c->e|causes"], "a", "b"), (["x->y|causes", "c->e|causes"], "a", "a"), ([], "b", "a")]
    ):
        qid = f"v{i}/t000/q0"
        for arm, letter, facts in (("on", on, rank_facts), ("off", off, [])):
            samples.append(
                {"question_id": qid, "arm": arm, "question_type": "predictive", "video_id": f"v{i}",
                 "answer": "a", "parsed_letter": letter, "fact_ids": facts, "error": None}
            )  # fmt: skip
        truth.append({"question_id": qid, "cause_events": ["c"], "effect_event": "e"})
    (run / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    (tmp_path / "question_truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(run), "--truth", str(tmp_path / "question_truth.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "3 paired questions from 3 videos" in out
    assert "| true fact at rank 1 | 1 | 100.0 | 0.0 | +100.0 | 1 / 0, p 1 |" in out
    assert "| true fact at rank 2-3 | 1 | 100.0 | 100.0 | +0.0 | 0 / 0, p 1 |" in out
    assert "| true fact at rank not shown | 1 | 0.0 | 100.0 | -100.0 | 0 / 1, p 1 |" in out
