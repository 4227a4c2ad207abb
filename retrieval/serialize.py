"""Retrieved facts as prompt text under a token budget: compact lines, or a GraphRAG-style table.

Every fact is printed with its stable id (the CKG edge id), so a run log that records the serialized
block, or just ``result.fact_ids``, says exactly what the model saw. Facts are added best first until
the next one would exceed the budget; a fact is never cut in half.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from retrieval.base import Fact, RetrievalResult

TABLE_HEADER = "-----Relationships-----"
TABLE_COLUMNS = ("id", "source", "relation", "target", "support", "confidence", "lift", "precedence")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free, deliberately high estimate: one token per three characters (ids and numbers
    split into many tokens), at least one per word."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 3), len(text.split()))


def _line(fact: Fact) -> str:
    return f"[{fact.id}] {fact.text}"


def _cell(value: str) -> str:
    return value.replace("|", "/").replace("\n", " ")


def _row(fact: Fact) -> str:
    source, _, rest = fact.id.partition("->")
    target, _, relation = rest.partition("|")
    stats = fact.stats
    cells = [
        fact.id,
        fact.source or source,
        relation,
        fact.target or target,
        str(int(stats.get("support", 0.0))),
        f"{stats.get('confidence', 0.0):.2f}",
        f"{stats.get('lift', 0.0):.2f}",
        f"{stats.get('precedence', 0.0):+.2f}",
    ]
    return "|".join(_cell(cell) for cell in cells)


def serialize_facts(
    result: RetrievalResult | list[Fact],
    budget_tokens: int | None = 512,
    style: Literal["lines", "table"] = "lines",
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> str:
    """The facts as prompt text, best first, within ``budget_tokens`` (None: no limit).

    ``lines``: one ``[<fact id>] <fact text>`` per fact. ``table``: GraphRAG's local-search context
    form, a ``-----Relationships-----`` header, a ``|``-separated column row and one row per fact.
    Returns an empty string when there is no fact (the prompt template decides how to say so).
    """
    facts = result.facts if isinstance(result, RetrievalResult) else result
    if style not in ("lines", "table"):
        raise ValueError(f"style must be 'lines' or 'table', got {style!r}")
    if not facts:
        return ""
    lines: list[str] = []
    if style == "table":
        lines = [TABLE_HEADER, "|".join(TABLE_COLUMNS)]
    used = sum(count_tokens(line) + 1 for line in lines)
    added = 0
    for fact in facts:
        line = _line(fact) if style == "lines" else _row(fact)
        cost = count_tokens(line) + 1  # the newline
        if budget_tokens is not None and used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
        added += 1
    if added == 0:
        return ""
    return "\n".join(lines)
