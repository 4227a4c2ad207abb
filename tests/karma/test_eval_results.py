"""Aggregation: parse failures count as wrong and are reported, pairs are matched, ties get 1/m credit."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from karma.eval.records import BaselineRecord, SampleRecord
from karma.eval.results import aggregate


def _sample(q: int, video: str, qtype: str, arm: str, letter: str | None, status: str = "ok") -> SampleRecord:
    return SampleRecord(
        question_id=f"{video}/t000/q{q}",
        video_id=video,
        transition_id=f"{video}/t000",
        question_type=qtype,
        arm=arm,  # type: ignore[arg-type]
        prompt_hash="h",
        answer="a",
        raw_completion="" if letter is None else f"ANSWER: {letter}",
        parsed_letter=letter,
        parse_status=status,  # type: ignore[arg-type]
        correct=letter == "a",
    )


def _records() -> list[SampleRecord]:
    rows = []
    # on arm: 5 of 6 right; off arm: 2 of 6 right, one unparsed.
    on = ["a", "a", "a", "a", "a", "b"]
    off = ["a", "b", "c", None, "a", "b"]
    for i in range(6):
        video = f"v{i % 3}"
        qtype = "evidential" if i < 3 else "predictive"
        rows.append(_sample(i, video, qtype, "on", on[i]))
        rows.append(_sample(i, video, qtype, "off", off[i], status="none" if off[i] is None else "ok"))
    return rows


def test_accuracy_parse_failures_and_pairs() -> None:
    results = aggregate(_records(), [], resamples=500, seed=0)
    on, off = results["arms"]["on"]["overall"], results["arms"]["off"]["overall"]
    assert (on["n"], on["correct"]) == (6, 5)
    assert off["correct"] == 2 and off["parse_failures"] == 1
    assert off["parse_failure_rate"] == pytest.approx(1 / 6)
    assert off["accuracy"] == pytest.approx(2 / 6)  # the unparsed answer is in the denominator
    paired = results["paired"]["overall"]
    # on-only right: questions 1, 2, 3 -> 3; off-only right: none.
    assert (paired["on_only_correct"], paired["off_only_correct"]) == (3, 0)
    assert paired["delta"] == pytest.approx(3 / 6)
    assert paired["mcnemar_p"] == pytest.approx(binomtest(0, 3, 0.5).pvalue)
    assert set(results["arms"]["on"]["by_type"]) == {"evidential", "predictive"}
    assert results["arms"]["on"]["by_type"]["evidential"]["accuracy"] == 1.0


def test_order_of_records_does_not_change_results() -> None:
    forward = aggregate(_records(), [], resamples=500, seed=0)
    backward = aggregate(list(reversed(_records())), [], resamples=500, seed=0)
    assert json.dumps(forward, sort_keys=True) == json.dumps(backward, sort_keys=True)


def test_baseline_ties_get_expected_credit() -> None:
    baselines = [
        BaselineRecord(
            question_id=f"v{i % 3}/t000/q{i}",
            video_id=f"v{i % 3}",
            question_type="evidential" if i < 3 else "predictive",
            answer="a",
            picks={
                "most_frequent_letter": ["a"],
                "longest_option": ["b"],
                "word_overlap": ["a"],
                "graph_reader": ["a", "b"] if i % 2 else [],
            },
        )
        for i in range(6)
    ]
    results = aggregate(_records(), baselines, resamples=500, seed=0)
    overall = results["baselines"]["overall"]
    assert overall["random"]["accuracy"] == 0.25
    assert overall["most_frequent_letter"]["accuracy"] == 1.0
    assert overall["longest_option"]["accuracy"] == 0.0
    assert overall["graph_reader"]["accuracy"] == pytest.approx((3 * 0.5) / 6)
    assert overall["graph_reader"]["no_answer"] == 3
