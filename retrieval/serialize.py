"""Retrieved facts as prompt text under a token budget: a compact numbered block, or a GraphRAG table.

``lines`` (the prompt's default): one line per fact, ``<i>. <cause> -> <effect> (n=120 P=.62 lift=1.8)``
with a short local index ``i`` (1, 2, ...) instead of the CKG edge id: the ids stay in the run log
(``samples.jsonl`` records ``fact_ids``), the prompt does not pay ~25 tokens a fact to repeat the
sentence as an id. Twins, facts about the same cause and effect with the same statistics (a
``causes`` edge and its ``text_relation`` twin), become one line; both ids count as shown. The
statistics' short form is documented in ``retrieval.facts.stats_text``.

The budget is counted with ``count_tokens``: pass the answering model's tokenizer (a backend's
``count_tokens``) to measure it in the model's tokens; the default is a tokenizer-free, deliberately
high estimate. Facts are added best first until the next would exceed the budget; a fact is never
cut in half.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, NamedTuple

from retrieval.base import Fact, RetrievalResult

TABLE_HEADER = "-----Relationships-----"
TABLE_COLUMNS = ("id", "source", "relation", "target", "support", "confidence", "lift", "precedence")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free, deliberately high estimate: one token per three characters (ids and numbers
    split into many tokens), at least one per word."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 3), len(text.split()))


def _line(fact: Fact, index: int) -> str:
    return f"{index}. {fact.text}"


def twin_key(fact: Fact) -> tuple[object, ...]:
    """Facts with equal keys say the same thing: same cause, same effect, same statistics."""
    stats = fact.stats
    return (
        fact.source,
        fact.target,
        stats.get("support", 0.0),
        stats.get("confidence", 0.0),
        stats.get("lift", 0.0),
    )


class FactBlock(NamedTuple):
    """The serialized facts and what they show."""

    lines: list[str]
    """Prompt lines (after the table style's two header lines)."""
    shown: list[Fact]
    """Every fact the lines show, in rank order (a merged twin included)."""
    tokens: int
    """Tokens of the lines (each with its newline) as ``count_tokens`` counts them."""
    facts_per_line: list[int]
    """How many facts each fact line stands for (2 for a merged twin pair)."""


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


def fact_block(
    result: RetrievalResult | list[Fact],
    budget_tokens: int | None = 512,
    style: Literal["lines", "table"] = "lines",
    count_tokens: Callable[[str], int] | None = None,
) -> FactBlock:
    """The facts as prompt lines, best first, within ``budget_tokens`` (None: no limit).

    ``lines``: the compact numbered block (module docstring). ``table``: GraphRAG's local-search
    context form, a ``-----Relationships-----`` header, a ``|``-separated column row and one row per
    fact (ids included: that form is for reading the graph, not for the prompt budget).
    """
    count = count_tokens or estimate_tokens
    facts = result.facts if isinstance(result, RetrievalResult) else result
    if style not in ("lines", "table"):
        raise ValueError(f"style must be 'lines' or 'table', got {style!r}")
    if not facts:
        return FactBlock([], [], 0, [])
    header: list[str] = [TABLE_HEADER, "|".join(TABLE_COLUMNS)] if style == "table" else []
    used = sum(count(line) + 1 for line in header)
    lines: list[str] = []
    shown: list[Fact] = []
    per_line: list[int] = []
    line_of: dict[tuple[object, ...], int] = {}
    for fact in facts:
        key = twin_key(fact)
        if style == "lines" and key in line_of:  # a twin of a fact already shown: no new line
            shown.append(fact)
            per_line[line_of[key]] += 1
            continue
        line = _line(fact, len(lines) + 1) if style == "lines" else _row(fact)
        cost = count(line) + 1  # the newline
        if budget_tokens is not None and used + cost > budget_tokens:
            break
        line_of[key] = len(lines)
        lines.append(line)
        shown.append(fact)
        per_line.append(1)
        used += cost
    if not lines:
        return FactBlock([], [], 0, [])
    return FactBlock(header + lines, shown, used, per_line)


def serialize_facts(
    result: RetrievalResult | list[Fact],
    budget_tokens: int | None = 512,
    style: Literal["lines", "table"] = "lines",
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> str:
    """``fact_block``'s lines as one text; an empty string when no fact fits (the prompt template
    decides how to say so)."""
    return "\n".join(fact_block(result, budget_tokens, style, count_tokens).lines)
