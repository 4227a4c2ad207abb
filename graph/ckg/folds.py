"""Split awareness: deterministic k-fold partitions of videos.

An evaluation that answers questions about the videos of fold I must retrieve from a graph built
without them (``BuildConfig.exclude_videos = fold I``), so no statistic it reads was computed from the
video it is answering.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from karma.core.errors import InputError


def video_folds(video_ids: Iterable[str], k: int, seed: int = 0) -> list[set[str]]:
    """Partition the distinct video ids into ``k`` folds of near-equal size, deterministically.

    The ids are sorted, shuffled with ``random.Random(seed)`` and dealt round-robin, so the result
    depends only on the set of ids, k and the seed (not on input order).
    """
    if k < 2:
        raise InputError(f"k must be at least 2 to make folds, got {k}")
    ids = sorted(set(video_ids))
    if len(ids) < k:
        raise InputError(f"cannot make {k} folds from {len(ids)} videos")
    random.Random(seed).shuffle(ids)
    folds: list[set[str]] = [set() for _ in range(k)]
    for position, video_id in enumerate(ids):
        folds[position % k].add(video_id)
    return folds


def fold_exclusion(video_ids: Iterable[str], k: int, fold: int, seed: int = 0) -> list[str]:
    """The sorted video ids of fold ``fold`` (0-based): what a build for that fold leaves out."""
    folds = video_folds(video_ids, k, seed)
    if not 0 <= fold < k:
        raise InputError(f"fold must be in 0..{k - 1}, got {fold}")
    return sorted(folds[fold])
