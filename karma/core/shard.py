"""Shards: split a run's work units (videos) into N disjoint parts, and check that parts add up.

``--shard I/N`` (I counted from 0, ``0 <= I < N``) keeps the work units whose position in the sorted
list of all units is congruent to I modulo N. Units are whole videos for both ``karma eval`` and
``karma extract``: a video's questions share clusters, folds and clips, so they never straddle shards.
The assignment depends only on the sorted unit list, so every machine computes the same split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from pydantic import BaseModel, Field, model_validator

from karma.core.errors import InputError

T = TypeVar("T")

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardSpec(BaseModel):
    """One part of N."""

    index: int = Field(ge=0)
    """Which part, counted from 0."""
    count: int = Field(ge=1)
    """How many parts in all."""

    @model_validator(mode="after")
    def _check(self) -> ShardSpec:
        if self.index >= self.count:
            raise ValueError(f"shard index {self.index} must be below the shard count {self.count}")
        return self

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``"I/N"`` -> ShardSpec; anything else is an :class:`InputError` saying what is expected."""
        match = _SPEC.match(str(text))
        if not match:
            raise InputError(f"--shard must look like I/N (e.g. 0/4), got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or index >= count:
            raise InputError(f"--shard {text}: I must satisfy 0 <= I < N (shards are counted from 0)")
        return cls(index=index, count=count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def tag(self) -> str:
        """A file-name-safe form, ``shard-I-of-N``."""
        return f"shard-{self.index}-of-{self.count}"

    def units(self, all_units: Iterable[str]) -> list[str]:
        """The units of this shard, in sorted order."""
        ordered = sorted(set(all_units))
        return [u for position, u in enumerate(ordered) if position % self.count == self.index]

    def select(self, items: Sequence[T], unit_of, all_units: Iterable[str] | None = None) -> list[T]:
        """The items whose unit (``unit_of(item)``) belongs to this shard, order kept."""
        universe = all_units if all_units is not None else (unit_of(i) for i in items)
        mine = set(self.units(universe))
        return [item for item in items if unit_of(item) in mine]


def check_complete(specs: Sequence[tuple[ShardSpec, str]]) -> int:
    """Refuse a set of shards that is not exactly 0..N-1 of one N; return N.

    ``specs`` pairs each shard with where it came from (a folder), named in the errors.
    """
    if not specs:
        raise InputError("no shards to merge")
    counts = sorted({s.count for s, _ in specs})
    if len(counts) != 1:
        where = ", ".join(f"{src} ({s})" for s, src in specs)
        raise InputError(f"shards of different counts cannot be merged: {where}")
    count = counts[0]
    seen: dict[int, str] = {}
    for spec, source in specs:
        if spec.index in seen:
            raise InputError(f"shard {spec} is given twice: {seen[spec.index]} and {source}")
        seen[spec.index] = source
    missing = [f"{i}/{count}" for i in range(count) if i not in seen]
    if missing:
        raise InputError(f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} of {count}")
    return count
