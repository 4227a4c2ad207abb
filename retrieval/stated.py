"""The changes a question states in words, read in the graph's own vocabulary.

Questions name the change they are about ("contrast went 29.7 → 32.8", "had the motion instead gone
up", "the performer goes from jumping to running"), and that change is the question's own variable:
retrieval ranks the edges at it above edges that merely start at something else seen on screen.
``retrieval_text`` already reads numeric changes as ``went up`` / ``gone down``; here the variable's
name is looked up among the graph's node titles (``<name> increases`` / ``<name> decreases``, as the
builder writes them), so a world with other variable spellings is read with its own names. Shifts
between categories (``from jumping to running``) map to the specific shift node and to the shift
aggregated by target (``*->running``) when the graph holds them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from retrieval.query import retrieval_text

_DIRECTIONS = {"up": " increases", "down": " decreases"}


class StatedEvents:
    """Finds graph events stated in question text (built once per graph)."""

    def __init__(self, node_titles: dict[str, str]) -> None:
        numeric: dict[str, dict[str, str]] = {}
        shifts: list[tuple[str, str, str]] = []
        for node_id, title in sorted(node_titles.items()):
            parts = node_id.split(":", 2)
            if len(parts) != 3:
                continue
            value = parts[2]
            suffix = _DIRECTIONS.get(value)
            if suffix and title.lower().endswith(suffix):
                name = title[: -len(suffix)].strip().lower()
                numeric.setdefault(name, {})[value] = node_id
            elif "->" in value:
                source, _, target = value.partition("->")
                shifts.append((source, target, node_id))
        # Longest names first, so "overall visual intensity" wins over "intensity".
        names = sorted(numeric, key=lambda n: (-len(n), n))
        self._numeric = numeric
        self._pattern = (
            re.compile(
                r"\b("
                + "|".join(re.escape(n) for n in names)
                + r")\b[^.?!;:]{0,20}?\b(?:went|gone|goes|go)\s+(up|down)\b"
            )
            if names
            else None
        )
        self._shifts = shifts

    def __call__(self, text: str | None) -> list[str]:
        """The events ``text`` states, sorted."""
        if not text:
            return []
        return list(self._find(text))

    @lru_cache(maxsize=65_536)  # noqa: B019 (one instance per graph, kept as long as its retriever)
    def _find(self, text: str) -> tuple[str, ...]:
        said = retrieval_text(text).lower()
        found: set[str] = set()
        if self._pattern is not None:
            for match in self._pattern.finditer(said):
                node = self._numeric[match.group(1)].get(match.group(2))
                if node:
                    found.add(node)
        for source, target, node_id in self._shifts:
            if (source == "*" and re.search(rf"\bfrom [\w ]+? to {re.escape(target)}\b", said)) or (
                source != "*" and f"from {source} to {target}" in said
            ):
                found.add(node_id)
        return tuple(sorted(found))
