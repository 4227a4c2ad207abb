"""Retrieved facts as prompt text under a token budget: a compact numbered block, or a GraphRAG table.

``lines`` (the prompt's default): a one-line legend (``LEGEND``), then one line per fact,
``<i>. <cause> -> <effect> (62% x1.8)``, with a short local index ``i`` (1, 2, ...) instead of the CKG
edge id: the ids stay in the run log (``samples.jsonl`` records ``fact_ids``), the prompt does not
pay ~25 tokens a fact to repeat the sentence as an id. The statistics' short form (``(62% x1.8)``:
the confidence in percent, the lift) is ``retrieval.facts.stats_text``; the legend explains it once
for the whole block, with what ``->`` (causes) and ``moves with`` (not shown causal) claim;
``relates to`` (a link read from the explanations) and ``is a`` (a concept link) read as plain words.

Twins, facts about the same cause and effect (a ``causes`` edge and its ``text_relation`` twin, the
same pair in any two relations, whatever their statistics), become one line: the line of the
strongest relation (``RELATION_STRENGTH``), at the place of the best ranked twin; every twin counts
as shown. The block is a function of the ranked facts alone (deterministic).

The budget is counted with ``count_tokens``: pass the answering model's tokenizer (a backend's
``count_tokens``) to measure it in the model's tokens; the default is a tokenizer-free, deliberately
high estimate. The legend and the lines are added best first until the next line would exceed the
budget; a fact is never cut in half.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Literal, NamedTuple

from karma.core.errors import InputError
from retrieval.base import Fact, RetrievalResult

TABLE_HEADER = "-----Relationships-----"
TABLE_COLUMNS = ("id", "source", "relation", "target", "support", "confidence", "lift", "precedence")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free, deliberately high estimate: one token per three characters (ids and numbers
    split into many tokens), at least one per word."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 3), len(text.split()))


def _line(fact: Fact, index: int, link: str | None = None) -> str:
    return f"{index}. {fact.text} [option {link}]" if link else f"{index}. {fact.text}"


LEGEND = (
    "-> causes, moves with: not shown causal; (P% xL): effect followed P% of the time, L times its usual rate"
)
"""The block's first line in the ``lines`` style: how to read every fact line, said once (30 tokens of
SmolLM2; ``relates to`` and ``is a`` read as plain words)."""
LINKS_LEGEND = "; [option x: ...]: the option that states this fact's event"
"""Added to the legend when fact lines name the option they speak of (``fact_block(links=...)``)."""

RELATION_STRENGTH: tuple[str, ...] = ("causes", "text_relation", "co_moves", "instance_of")
"""Strongest first (the order of hybrid retrieval's relation prior): which twin's line is shown."""


def relation_of(fact: Fact) -> str:
    """The relation named at the end of a CKG edge id (``<source>-><target>|<relation>``)."""
    return fact.id.rpartition("|")[2]


def _strength(fact: Fact) -> int:
    relation = relation_of(fact)
    return RELATION_STRENGTH.index(relation) if relation in RELATION_STRENGTH else len(RELATION_STRENGTH)


def twin_key(fact: Fact) -> tuple[str, ...]:
    """Facts with equal keys are twins: the same cause and the same effect, in any relation. A fact
    without both endpoints is its own key (never merged)."""
    if fact.source and fact.target:
        return ("pair", fact.source, fact.target)
    return ("id", fact.id)


class FactBlock(NamedTuple):
    """The serialized facts and what they show."""

    lines: list[str]
    """Prompt lines: the header (the ``lines`` style's legend, the table style's two header lines),
    then one line per fact."""
    shown: list[Fact]
    """Every fact the lines show, in rank order (merged twins included)."""
    tokens: int
    """Tokens of all the lines (each with its newline) as ``count_tokens`` counts them."""
    facts_per_line: list[int]
    """How many facts each fact line stands for (2 for a merged twin pair), header lines excluded."""


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
    links: Mapping[str, str] | None = None,
) -> FactBlock:
    """The facts as prompt lines, best first, within ``budget_tokens`` (None: no limit).

    ``links`` (``lines`` style): fact id -> the option the fact speaks of, as it is to be shown
    (``d: the footage gets more hectic``); the line ends in ``[option d: ...]`` and the legend says
    what that means. A merged twin line shows the link of its best ranked linked twin.

    ``lines``: the legend and the compact numbered block (module docstring). ``table``: GraphRAG's
    local-search context form, a ``-----Relationships-----`` header, a ``|``-separated column row and
    one row per fact (ids included: that form is for reading the graph, not for the prompt budget).
    """
    count = count_tokens or estimate_tokens
    facts = result.facts if isinstance(result, RetrievalResult) else result
    if style not in ("lines", "table"):
        raise InputError(f"style must be 'lines' or 'table', got {style!r}")
    if not facts:
        return FactBlock([], [], 0, [])
    if style == "table":
        groups = [[position] for position in range(len(facts))]
        header = [TABLE_HEADER, "|".join(TABLE_COLUMNS)]
    else:
        by_key: dict[tuple[str, ...], list[int]] = {}
        for position, fact in enumerate(facts):
            by_key.setdefault(twin_key(fact), []).append(position)
        groups = list(by_key.values())  # in the rank of each pair's best fact
        header = [LEGEND + LINKS_LEGEND] if links else [LEGEND]
    used = sum(count(line) + 1 for line in header)
    lines: list[str] = []
    shown: list[int] = []
    per_line: list[int] = []
    for group in groups:
        if style == "lines":
            strongest = min(group, key=lambda position: (_strength(facts[position]), position))
            linked = [links[facts[p].id] for p in group if facts[p].id in links] if links else []
            line = _line(facts[strongest], len(lines) + 1, linked[0] if linked else None)
        else:
            line = _row(facts[group[0]])
        cost = count(line) + 1  # the newline
        if budget_tokens is not None and used + cost > budget_tokens:
            break
        lines.append(line)
        shown.extend(group)
        per_line.append(len(group))
        used += cost
    if not lines:
        return FactBlock([], [], 0, [])
    return FactBlock(header + lines, [facts[position] for position in sorted(shown)], used, per_line)


def serialize_facts(
    result: RetrievalResult | list[Fact],
    budget_tokens: int | None = 512,
    style: Literal["lines", "table"] = "lines",
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> str:
    """``fact_block``'s lines as one text; an empty string when no fact fits (the prompt template
    decides how to say so)."""
    return "\n".join(fact_block(result, budget_tokens, style, count_tokens).lines)
