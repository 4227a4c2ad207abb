"""The one aggregation core behind every task's ``results.json`` (Karma-MV and its neighbours).

Each task reduces its per-(item, arm) records to :class:`Outcome` (item id, arm, cluster, correct,
parse status, backend error, reporting groups) and keeps a reference to its own record for the
extras only it reports. The rules, the same for every task:

* **Answered**: a record whose request came back (``error`` is None). A backend error is no answer:
  it is counted in ``backend_errors`` and left out of ``n``, the accuracy, the parse failures and the
  pairs (a rerun retries it; the newer record supersedes it).
* **Accuracy**: the share of answered records that are correct, with a percentile interval from the
  cluster bootstrap (:func:`karma.run.stats.cluster_bootstrap_accuracy`): whole clusters (videos,
  video-music pairs, items) are resampled. An unparsed answer (parse status ``none``) is wrong and is
  counted as a parse failure; a backend error never is.
* **Pairs** of two arms: the items both arms answered. The paired difference (first minus second)
  has the same cluster bootstrap interval; the discordant pairs go to the exact McNemar test
  (:func:`karma.run.stats.mcnemar_exact`), whatever their number.
* Undefined values (no answered record, no pair) are written as ``null``, never as NaN (not JSON).

The functions are pure: the same outcomes and seed give the same numbers, whatever the input order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from karma.run.stats import (
    DEFAULT_LEVEL,
    cluster_bootstrap_accuracy,
    cluster_bootstrap_paired_difference,
    mcnemar_exact,
)

OVERALL = "overall"
PARSE_FAILURE = "none"
"""The parse status of an answer nothing could be read from (scored as wrong)."""
LEVEL = DEFAULT_LEVEL
"""Coverage of every interval (0.95)."""

GroupKey = Callable[["Outcome"], "str | None"]
"""Which group of a reporting split an outcome belongs to (None: in no group of that split)."""
GroupOrder = Callable[[Iterable[str]], list[str]]
"""The order of a split's groups in the payload (results.json itself is written with sorted keys)."""
Extra = Callable[[list[Any]], dict[str, Any]]
"""Task-specific statistics of one arm and group, computed on the answered records (their ``record``)."""


@dataclass(frozen=True)
class Outcome:
    """One answer to one item in one arm, in the shape every task's records reduce to."""

    item: str
    """Item (question) id; the pairing key across arms."""
    arm: str
    """The arm that answered."""
    cluster: str
    """Bootstrap resampling unit (video, video-music pair, the item itself)."""
    correct: bool
    """The answer was right (False when unparsed or on a backend error)."""
    parse_status: str
    """How the answer was read; :data:`PARSE_FAILURE` when nothing could be."""
    error: str | None = None
    """Backend error, if the request failed (then this is no answer)."""
    groups: Mapping[str, str | None] = field(default_factory=dict)
    """Reporting splits: split name -> the item's group (type, category, subcategory, ...)."""
    record: Any = None
    """The task's own record, for the extras only that task reports."""

    @property
    def answered(self) -> bool:
        """True when the backend gave an answer (right or wrong)."""
        return self.error is None


def finite(value: float | None) -> float | None:
    """``value``, or None for NaN (an estimate over nothing) so that the JSON stays JSON."""
    return None if value is None or value != value else value


def group_by(
    rows: Sequence[Any], key: Callable[[Any], str | None], order: GroupOrder = sorted
) -> dict[str, list[Any]]:
    """Rows per group of ``key`` (rows whose key is None are in no group), groups in ``order``."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        value = key(row)
        if value is not None:
            groups[value].append(row)
    return {name: groups[name] for name in order(groups)}


def arm_stats(
    outcomes: Sequence[Outcome],
    *,
    resamples: int,
    seed: int,
    cluster_key: str = "n_clusters",
    extra: Extra | None = None,
) -> dict[str, Any]:
    """One arm (or one group of it): answered ``n``, its clusters (under ``cluster_key``), correct,
    accuracy with its cluster bootstrap interval, parse failures and their rate, backend errors; plus
    ``extra`` of the answered records."""
    done = [o for o in outcomes if o.answered]
    interval = cluster_bootstrap_accuracy(
        [o.correct for o in done], [o.cluster for o in done], resamples=resamples, level=LEVEL, seed=seed
    )
    n = len(done)
    failures = sum(1 for o in done if o.parse_status == PARSE_FAILURE)
    stats: dict[str, Any] = {
        "n": n,
        cluster_key: len({o.cluster for o in done}),
        "correct": sum(1 for o in done if o.correct),
        "accuracy": finite(interval.estimate),
        "ci_low": finite(interval.low),
        "ci_high": finite(interval.high),
        "parse_failures": failures,
        "parse_failure_rate": failures / n if n else 0.0,
        "backend_errors": len(outcomes) - n,
    }
    if extra is not None:
        stats.update(extra([o.record for o in done]))
    return stats


def pairs_of(outcomes: Sequence[Outcome], first: str, second: str) -> list[tuple[Outcome, Outcome]]:
    """The items both arms answered (no backend error in either), in item order. With several records
    of one (item, arm) the last one counts."""
    latest = {(o.item, o.arm): o for o in outcomes}
    pairs = []
    for item in sorted({o.item for o in outcomes}):
        a, b = latest.get((item, first)), latest.get((item, second))
        if a is not None and b is not None and a.answered and b.answered:
            pairs.append((a, b))
    return pairs


def paired_stats(
    pairs: Sequence[tuple[Outcome, Outcome]],
    *,
    resamples: int,
    seed: int,
    labels: tuple[str, str] = ("first", "second"),
) -> dict[str, Any]:
    """First arm minus second on the same items: both accuracies, the difference with its cluster
    bootstrap interval, the discordant counts (``<label>_only_correct``) and the exact McNemar p."""
    first = [a.correct for a, _ in pairs]
    second = [b.correct for _, b in pairs]
    diff = cluster_bootstrap_paired_difference(
        first, second, [a.cluster for a, _ in pairs], resamples=resamples, level=LEVEL, seed=seed
    )
    test = mcnemar_exact(first, second)
    n = len(pairs)
    one, two = labels
    return {
        "n_pairs": n,
        f"accuracy_{one}": sum(first) / n if n else None,
        f"accuracy_{two}": sum(second) / n if n else None,
        "delta": finite(diff.estimate),
        "ci_low": finite(diff.low),
        "ci_high": finite(diff.high),
        f"{one}_only_correct": test.b,
        f"{two}_only_correct": test.c,
        "mcnemar_p": test.p_value,
    }


@dataclass(frozen=True)
class Splits:
    """The reporting splits of a task: payload key (``by_type``, ``by_category``) -> group of an outcome."""

    keys: Mapping[str, GroupKey]
    """Split name in the payload -> the outcome's group in it."""
    order: GroupOrder = sorted
    """Order of the groups of every split."""


def split_block(
    rows: Sequence[Any],
    splits: Splits,
    stats: Callable[[Sequence[Any]], dict[str, Any]],
    outcome_of: Callable[[Any], Outcome] = lambda row: row,
) -> dict[str, Any]:
    """``{"overall": stats(rows), <split>: {group: stats(rows of the group)}}``; a row's groups are those
    of ``outcome_of(row)`` (an outcome, or the first member of a pair)."""
    block: dict[str, Any] = {OVERALL: stats(rows)}
    for name, key in splits.keys.items():
        groups = group_by(rows, lambda row, key=key: key(outcome_of(row)), splits.order)
        block[name] = {group: stats(members) for group, members in groups.items()}
    return block


def arm_block(
    outcomes: Sequence[Outcome],
    splits: Splits,
    *,
    resamples: int,
    seed: int,
    cluster_key: str = "n_clusters",
    extra: Extra | None = None,
) -> dict[str, Any]:
    """:func:`arm_stats` of one arm's outcomes, overall and per group of every split."""
    return split_block(
        outcomes,
        splits,
        lambda rows: arm_stats(rows, resamples=resamples, seed=seed, cluster_key=cluster_key, extra=extra),
    )


def arms_payload(
    outcomes: Sequence[Outcome],
    arms: Sequence[str],
    splits: Splits,
    *,
    resamples: int,
    seed: int,
    cluster_key: str = "n_clusters",
    extra: Extra | None = None,
) -> dict[str, Any]:
    """Every arm of ``arms`` that has outcomes (answered or not), in that order, as :func:`arm_block`."""
    payload: dict[str, Any] = {}
    for arm in arms:
        rows = [o for o in outcomes if o.arm == arm]
        if rows:
            payload[arm] = arm_block(
                rows, splits, resamples=resamples, seed=seed, cluster_key=cluster_key, extra=extra
            )
    return payload


def paired_block(
    pairs: Sequence[tuple[Outcome, Outcome]],
    splits: Splits,
    *,
    resamples: int,
    seed: int,
    labels: tuple[str, str] = ("first", "second"),
) -> dict[str, Any]:
    """:func:`paired_stats` overall and per group of every split (the group of the first member)."""
    return split_block(
        pairs,
        splits,
        lambda rows: paired_stats(rows, resamples=resamples, seed=seed, labels=labels),
        outcome_of=lambda pair: pair[0],
    )


def arm_pairs(arms: Sequence[str]) -> list[tuple[str, str]]:
    """Every two arms, in the order given (first minus second)."""
    return list(combinations(arms, 2))


def bootstrap_info(resamples: int, seed: int, unit: str) -> dict[str, Any]:
    """How the intervals were made (written beside them)."""
    return {"resamples": resamples, "seed": seed, "level": LEVEL, "unit": unit}
