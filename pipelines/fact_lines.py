"""The graph block's fact lines as a person reads them: what ``karma ask`` and ``karma retrieve`` list.

The prompt shows twins (a ``causes`` edge and its ``text_relation`` twin: the same cause and effect)
as one line (``retrieval.serialize.fact_block``). Listing the retrieved facts one by one would show a
person six facts where the model saw three lines, so the commands list the prompt's own lines,
taken from the block text the model received, each with the relations and edge ids it stands for.

``READABLE_LEGEND`` says in words what the prompt's one-line legend abbreviates. It is printed for
people only: the prompt's legend (``retrieval.serialize.LEGEND``) is left as it is, so the prompt
hashes of saved runs stay valid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from retrieval.base import Fact

READABLE_LEGEND = (
    "A -> B: when A happens, B follows more often than usual (a causal edge of the graph); "
    "A moves with B: they change together, not shown to be causal; "
    "(P% xL): B followed A in P% of the cuts that showed A, L times as often as B happens anyway; "
    "[option x: ...]: the answer option the line speaks of"
)
"""The prompt legend's abbreviations in words (display only; see the module docstring)."""

_NUMBERED = re.compile(r"^(\d+)\. (.*)$")
_LINK = re.compile(r" \[option ([a-d]): (.*)\]$")


class FactLine(BaseModel):
    """One fact line of the prompt and the retrieved facts it stands for."""

    number: int
    """The line's number in the prompt (1, 2, ...)."""
    text: str
    """The line as the prompt has it, without its number (the statistics included)."""
    link: str | None = None
    """The option letter the line names (``--fact-links options``), else None."""
    facts: list[Fact] = Field(default_factory=list)
    """The facts merged into the line, best ranked first (two for a causes/text_relation twin pair)."""

    @property
    def relations(self) -> list[str]:
        """The relations of the merged facts, best ranked first, each once."""
        from retrieval.serialize import relation_of

        return list(dict.fromkeys(relation_of(fact) for fact in self.facts))

    @property
    def score(self) -> float:
        """The best retrieval score among the merged facts."""
        return max((fact.score for fact in self.facts), default=0.0)

    @property
    def prompt_line(self) -> str:
        """The line exactly as the prompt holds it."""
        return f"{self.number}. {self.text}"


def twin_groups(facts: Sequence[Fact]) -> list[list[Fact]]:
    """Facts grouped as the block merges them (``retrieval.serialize.twin_key``), in rank order of
    each group's best fact."""
    from retrieval.serialize import twin_key

    groups: dict[tuple[str, ...], list[Fact]] = {}
    for fact in facts:
        groups.setdefault(twin_key(fact), []).append(fact)
    return list(groups.values())


def numbered_lines(block: str | Sequence[str]) -> list[str]:
    """The numbered fact lines (``1. ...``) of a graph block or of a block's lines (legend left out)."""
    lines = block.splitlines() if isinstance(block, str) else list(block)
    return [line for line in lines if _NUMBERED.match(line)]


def fact_lines(block: str | Sequence[str], shown: Sequence[Fact]) -> list[FactLine]:
    """The prompt's fact lines, each with the shown facts it stands for.

    ``block`` is the graph block the prompt holds (or ``FactBlock.lines``); ``shown`` the facts it
    shows (``PreparedPrompt.facts``: every twin of every line, in rank order). The block shows the
    twin groups of ``shown`` one line each, in the same order; a block that does not (a table-style
    block, a hand-made one) pairs its lines with single facts instead, so nothing is left unlisted.
    """
    lines = numbered_lines(block)
    groups = twin_groups(shown)
    if len(groups) != len(lines):
        groups = [[fact] for fact in shown] if len(shown) == len(lines) else [[] for _ in lines]
    out = []
    for line, group in zip(lines, groups, strict=True):
        number, text = _NUMBERED.match(line).groups()  # type: ignore[union-attr]
        link = _LINK.search(text)
        out.append(FactLine(number=int(number), text=text, link=link.group(1) if link else None, facts=group))
    return out


def linked_line_count(block: str | Sequence[str]) -> int:
    """How many fact lines of a block name an option (``[option x: ...]``, ``--fact-links options``)."""
    return sum(1 for line in numbered_lines(block) if _LINK.search(line))


def describe(line: FactLine) -> str:
    """``1. <the prompt line>  (causes + text_relation, score 0.83)``: what ``karma ask`` prints."""
    relations = " + ".join(line.relations) or "?"
    return f"{line.prompt_line}  ({relations}, score {line.score:.3g})"


__all__ = [
    "READABLE_LEGEND",
    "FactLine",
    "describe",
    "fact_lines",
    "linked_line_count",
    "numbered_lines",
    "twin_groups",
]
