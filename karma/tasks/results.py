"""Aggregate a task run's ``samples.jsonl`` into ``results.json``.

The statistics come from the one aggregation core every task shares (:mod:`karma.run.aggregate`);
this module maps task records onto it and adds what the tasks report beside: the chance baseline as
the mean of 1/k over the answered items (WildScore mixes 2-4 options, so it is not 25%) and the
reporting splits from the items' published fields (``by_preference``, ``by_difficulty``, ...).

Per arm: accuracy overall, per category and per subcategory, with percentile intervals from a
bootstrap that resamples the task's clusters (items, video-music pairs, videos); parse failures.
Between every two arms, on the items both answered: the paired difference with a clustered
interval and the exact McNemar test. A pure function of the records and the seed.

A record whose request failed in the backend (``error`` set) is not an answer: it is counted in
``backend_errors`` and left out of ``n``, the accuracy, the parse failures, the chance baseline
and the pairs (a rerun retries it; the newer record supersedes it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from karma.run.aggregate import (
    OVERALL,
    Outcome,
    Splits,
    arm_block,
    arm_pairs,
    bootstrap_info,
    paired_block,
    pairs_of,
)
from karma.run.aggregate import (
    arm_stats as core_arm_stats,
)
from karma.run.aggregate import (
    paired_stats as core_paired_stats,
)
from karma.tasks.records import TaskSample

__all__ = ["OVERALL", "aggregate_task", "answered", "arm_stats", "chance", "outcome", "paired_stats"]

PAIRED_SPLITS = Splits(keys={"by_category": lambda o: o.groups["category"]})
"""Paired arms are reported overall and per category."""


def answered(record: TaskSample) -> bool:
    """True when the backend gave an answer (a backend error is no answer, right or wrong)."""
    return record.error is None


def chance(records: Sequence[TaskSample]) -> float | None:
    """Expected accuracy of a uniform random pick: mean of 1/k over the items (None without items)."""
    return sum(1.0 / r.k for r in records) / len(records) if records else None


def _chance_extra(records: list[TaskSample]) -> dict[str, Any]:
    return {"chance": chance(records)}


def outcome(record: TaskSample) -> Outcome:
    """A task answer in the core's shape (category, subcategory and the published splits as groups)."""
    return Outcome(
        item=record.item_id,
        arm=record.arm,
        cluster=record.cluster_id,
        correct=record.correct,
        parse_status=record.parse_status,
        error=record.error,
        groups={"category": record.category, "subcategory": record.subcategory, **record.groups},
        record=record,
    )


def _splits(samples: Sequence[TaskSample]) -> Splits:
    """by_category, by_subcategory, then by_<field> for every published split the records carry."""
    extra = sorted({k for r in samples for k in r.groups} - {"category", "subcategory"})
    keys = ["category", "subcategory", *extra]
    return Splits(keys={f"by_{k}": (lambda o, k=k: o.groups.get(k)) for k in keys})


def arm_stats(records: Sequence[TaskSample], resamples: int, seed: int) -> dict[str, Any]:
    """n (answered), correct, accuracy with its clustered interval, parse failures, chance (mean 1/k)
    over the answered records; backend errors counted apart."""
    return core_arm_stats([outcome(r) for r in records], resamples=resamples, seed=seed, extra=_chance_extra)


def paired_stats(pairs: Sequence[tuple[TaskSample, TaskSample]], resamples: int, seed: int) -> dict[str, Any]:
    """First arm minus second on the same items: difference, clustered interval, exact McNemar."""
    return core_paired_stats([(outcome(a), outcome(b)) for a, b in pairs], resamples=resamples, seed=seed)


def aggregate_task(
    samples: Sequence[TaskSample],
    *,
    task: str,
    arms: Sequence[str],
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The results payload of a task run (see the module docstring)."""
    samples = sorted(samples, key=lambda r: (r.item_id, r.arm))
    outcomes = [outcome(r) for r in samples]
    results: dict[str, Any] = {}
    for arm in arms:
        rows = [o for o in outcomes if o.arm == arm]
        if rows:  # the published splits an arm reports are those its own records carry
            splits = _splits([o.record for o in rows])
            results[arm] = arm_block(rows, splits, resamples=resamples, seed=seed, extra=_chance_extra)
    payload: dict[str, Any] = {
        "task": task,
        "n_items": len({r.item_id for r in samples}),
        "n_clusters": len({r.cluster_id for r in samples}),
        "arms": results,
        "bootstrap": bootstrap_info(resamples, seed, "cluster"),
    }
    paired: dict[str, Any] = {}
    for first, second in arm_pairs([a for a in arms if a in results]):
        pairs = pairs_of(outcomes, first, second)
        if pairs:
            paired[f"{first}-vs-{second}"] = {
                "first": first,
                "second": second,
                **paired_block(pairs, PAIRED_SPLITS, resamples=resamples, seed=seed),
            }
    if paired:
        payload["paired"] = paired
    return payload
