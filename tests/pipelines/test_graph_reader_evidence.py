"""The graph reader's use of the graph's counts and of the question, on hand-made graphs with the real
embedding model: a fact whose cause leaves its effect at its base rate (lift at most 1) decides
nothing, and with the question given the fact links agree with the reader's answer."""

from __future__ import annotations

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.core.records import Question
from pipelines.graph_reader import GraphReader
from retrieval.base import Fact

NODES = {
    "visual:brightness:up": ("brightness increases", "visual_change"),
    "visual:brightness:down": ("brightness decreases", "visual_change"),
    "visual:motion:down": ("motion decreases", "visual_change"),
    "music:loudness:up": ("loudness increases", "music_change"),
    "music:loudness:down": ("loudness decreases", "music_change"),
    "music:tempo:down": ("tempo decreases", "music_change"),
    "music:tempo:up": ("tempo increases", "music_change"),
    "music:mode:is:minor": ("mode is minor", "music_change"),
}
OPTIONS = {"a": "loudness decreases", "b": "loudness increases", "c": "tempo increases", "d": "mode is minor"}


def _edge(source: str, target: str, lift: float, support: int = 20) -> CkgEdge:
    return CkgEdge(
        id=f"{source}->{target}|text_relation",
        source=source,
        target=target,
        relation="text_relation",
        support=support,
        confidence=0.5,
        lift=lift,
        weight=0.5,
    )


def _reader(*edges: CkgEdge) -> GraphReader:
    nodes = {i: CkgNode(id=i, title=title, kind=kind) for i, (title, kind) in NODES.items()}
    return GraphReader(CausalGraph(nodes=nodes, edges={e.id: e for e in edges}))


def _fact(edge: CkgEdge) -> Fact:
    return Fact(id=edge.id, text="", score=1.0, source=edge.source, target=edge.target)


@pytest.fixture(scope="module")
def base_rate() -> tuple[GraphReader, list[Fact]]:
    """Brightness rising: tempo rose after it no more often than anywhere (lift 0.92), the mode
    turned minor 2.5 times as often; retrieval ranks the tempo fact first."""
    at_base_rate = _edge("visual:brightness:up", "music:tempo:up", lift=0.92)
    supported = _edge("visual:brightness:up", "music:mode:is:minor", lift=2.5)
    return _reader(at_base_rate, supported), [_fact(at_base_rate), _fact(supported)]


def test_a_fact_at_its_effects_base_rate_decides_nothing(base_rate) -> None:
    reader, facts = base_rate
    answer = reader.answer(OPTIONS, facts)
    assert answer.letters == ["d"] and answer.fact_id == facts[1].id
    # The same facts without counts in the graph (no edge): the first decides, as before.
    assert _reader().answer(OPTIONS, facts).letters == ["c"]


def test_an_edge_without_counts_is_read() -> None:
    # support 0: the graph never counted the pair (a concept link, an imported edge), so lift says nothing.
    uncounted = _edge("visual:brightness:up", "music:tempo:up", lift=0.0, support=0)
    assert _reader(uncounted).answer(OPTIONS, [_fact(uncounted)]).letters == ["c"]


def test_links_skip_a_fact_at_its_effects_base_rate(base_rate) -> None:
    reader, facts = base_rate
    assert reader.links(OPTIONS, facts) == {facts[1].id: "d"}


def test_with_the_question_the_links_agree_with_the_readers_answer() -> None:
    # A counterfactual: retrieval ranks the fact about the change that happened (brightness fell)
    # first; the reader answers with the supposed change's fact. Without the question both facts are
    # linked, to two different options; with it only the fact that agrees with the answer.
    happened = _edge("visual:brightness:down", "music:loudness:down", lift=2.0)
    supposed = _edge("visual:brightness:up", "music:loudness:up", lift=2.0)
    reader = _reader(happened, supposed)
    facts = [_fact(happened), _fact(supposed)]
    question = Question(
        question="Across the cut, brightness went 0.6 → 0.4. Suppose brightness had instead gone "
        "0.6 → 0.8. Which change would the soundtrack most likely have shown?",
        options=OPTIONS,
        answer="b",
        type="counterfactual",
    )
    assert reader.links(OPTIONS, facts) == {facts[0].id: "a", facts[1].id: "b"}
    assert reader.answer(OPTIONS, facts, question).letters == ["b"]
    assert reader.links(OPTIONS, facts, question) == {facts[1].id: "b"}


def test_of_the_facts_about_the_stated_change_the_likeliest_effect_is_read_first() -> None:
    # Both facts start from the change the question states (brightness rose); retrieval ranks the
    # weaker one first (tempo rose after it in 30 % of cases), the mode turned minor in 90 %.
    weaker = _edge("visual:brightness:up", "music:tempo:up", lift=1.2).model_copy(update={"confidence": 0.3})
    likelier = _edge("visual:brightness:up", "music:mode:is:minor", lift=2.5).model_copy(
        update={"confidence": 0.9}
    )
    reader = _reader(weaker, likelier)
    facts = [_fact(weaker), _fact(likelier)]
    question = Question(
        question="Across the cut, brightness went 0.4 → 0.6. Which change in the music does this explain?",
        options=OPTIONS,
        answer="d",
        type="evidential",
    )
    assert reader.answer(OPTIONS, facts).letters == ["c"]  # without the question: retrieval order
    answer = reader.answer(OPTIONS, facts, question)
    assert answer.letters == ["d"] and answer.fact_id == facts[1].id
