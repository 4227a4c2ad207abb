"""Aggregate a task run's ``samples.jsonl`` into ``results.json``.

Per arm: accuracy overall, per category and per subcategory, with percentile intervals from a
bootstrap that resamples the task's clusters (items, video-music pairs, videos); parse failures;
the chance baseline as the mean of 1/k over the items (WildScore mixes 2-4 options, so it is not
25%). Between every two arms, on the items both answered: the paired difference with a clustered
interval and the exact McNemar test. A pure function of the records and the seed.

A record whose request failed in the backend (``error`` set) is not an answer: it is counted in
``backend_errors`` and left out of ``n``, the accuracy, the parse failures, the chance baseline
and the pairs (a rerun retries it; the newer record supersedes it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

from karma.eval.stats import cluster_bootstrap_accuracy, cluster_bootstrap_paired_difference, mcnemar_exact
from karma.tasks.records import TaskSample

OVERALL = "overall"


def answered(record: TaskSample) -> bool:
    """True when the backend gave an answer (a backend error is no answer, right or wrong)."""
    return record.error is None


def chance(records: Sequence[TaskSample]) -> float | None:
    """Expected accuracy of a uniform random pick: mean of 1/k over the items (None without items)."""
    return sum(1.0 / r.k for r in records) / len(records) if records else None


def _finite(value: float) -> float | None:
    return value if value == value else None  # NaN (no answered item) is written as null


def arm_stats(records: Sequence[TaskSample], resamples: int, seed: int) -> dict[str, Any]:
    """n (answered), correct, accuracy with its clustered interval, parse failures, chance (mean 1/k)
    over the answered records; backend errors counted apart."""
    done = [r for r in records if answered(r)]
    interval = cluster_bootstrap_accuracy(
        [r.correct for r in done], [r.cluster_id for r in done], resamples=resamples, seed=seed
    )
    n = len(done)
    failures = sum(1 for r in done if r.parse_status == "none")
    return {
        "n": n,
        "n_clusters": len({r.cluster_id for r in done}),
        "correct": sum(1 for r in done if r.correct),
        "accuracy": _finite(interval.estimate),
        "ci_low": _finite(interval.low),
        "ci_high": _finite(interval.high),
        "chance": chance(done),
        "parse_failures": failures,
        "parse_failure_rate": failures / n if n else 0.0,
        "backend_errors": len(records) - n,
    }


def paired_stats(pairs: Sequence[tuple[TaskSample, TaskSample]], resamples: int, seed: int) -> dict[str, Any]:
    """First arm minus second on the same items: difference, clustered interval, exact McNemar."""
    first = [a.correct for a, _ in pairs]
    second = [b.correct for _, b in pairs]
    diff = cluster_bootstrap_paired_difference(
        first, second, [a.cluster_id for a, _ in pairs], resamples=resamples, seed=seed
    )
    test = mcnemar_exact(first, second)
    n = len(pairs)
    return {
        "n_pairs": n,
        "accuracy_first": sum(first) / n if n else float("nan"),
        "accuracy_second": sum(second) / n if n else float("nan"),
        "delta": diff.estimate,
        "ci_low": diff.low,
        "ci_high": diff.high,
        "first_only_correct": test.b,
        "second_only_correct": test.c,
        "mcnemar_p": test.p_value,
    }


def _groups(records: Sequence[Any], key: Callable[[Any], str | None]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        value = key(record)
        if value is not None:
            groups[value].append(record)
    return {k: groups[k] for k in sorted(groups)}


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
    payload: dict[str, Any] = {
        "task": task,
        "n_items": len({r.item_id for r in samples}),
        "n_clusters": len({r.cluster_id for r in samples}),
        "arms": {},
        "bootstrap": {"resamples": resamples, "seed": seed, "level": 0.95, "unit": "cluster"},
    }
    for arm in arms:
        records = [r for r in samples if r.arm == arm]
        if not records:
            continue
        payload["arms"][arm] = {
            OVERALL: arm_stats(records, resamples, seed),
            "by_category": {
                c: arm_stats(rs, resamples, seed) for c, rs in _groups(records, lambda r: r.category).items()
            },
            "by_subcategory": {
                c: arm_stats(rs, resamples, seed)
                for c, rs in _groups(records, lambda r: r.subcategory).items()
            },
        }
        for key in sorted({k for r in records for k in r.groups}):
            payload["arms"][arm][f"by_{key}"] = {
                g: arm_stats(rs, resamples, seed)
                for g, rs in _groups(records, lambda r, key=key: r.groups.get(key)).items()
            }
    by_key = {r.key: r for r in samples}
    paired: dict[str, Any] = {}
    for first, second in combinations([a for a in arms if a in payload["arms"]], 2):
        pairs = [
            (by_key[(i, first)], by_key[(i, second)])
            for i in sorted({r.item_id for r in samples})
            if (i, first) in by_key
            and (i, second) in by_key
            and answered(by_key[(i, first)])
            and answered(by_key[(i, second)])
        ]
        if pairs:
            paired[f"{first}-vs-{second}"] = {
                "first": first,
                "second": second,
                OVERALL: paired_stats(pairs, resamples, seed),
                "by_category": {
                    c: paired_stats(ps, resamples, seed)
                    for c, ps in _groups(pairs, lambda p: p[0].category).items()
                },
            }
    if paired:
        payload["paired"] = paired
    return payload
