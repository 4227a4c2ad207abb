"""Prompt text from retrieved facts: ids and statistics present, token budget respected, table form."""

from __future__ import annotations

import pytest

from retrieval import RetrievalQuery, estimate_tokens, get_retriever, serialize_facts


@pytest.fixture
def result(small_graph):
    return get_retriever("keyword", small_graph).retrieve(RetrievalQuery(question="brightness motion"), k=10)


def test_lines_carry_each_fact_id_and_its_statistics(result) -> None:
    text = serialize_facts(result, budget_tokens=None)
    lines = text.splitlines()
    assert len(lines) == len(result.facts)
    for line, fact in zip(lines, result.facts, strict=True):
        assert line.startswith(f"[{fact.id}] ")
        if fact.stats["support"]:
            assert f"support {int(fact.stats['support'])}" in line and "lift" in line


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
