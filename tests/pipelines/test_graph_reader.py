"""The graph reader on a hand-made graph with the real embedding model: options mapped to events by
embedding (paraphrases included), the first fact about an option decides, and an unrecognised option
set is said, not tied."""

from __future__ import annotations

import pytest

from graph.model import CausalGraph, CkgNode
from karma.core.records import Question
from pipelines.graph_reader import NO_FACT, NO_OPTION, GraphReader
from retrieval.base import Fact

NODES = {
    "visual:brightness:up": ("brightness increases", "visual_change"),
    "visual:brightness:down": ("brightness decreases", "visual_change"),
    "visual:motion:down": ("motion decreases", "visual_change"),
    "music:loudness:up": ("loudness increases", "music_change"),
    "music:loudness:down": ("loudness decreases", "music_change"),
    "music:tempo:down": ("tempo decreases", "music_change"),
    "music:mode:is:minor": ("mode is minor", "music_change"),
    "concept:loudness": ("loudness", "concept"),
}


@pytest.fixture(scope="module")
def reader() -> GraphReader:
    nodes = {i: CkgNode(id=i, title=title, kind=kind) for i, (title, kind) in NODES.items()}
    return GraphReader(CausalGraph(nodes=nodes, edges={}))


def _fact(source: str, target: str) -> Fact:
    return Fact(id=f"{source}->{target}|causes", text="", score=1.0, source=source, target=target)


def test_options_map_to_events_by_embedding_not_by_phrase(reader) -> None:
    assert reader.event_of("loudness increases") == "music:loudness:up"
    assert reader.event_of("the harmony sits in a minor key") == "music:mode:is:minor"
    assert reader.event_of("a dog barks at the postman") is None  # nothing in the graph is close


def test_the_first_fact_about_an_option_decides(reader) -> None:
    options = {
        "a": "loudness decreases",
        "b": "loudness increases",
        "c": "tempo decreases",
        "d": "mode is minor",
    }
    facts = [
        _fact("visual:brightness:up", "music:loudness:up"),
        _fact("visual:motion:down", "music:tempo:down"),
    ]
    answer = reader.answer(options, facts)
    assert answer.letters == ["b"] and answer.fact_id == facts[0].id
    assert reader.answer(options, facts[::-1]).letters == ["c"]


def test_a_cause_question_is_answered_by_the_fact_whose_cause_is_an_option(reader) -> None:
    options = {"a": "brightness decreases", "b": "brightness increases", "c": "motion decreases", "d": "x"}
    answer = reader.answer(options, [_fact("visual:motion:down", "music:tempo:down")])
    assert answer.letters == ["c"]


def test_no_option_recognised_and_no_fact_are_said(reader) -> None:
    odd = {"a": "a dog barks at the postman", "b": "the weather is cold", "c": "", "d": "pizza"}
    said = reader.answer(odd, [_fact("visual:brightness:up", "music:loudness:up")])
    assert said.letters == [] and said.reason == NO_OPTION
    options = {
        "a": "loudness decreases",
        "b": "loudness increases",
        "c": "tempo decreases",
        "d": "mode is minor",
    }
    none = reader.answer(options, [_fact("visual:brightness:up", "music:pitch:up")])
    assert none.letters == [] and none.reason == NO_FACT


def test_a_fact_about_a_variable_no_option_names_is_passed_over() -> None:
    # No option is about loudness: the loudness fact must not pick the option that merely sits
    # closest to "loudness increases" ("agitated"); the key fact after it decides.
    more = {
        **NODES,
        "music:valence:up": ("valence increases", "music_change"),
        "music:valence:down": ("valence decreases", "music_change"),
        "music:arousal:up": ("arousal increases", "music_change"),
        "music:arousal:down": ("arousal decreases", "music_change"),
        "music:tempo:up": ("tempo increases", "music_change"),
        "music:mode:is:major": ("mode is major", "music_change"),
    }
    nodes = {i: CkgNode(id=i, title=title, kind=kind) for i, (title, kind) in more.items()}
    reader = GraphReader(CausalGraph(nodes=nodes, edges={}))
    options = {
        "a": "the music gets more agitated",
        "b": "the music turns gloomier",
        "c": "the harmony sits in a minor key",
        "d": "the harmony sits in a major key",
    }
    facts = [
        _fact("visual:brightness:up", "music:loudness:up"),
        _fact("visual:brightness:up", "music:mode:is:minor"),
    ]
    answer = reader.answer(options, facts)
    assert answer.letters == ["c"] and answer.fact_id == facts[1].id


def _learned_reader(aliases: dict) -> GraphReader:
    nodes = {i: CkgNode(id=i, title=title, kind=kind) for i, (title, kind) in NODES.items()}
    return GraphReader(CausalGraph(nodes=nodes, edges={}, build_config={"event_aliases": aliases}))


def test_an_option_worded_afresh_reads_as_the_event_its_learned_phrases_name() -> None:
    # "zorp" means nothing to the embedding model; the corpus taught that a right answer with it is a
    # tempo drop. A text never seen whole ("the light goes zorp right after the cut") is read through it.
    reader = _learned_reader({"zorp": {"music:tempo:down": 0.7}, "goes zorp": {"music:tempo:down": 0.6}})
    plain = _learned_reader({})
    assert reader.event_of("the light goes zorp right after the cut") == "music:tempo:down"
    assert plain.event_of("the light goes zorp right after the cut") != "music:tempo:down"


def test_aliases_stored_as_lists_by_older_graphs_still_read() -> None:
    reader = _learned_reader({"the beat goes zorp": ["music:tempo:down", "music:loudness:up"]})
    assert reader.event_of("The beat  goes zorp") == "music:tempo:down"


def _question(text: str, kind: str) -> Question:
    options = {
        "a": "loudness decreases",
        "b": "loudness increases",
        "c": "tempo decreases",
        "d": "mode is minor",
    }
    return Question(question=text, options=options, answer="b", type=kind)


def test_a_counterfactual_reads_the_supposed_change_not_the_one_that_happened(reader) -> None:
    # Retrieval ranks the actual change's fact first (brightness fell); the question supposes it rose.
    question = _question(
        "Across the cut, brightness went 0.6 → 0.4. Suppose brightness had instead gone 0.6 → 0.8. "
        "Which change would the soundtrack most likely have shown?",
        "counterfactual",
    )
    facts = [
        _fact("visual:brightness:down", "music:loudness:down"),
        _fact("visual:brightness:up", "music:loudness:up"),
    ]
    assert reader.answer(question.options, facts).letters == ["a"]  # without the question: the actual fact
    answer = reader.answer(question.options, facts, question)
    assert answer.letters == ["b"] and answer.fact_id == facts[1].id


def test_a_supposed_change_worded_afresh_is_read_by_its_learned_phrase() -> None:
    # "zorps" means nothing to the embedding model; the corpus taught it names brightness rising.
    reader = _learned_reader({"zorps": {"visual:brightness:up": 0.8}})
    question = _question(
        "The picture dims. What if the picture zorps instead? What would the music do?", "counterfactual"
    )
    facts = [
        _fact("visual:brightness:down", "music:loudness:down"),
        _fact("visual:brightness:up", "music:loudness:up"),
    ]
    assert reader.stated_events(question, facts, cause_side=False) == {"visual:brightness:up"}
    assert reader.answer(question.options, facts, question).letters == ["b"]


def test_an_evidential_question_reads_first_the_facts_about_the_change_it_states(reader) -> None:
    question = _question(
        "Across the cut, brightness went 0.4 → 0.6. Which change in the music does this explain?",
        "evidential",
    )
    facts = [
        _fact("visual:motion:down", "music:tempo:down"),
        _fact("visual:brightness:up", "music:loudness:up"),
    ]
    assert reader.answer(question.options, facts).letters == ["c"]
    assert reader.answer(question.options, facts, question).letters == ["b"]
