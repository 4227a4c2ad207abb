"""One aggregation core for every task (issue 29, item 3): the same records through Karma-MV's
``aggregate`` and the tasks' ``aggregate_task`` give the same answered counts, intervals, pairs and
McNemar; a backend error is no answer (out of n, the accuracy and the pairs; never a parse failure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from karma.eval.records import SampleRecord
from karma.eval.report import accuracy_table, plot_accuracy
from karma.eval.results import aggregate
from karma.run.aggregate import Outcome, Splits, arm_block, paired_block, pairs_of
from karma.tasks.records import TaskSample
from karma.tasks.results import aggregate_task

TYPES = ("evidential", "predictive", "counterfactual")

# item -> (on, off), each "right", "wrong", "unparsed" or "error" (a backend error).
ROWS: dict[int, tuple[str, str]] = {
    0: ("right", "right"),
    1: ("right", "wrong"),
    2: ("right", "unparsed"),
    3: ("error", "right"),  # answered by one arm only: not a pair
    4: ("wrong", "right"),
    5: ("right", "error"),  # answered by one arm only: not a pair
    6: ("unparsed", "wrong"),
    7: ("right", "wrong"),
    8: ("error", "error"),  # answered by neither
    9: ("right", "right"),
    10: ("wrong", "wrong"),
    11: ("right", "unparsed"),
}
PAIRED_ITEMS = sorted(i for i, (on, off) in ROWS.items() if "error" not in (on, off))


def _cases(rows: dict[int, tuple[str, str]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(item id, video, fields common to both record kinds) of every (item, arm)."""
    cases = []
    for item, outcomes in rows.items():
        video = f"v{item % 5}"
        for arm, outcome in zip(("on", "off"), outcomes, strict=True):
            letter = {"right": "a", "wrong": "b", "unparsed": None, "error": None}[outcome]
            fields = {
                "arm": arm,
                "answer": "a",
                "parsed_letter": letter,
                "parse_status": "ok" if letter else "none",
                "correct": outcome == "right",
                "error": "HTTP 500" if outcome == "error" else None,
                "raw_completion": "",
            }
            cases.append((f"{video}/t000/q{item}", video, {"_type": TYPES[item % 3], **fields}))
    return cases


def karma_mv_records(rows: dict[int, tuple[str, str]] = ROWS) -> list[SampleRecord]:
    return [
        SampleRecord(
            question_id=qid, video_id=video, transition_id=f"{video}/t000",
            question_type=f.pop("_type"), prompt_hash=qid + f["arm"], **f,
        )
        for qid, video, f in _cases(rows)
    ]  # fmt: skip


def task_records(rows: dict[int, tuple[str, str]] = ROWS) -> list[TaskSample]:
    # The same ids as Karma-MV's, so that the two sort (and pick "the last record") alike.
    return [
        TaskSample(item_id=qid, task="wildscore", category=f.pop("_type"), cluster_id=video, k=4, **f)
        for qid, video, f in _cases(rows)
    ]


ARM_KEYS = ("n", "correct", "accuracy", "ci_low", "ci_high", "parse_failures", "parse_failure_rate")
ARM_KEYS += ("backend_errors",)
PAIR_KEYS = ("n_pairs", "delta", "ci_low", "ci_high", "mcnemar_p")


def _agree(mv: dict[str, Any], task: dict[str, Any]) -> None:
    for arm in ("on", "off"):
        for group in ("overall", *TYPES):
            a = mv["arms"][arm]["overall" if group == "overall" else "by_type"]
            b = task["arms"][arm]["overall" if group == "overall" else "by_category"]
            a, b = (a, b) if group == "overall" else (a[group], b[group])
            assert {k: a[k] for k in ARM_KEYS} == {k: b[k] for k in ARM_KEYS}, (arm, group)
            assert a["n_videos"] == b["n_clusters"]
    block = task["paired"]["on-vs-off"]
    for group in ("overall", *TYPES):
        a = mv["paired"]["overall"] if group == "overall" else mv["paired"]["by_type"][group]
        b = block["overall"] if group == "overall" else block["by_category"][group]
        assert {k: a[k] for k in PAIR_KEYS} == {k: b[k] for k in PAIR_KEYS}, group
        assert (a["on_only_correct"], a["off_only_correct"]) == (
            b["first_only_correct"],
            b["second_only_correct"],
        )
        assert (a["accuracy_on"], a["accuracy_off"]) == (b["accuracy_first"], b["accuracy_second"])


def test_both_adapters_agree_on_pairs_mcnemar_and_intervals() -> None:
    mv = aggregate(karma_mv_records(), [], resamples=400, seed=3)
    task = aggregate_task(task_records(), task="wildscore", arms=["on", "off"], resamples=400, seed=3)
    _agree(mv, task)
    paired = mv["paired"]["overall"]
    # pairs are the items both arms answered: 3, 5 (one arm failed) and 8 (both failed) are out
    assert paired["n_pairs"] == len(PAIRED_ITEMS) == 9
    on_only = sum(1 for i in PAIRED_ITEMS if ROWS[i][0] == "right" and ROWS[i][1] != "right")
    off_only = sum(1 for i in PAIRED_ITEMS if ROWS[i][1] == "right" and ROWS[i][0] != "right")
    assert (paired["on_only_correct"], paired["off_only_correct"]) == (on_only, off_only) == (4, 1)
    assert paired["mcnemar_p"] == pytest.approx(binomtest(1, 5, 0.5).pvalue)
    assert paired["delta"] == pytest.approx((on_only - off_only) / 9)
    assert paired["ci_low"] <= paired["delta"] <= paired["ci_high"]


def test_both_adapters_agree_in_any_record_order() -> None:
    mv = aggregate(list(reversed(karma_mv_records())), [], resamples=200, seed=0)
    task = aggregate_task(list(reversed(task_records())), task="t", arms=["on", "off"], resamples=200, seed=0)
    _agree(mv, task)
    assert mv == aggregate(karma_mv_records(), [], resamples=200, seed=0)


@pytest.mark.parametrize("adapter", ["karma-mv", "task"])
def test_a_backend_error_in_one_arm_leaves_the_pairs_and_is_no_parse_failure(adapter: str) -> None:
    rows = {0: ("right", "right"), 1: ("error", "wrong"), 2: ("unparsed", "right"), 3: ("right", "wrong")}
    if adapter == "karma-mv":
        results = aggregate(karma_mv_records(rows), [], resamples=100, seed=0)
        paired = results["paired"]["overall"]
        only = (paired["on_only_correct"], paired["off_only_correct"])
    else:
        results = aggregate_task(task_records(rows), task="t", arms=["on", "off"], resamples=100, seed=0)
        paired = results["paired"]["on-vs-off"]["overall"]
        only = (paired["first_only_correct"], paired["second_only_correct"])
    on = results["arms"]["on"]["overall"]
    assert on["backend_errors"] == 1 and on["n"] == 3 and on["correct"] == 2
    assert on["accuracy"] == pytest.approx(2 / 3)  # the failed request is not in the denominator
    assert on["parse_failures"] == 1 and on["parse_failure_rate"] == pytest.approx(1 / 3)  # item 2 only
    off = results["arms"]["off"]["overall"]
    assert off["backend_errors"] == 0 and off["n"] == 4 and off["parse_failures"] == 0
    assert paired["n_pairs"] == 3  # items 0, 2, 3: item 1 has no answer with the graph on
    assert only == (1, 1)  # item 3 on only, item 2 off only
    assert paired["mcnemar_p"] == 1.0


def test_an_arm_without_any_answer_has_no_accuracy_and_the_report_still_draws(tmp_path: Path) -> None:
    rows = {0: ("error", "right"), 1: ("error", "wrong")}
    results = aggregate(karma_mv_records(rows), [], resamples=50, seed=0)
    on = results["arms"]["on"]["overall"]
    assert (on["n"], on["backend_errors"], on["parse_failures"]) == (0, 2, 0)
    assert on["accuracy"] is None and on["ci_low"] is None and on["ci_high"] is None  # null, never NaN
    assert "paired" not in results
    assert any(line.startswith("| graph on | – (n=0)") for line in accuracy_table(results))
    assert plot_accuracy(results, tmp_path / "acc.png", "t").read_bytes()[:4] == b"\x89PNG"


def test_the_core_pairs_the_latest_record_of_each_item_and_arm() -> None:
    def outcome(item: str, arm: str, correct: bool, error: str | None = None) -> Outcome:
        return Outcome(item=item, arm=arm, cluster=item, correct=correct, parse_status="ok", error=error)

    outcomes = [
        outcome("a", "x", False, "timeout"),
        outcome("a", "x", True),  # the rerun's record supersedes the failed one
        outcome("a", "y", False),
        outcome("b", "x", True),
        outcome("b", "y", True, "HTTP 500"),
    ]
    pairs = pairs_of(outcomes, "x", "y")
    assert [(p[0].item, p[0].correct) for p in pairs] == [("a", True)]
    splits = Splits(keys={})
    block = paired_block(pairs, splits, resamples=50, seed=0)
    assert block["overall"]["first_only_correct"] == 1 and block["overall"]["n_pairs"] == 1
    arm = arm_block([o for o in outcomes if o.arm == "y"], splits, resamples=50, seed=0)
    assert arm["overall"]["n"] == 1 and arm["overall"]["backend_errors"] == 1
