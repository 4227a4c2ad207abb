"""Prompt text from retrieved facts: compact numbered lines, twins merged, statistics present, token
budget respected (in any tokenizer), descriptions of imported edges shown, table form."""

from __future__ import annotations

import pytest

from retrieval import estimate_tokens, serialize_facts
from retrieval.base import Fact, RetrievalResult
from retrieval.serialize import fact_block


@pytest.fixture
def result(small_graph):
    """The graph's causal and co-movement edges as facts (karma's own fact lines), in id order."""
    from retrieval.facts import make_fact
    from retrieval.graph_view import GraphView

    view = GraphView.of(small_graph)
    edges = [small_graph.edges[i] for i in view.edge_ids if small_graph.edges[i].relation != "instance_of"]
    return RetrievalResult(retriever="test", facts=[make_fact(view, e, 1.0) for e in edges])


def test_lines_are_numbered_locally_and_carry_the_statistics_not_the_ids(result) -> None:
    text = serialize_facts(result, budget_tokens=None)
    block = fact_block(result, budget_tokens=None)
    lines = text.splitlines()
    assert len(block.shown) == len(result.facts)  # every fact shown, twins on one line
    assert len(lines) == len(block.facts_per_line) and sum(block.facts_per_line) == len(result.facts)
    for number, line in enumerate(lines, start=1):
        assert line.startswith(f"{number}. ")
    for fact in result.facts:
        assert fact.id not in text
        if fact.stats["support"]:
            assert f"n={int(fact.stats['support'])}" in fact.text and "lift=" in fact.text


def test_twins_with_equal_statistics_share_one_line() -> None:
    stats = {"support": 40.0, "confidence": 0.62, "lift": 1.8}
    causes = Fact(
        id="v:b:up->m:l:up|causes",
        text="brightness increases -> loudness increases (n=40 P=.62 lift=1.8)",
        score=2.0,
        source="v:b:up",
        target="m:l:up",
        stats=stats,
    )
    twin = causes.model_copy(
        update={
            "id": "v:b:up->m:l:up|text_relation",
            "text": "brightness increases relates to loudness increases (n=40 P=.62 lift=1.8)",
            "score": 1.0,
        }
    )
    other = causes.model_copy(
        update={
            "id": "v:m:up->m:t:up|causes",
            "source": "v:m:up",
            "target": "m:t:up",
            "text": "motion increases -> tempo increases (n=9)",
            "score": 0.5,
        }
    )
    block = fact_block([causes, twin, other], budget_tokens=None)
    assert block.lines == [f"1. {causes.text}", f"2. {other.text}"]
    assert [f.id for f in block.shown] == [causes.id, twin.id, other.id]
    assert block.facts_per_line == [2, 1]


def test_the_budget_is_counted_with_the_given_tokenizer(result) -> None:
    words = fact_block(result, budget_tokens=None, count_tokens=lambda text: len(text.split()))
    assert words.tokens == sum(len(line.split()) + 1 for line in words.lines)
    cut = fact_block(result, budget_tokens=words.tokens - 1, count_tokens=lambda text: len(text.split()))
    assert cut.lines == words.lines[:-1]


def test_a_graphrag_edge_shows_its_description(small_graph) -> None:
    from retrieval.facts import fact_line
    from retrieval.graph_view import GraphView

    view = GraphView.of(small_graph)
    edge = next(iter(small_graph.edges.values()))
    imported = edge.model_copy(
        update={
            "description": "Bright   scenes are scored\nloud.",
            "support": 0,
            "confidence": 0.0,
            "lift": 0.0,
        }
    )
    assert fact_line(view, imported).endswith(": Bright scenes are scored loud.")
    # karma's own mined edge keeps its statistics in the line and its generated description out of it
    mined = edge.model_copy(update={"description": "in 120 of 171 transitions ..."})
    assert "transitions" not in fact_line(view, mined) and "n=" in fact_line(view, mined)


def test_budget_cuts_whole_facts_in_rank_order(result) -> None:
    full = serialize_facts(result, budget_tokens=None).splitlines()
    budget = sum(estimate_tokens(line) + 1 for line in full[:3]) + 2
    cut = serialize_facts(result, budget_tokens=budget).splitlines()
    assert cut == full[:3]
    assert serialize_facts(result, budget_tokens=1) == ""


def test_table_style_is_graphrag_like(result) -> None:
    text = serialize_facts(result, budget_tokens=None, style="table")
    header, columns, *rows = text.splitlines()
    assert header == "-----Relationships-----"
    assert columns.split("|") == [
        "id",
        "source",
        "relation",
        "target",
        "support",
        "confidence",
        "lift",
        "precedence",
    ]
    assert len(rows) == len(result.facts)
    first = rows[0].split("|")
    assert len(first) == 8 and first[1] == result.facts[0].source and first[3] == result.facts[0].target


def test_empty_result_and_bad_style(result) -> None:
    assert serialize_facts([], budget_tokens=100) == ""
    with pytest.raises(ValueError, match="style"):
        serialize_facts(result, style="csv")  # type: ignore[arg-type]
