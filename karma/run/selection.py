"""Which questions ``--limit N`` keeps: a seeded sample spread over videos and types, or the first N.

Questions of one video are correlated, so a run's intervals are clustered by video
(``karma.run.stats``). The first N questions in file order come from very few videos (``--limit 30``
on a synthetic world: 2 videos), which makes those intervals collapse to a point. ``spread`` (the
default) takes the questions round-robin over the videos in a seeded shuffled order, one question of
each video per round, and rotates the question type from video to video, so ``--limit 30`` on a world
of 200 videos covers 30 videos with the three types equally often.

The spread order is one ranking of every selected question; ``--limit N`` keeps its first N, so a
larger limit keeps every question a smaller one kept (widening a run's limit on resume only adds
questions). The kept questions are answered in the stable order (video, transition, question), which
keeps a transition's questions next to each other (llama.cpp's prefix reuse).

A run folder keeps the order it was started with: folders written before the option existed were
filled in the ``first`` order, and resuming one without ``--limit-order`` keeps it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from karma.core.errors import InputError

LimitOrder = Literal["spread", "first"]
LIMIT_ORDERS: tuple[str, ...] = ("spread", "first")
DEFAULT_LIMIT_ORDER: LimitOrder = "spread"
LIMIT_SEED = 0
"""Seed of the spread order: fixed, so a limit names the same questions on every machine and rerun."""
FOLDER_ORDER_BEFORE_OPTION: LimitOrder = "first"
"""The order of run folders whose config.json predates ``--limit-order`` (they took the first N)."""

Pair = TypeVar("Pair", bound=tuple[Any, ...])


def spread_ranking(pairs: Sequence[Pair], seed: int = LIMIT_SEED) -> list[Pair]:
    """Every (transition, question) pair, ranked round-robin over seeded-shuffled videos.

    Within a video the questions are shuffled inside each type and the types interleaved, starting
    from a type that rotates from video to video, so every prefix of the ranking is balanced over
    videos first and over types second.
    """
    rng = random.Random(seed)
    by_video: dict[str, dict[str, list[Pair]]] = {}
    for pair in pairs:
        transition, question = pair[0], pair[1]
        by_video.setdefault(transition.video_id, {}).setdefault(str(question.type), []).append(pair)
    videos = sorted(by_video)
    rng.shuffle(videos)
    all_types = sorted({kind for types in by_video.values() for kind in types})
    queues: list[list[Pair]] = []
    for position, video in enumerate(videos):
        types = by_video[video]
        for kind in sorted(types):
            rng.shuffle(types[kind])
        start = position % len(all_types)
        rotation = [all_types[(start + i) % len(all_types)] for i in range(len(all_types))]
        queue: list[Pair] = []
        while any(types.values()):
            for kind in rotation:
                if types.get(kind):
                    queue.append(types[kind].pop(0))
        queues.append(queue)
    ranking: list[Pair] = []
    depth = 0
    while len(ranking) < len(pairs):
        ranking.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return ranking


def apply_limit(pairs: Sequence[Pair], limit: int | None, order: str | None) -> list[Pair]:
    """The pairs ``--limit`` keeps, in the given (stable) order of ``pairs``.

    ``order`` None means the default (``spread``). Without a limit every pair is kept.
    """
    if not limit:
        return list(pairs)
    order = order or DEFAULT_LIMIT_ORDER
    if order not in LIMIT_ORDERS:
        raise InputError(f"limit order must be spread or first, got {order!r}")
    if order == "first":
        return list(pairs[:limit])
    positions = list(range(len(pairs)))
    keyed = [(pairs[i][0], pairs[i][1], i) for i in positions]
    kept = {i for _, _, i in spread_ranking(keyed)[:limit]}
    return [pairs[i] for i in positions if i in kept]


def folder_limit_order(stored: dict[str, Any]) -> LimitOrder:
    """The order a run folder was filled in, from its config.json payload."""
    order = stored.get("selection", {}).get("limit_order")
    return order if order in LIMIT_ORDERS else FOLDER_ORDER_BEFORE_OPTION  # type: ignore[return-value]


def resolve_limit_order(given: str | None, stored: dict[str, Any] | None, run_path: object) -> LimitOrder:
    """The order this call uses: the folder's own when resuming, else the given one or the default.

    A given order that differs from the folder's is refused: the folder's records would mix two
    selections, and "--limit N" would no longer say which questions it holds.
    """
    if stored is None:
        return given or DEFAULT_LIMIT_ORDER  # type: ignore[return-value]
    folder = folder_limit_order(stored)
    if given is not None and given != folder:
        from karma.run.rundir import RunMismatchError

        raise RunMismatchError(
            f"{run_path} was filled with --limit-order {folder}; resume it with --limit-order {folder} "
            f"(or without --limit-order), or use a new --out for --limit-order {given}"
        )
    return folder


__all__ = [
    "DEFAULT_LIMIT_ORDER",
    "LIMIT_ORDERS",
    "LimitOrder",
    "apply_limit",
    "folder_limit_order",
    "resolve_limit_order",
    "spread_ranking",
]
