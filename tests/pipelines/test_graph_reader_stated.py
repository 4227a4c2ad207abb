"""How the graph reader finds the change a question states and reads its facts, on hand-made graphs
with the real embedding model: category names in the clause (a shift's order, a state), a change
the question shows beyond the graph's own threshold (a counterfactual supposes another), and the
stated change's fact read leniently before a fact about another change decides."""

from __future__ import annotations

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.core.records import Question
from pipelines.graph_reader import GraphReader
from retrieval.base import Fact

ACTION = {
    "visual:action:*->singing": "action shifts to singing",
    "visual:action:*->walking": "action shifts to walking",
    "visual:action:singing->walking": "action shifts from singing to walking",
    "visual:action:walking->singing": "action shifts from walking to singing",
    "visual:action:walking->sitting": "action shifts from walking to sitting",
    "visual:action:is:walking": "action is walking",
}
NUMERIC = {
    "visual:motion:up": "motion increases",
    "visual:motion:down": "motion decreases",
    "visual:brightness:up": "brightness increases",
    "visual:brightness:down": "brightness decreases",
}
MUSIC = {
    "music:loudness:up": "loudness increases",
    "music:loudness:down": "loudness decreases",
    "music:tempo:up": "tempo increases",
    "music:tempo:down": "tempo decreases",
    "music:key:changed": "key changes",
    "music:mode:is:major": "mode is major",
    "music:mode:is:minor": "mode is minor",
    "music:mode:minor_to_major": "mode shifts from minor to major",
    "music:mode:major_to_minor": "mode shifts from major to minor",
    "music:valence:up": "musical valence (positivity) increases",
    "music:arousal:up": "musical arousal (energy) increases",
}


def _edge(source: str, target: str) -> CkgEdge:
    return CkgEdge(
        id=f"{source}->{target}|causes",
        source=source,
        target=target,
        relation="causes",
        support=20,
        confidence=0.6,
        lift=2.0,
        weight=0.6,
    )


def _node(node_id: str, title: str, kind: str) -> CkgNode:
    """A node with a description as the builder writes one (the reader embeds both)."""
    what = "Visual change" if kind == "visual_change" else "Musical change"
    return CkgNode(
        id=node_id, title=title, kind=kind, description=f"{what}: {title} from one scene to the next."
    )


def _fact(edge: CkgEdge) -> Fact:
    return Fact(id=edge.id, text="", score=1.0, source=edge.source, target=edge.target)


def _reader(
    edges: list[CkgEdge],
    thresholds: dict[str, float] | None = None,
    aliases: dict[str, dict[str, float]] | None = None,
) -> GraphReader:
    """``aliases``: learned phrases as the builder stores them (``graph.ckg.aliases``)."""
    nodes = {i: _node(i, t, "visual_change") for i, t in (ACTION | NUMERIC).items()}
    nodes |= {i: _node(i, t, "music_change") for i, t in MUSIC.items()}
    config: dict[str, object] = {"thresholds": thresholds} if thresholds else {}
    if aliases:
        config["event_aliases"] = aliases
    return GraphReader(CausalGraph(nodes=nodes, edges={e.id: e for e in edges}, build_config=config))


def _counterfactual(text: str, options: dict[str, str] | None = None) -> Question:
    return Question(
        question=text,
        options=options or {"a": "louder", "b": "quieter", "c": "faster", "d": "slower"},
        answer="a",
        type="counterfactual",
    )


@pytest.fixture(scope="module")
def actions() -> tuple[GraphReader, list[Fact]]:
    # The corpus's phrase "walking" names the shift it co-occurred with most (towards singing, in
    # a world where walking performers often start to sing): a learned phrase alone, or the
    # embedding, hardly tells a shift's order or a state from a shift.
    edges = [_edge(source, "music:tempo:down") for source in ACTION]
    aliases = {"walking": {"visual:action:walking->singing": 0.8, "visual:action:walking->sitting": 0.7}}
    return _reader(edges, aliases=aliases), [_fact(e) for e in edges]


def test_a_shift_is_read_in_the_order_the_clause_names_its_categories(actions) -> None:
    reader, facts = actions
    question = _counterfactual(
        "The performer keeps singing. Had it gone differently, so that singing gives way to walking, "
        "what would the music have done?"
    )
    stated = reader.stated_events(question, facts, cause_side=False)
    assert stated and stated <= {"visual:action:singing->walking", "visual:action:*->walking"}


def test_a_state_clause_is_not_read_as_a_shift_to_a_category_it_does_not_name(actions) -> None:
    reader, facts = actions
    question = _counterfactual(
        "The performer is sitting. Suppose instead that someone on screen is walking. "
        "How would the music most likely have changed?"
    )
    stated = reader.stated_events(question, facts, cause_side=False)
    assert stated and "visual:action:walking->sitting" not in stated
    assert "visual:action:walking->singing" not in stated


def test_a_change_shown_beyond_the_graphs_threshold_is_not_the_supposed_one() -> None:
    edges = [
        _edge("visual:motion:down", "music:loudness:down"),
        _edge("visual:motion:up", "music:loudness:up"),
    ]
    facts = [_fact(e) for e in edges]
    text = "Picture the cut again: the camera work steadies, as motion went {}. Imagine the camera work sharply livens up. Which musical change would follow?"
    # The corpus's answers used "the camera work" mostly when motion fell: the phrase leans that way.
    reader = _reader(
        edges, thresholds={"motion": 0.77}, aliases={"the camera work": {"visual:motion:down": 0.5}}
    )
    assert reader.stated_events(_counterfactual(text.format("1.8 → 0.1")), facts, False) == {
        "visual:motion:up"
    }
    # The seen changes by the graph's threshold: a step below it is no event and rules nothing out.
    assert reader._seen_changes(text.format("1.8 → 0.1")) == {"visual:motion:down"}
    assert reader._seen_changes(text.format("1.8 → 1.5")) == set()
    assert _reader(edges)._seen_changes(text.format("1.8 → 0.1")) == set()  # no thresholds: none


def test_the_stated_changes_fact_read_leniently_before_a_fact_about_another_change() -> None:
    # The supposed change (brightness up) makes the mode major; a fact about motion, another
    # change, makes the music louder. "The tune stays in a major tonality" is closer to valence and
    # arousal than to any mode event, so a strict reading (the fact's variable among the option's
    # two closest) passes over the stated fact, and the motion fact would decide.
    stated = _edge("visual:brightness:up", "music:mode:is:major")
    other = _edge("visual:motion:up", "music:loudness:up")
    reader = _reader([stated, other])
    facts = [_fact(other), _fact(stated)]
    options = {
        "a": "the tune stays in a major tonality",
        "b": "the mix gets a little louder",
        "c": "the mix gets quieter",
        "d": "a slower beat",
    }
    question = _counterfactual(
        "The shot gets darker. What if the image becomes brighter instead? Which change in the "
        "soundtrack would that bring?",
        options,
    )
    assert reader.stated_events(question, facts, cause_side=False) == {"visual:brightness:up"}
    strict = list(
        reader._readings(*reader._options(options), reader._events(*reader._options(options)), [facts[1]])
    )
    assert strict == []  # the strict reading of the stated fact speaks of no option
    answer = reader.answer(options, facts, question)
    assert answer.letters == ["a"] and answer.fact_id == stated.id
    assert reader.answer(options, facts).letters == ["b"]  # without the question: the motion fact
    assert reader.links(options, facts, question) == {stated.id: "a"}
