"""retrieval.query: what a question states before it asks (the graph reader reads it as the question's own change)."""

from __future__ import annotations


def test_stated_clause_is_what_a_question_says_before_it_asks() -> None:
    from retrieval.query import stated_clause

    assert (
        stated_clause("The picture gets brighter. Which change in the music follows?")
        == "The picture gets brighter."
    )
    assert (
        stated_clause("Brightness went 0.4 → 0.6. It is muted. What now?")
        == "Brightness went up. It is muted."
    )
    assert stated_clause("Which change follows?") is None
