"""How the graph reader finds the change a question states and reads its facts, on hand-made graphs
with the real embedding model: category names in the clause (a shift's order, a state; a clause
naming none states a numeric change), a change the question shows beyond the graph's own threshold
(a counterfactual supposes another) or in words (the supposed one is read against it), the stated
change's fact read leniently before a fact about another change decides, the options read in the
modality the question asks about (and as a change of categories only when they name its
categories), and every event a learned phrase teaches reachable by a fact."""

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
    "music:arousal:down": "musical arousal (energy) decreases",
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
    music: dict[str, str] | None = None,
) -> GraphReader:
    """``aliases``: learned phrases as the builder stores them (``graph.ckg.aliases``);
    ``music``: musical events besides ``MUSIC`` (id -> title)."""
    nodes = {i: _node(i, t, "visual_change") for i, t in (ACTION | NUMERIC).items()}
    nodes |= {i: _node(i, t, "music_change") for i, t in (MUSIC | (music or {})).items()}
    config: dict[str, object] = {"thresholds": thresholds} if thresholds else {}
    if aliases:
        config["event_aliases"] = aliases
    return GraphReader(CausalGraph(nodes=nodes, edges={e.id: e for e in edges}, build_config=config))


def _stated(reader: GraphReader, facts: list[Fact], text: str) -> set[str]:
    """The change a counterfactual worded ``text`` supposes, among the causes of ``facts``."""
    return reader.stated_events(_counterfactual(text), facts, cause_side=False)


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
    stated = _stated(
        *actions,
        "The performer keeps singing. Had it gone differently, so that singing gives way to walking, "
        "what would the music have done?",
    )
    assert stated and stated <= {"visual:action:singing->walking", "visual:action:*->walking"}


def test_a_state_clause_is_not_read_as_a_shift_to_a_category_it_does_not_name(actions) -> None:
    stated = _stated(
        *actions,
        "The performer is sitting. Suppose instead that someone on screen is walking. "
        "How would the music most likely have changed?",
    )
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
    # The supposed change (brightness up) raises arousal; a fact about motion, another change,
    # makes the music louder. "A more rousing sound" is closer to loudness than to arousal, so a
    # strict reading (the fact's variable among the option's two closest) passes over the stated
    # fact, and the motion fact would decide.
    stated = _edge("visual:brightness:up", "music:arousal:up")
    other = _edge("visual:motion:up", "music:loudness:up")
    reader = _reader([stated, other])
    facts = [_fact(other), _fact(stated)]
    options = {
        "a": "a more rousing sound",
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
    assert reader.answer(options, facts).fact_id == other.id  # without the question: the motion fact
    assert reader.links(options, facts, question)[stated.id] == "a"


def test_a_clause_naming_no_category_is_not_read_as_a_change_of_categories() -> None:
    # Retrieval returned facts about action shifts and about motion; "the footage becomes more
    # hectic" names no action, so it states a numeric change (the embedding alone reads a shift).
    edges = [_edge(source, "music:mode:is:minor") for source in ACTION]
    edges += [
        _edge("visual:motion:up", "music:loudness:up"),
        _edge("visual:motion:down", "music:loudness:down"),
    ]
    stated = _stated(
        _reader(edges),
        [_fact(e) for e in edges],
        "The camera work gradually settles. Had it gone differently, so that the footage becomes "
        "more hectic, what would the music have done?",
    )
    # Which way motion went is the next test's matter; here, that it is motion.
    assert stated and stated <= {"visual:motion:up", "visual:motion:down"}


def test_a_supposed_change_worded_afresh_is_read_against_the_one_seen() -> None:
    # No values to rule the seen change out: the clause's words lean to the direction the scene
    # showed ("steadies" after "livens up" sits closer to motion increasing); read as what differs
    # from the seen sentence, the supposed direction is found both ways.
    edges = [
        _edge("visual:motion:up", "music:loudness:up"),
        _edge("visual:motion:down", "music:loudness:down"),
    ]
    reader, facts = _reader(edges), [_fact(e) for e in edges]
    steadies = "The footage livens up. What if the movement on screen steadies instead? Which change in the soundtrack would that bring?"
    livens = "Picture the cut again: the camera work gets noticeably calmer on screen. Imagine the scene turns a bit more frantic. Which musical change would follow?"
    assert _stated(reader, facts, steadies) == {"visual:motion:down"}
    assert _stated(reader, facts, livens) == {"visual:motion:up"}


def test_options_are_read_in_the_modality_the_question_asks_about() -> None:
    # "A more relaxed feel" and "a more intense feel" sit closer to on-screen events (an action, a
    # motion) than to any musical one; the question asks about the music, so they are not read as
    # on-screen changes (which would make the reader compare them with the facts' causes).
    edges = [_edge("visual:motion:up", "music:tempo:up"), _edge("visual:brightness:up", "music:arousal:down")]
    options = {
        "a": "Minor harmony once the shot changes.",
        "b": "the pace of the music gently quickens in the current scene",
        "c": "A more relaxed feel right after the cut.",
        "d": "A more intense feel in the current scene",
    }
    question = _counterfactual(
        "The shot gets darker. Suppose instead that the image becomes brighter. How would the music "
        "most likely have changed?",
        options,
    )
    answer = _reader(edges).answer(options, [_fact(e) for e in edges], question)
    read = [event for event in answer.option_events.values() if event is not None]
    assert read and all(event.startswith("music:") for event in read)


def test_every_event_a_learned_phrase_teaches_is_reachable_by_a_fact() -> None:
    # The corpus used "calms down" for answers where tempo fell and, almost as often, arousal fell
    # (one cause lowers both): read as tempo by the words, the option must still be the one a fact
    # about arousal falling speaks of, not the distractors the embedding puts near arousal.
    edge = _edge("visual:action:*->walking", "music:arousal:down")
    aliases = {"calms down": {"music:tempo:down": 0.57, "music:arousal:down": 0.5}}
    options = {
        "a": "A minor tonality right after the cut.",
        "b": "the track calms down",
        "c": "the song noticeably heats up",
        "d": "The melody sounds a bit more cheerful in the current scene",
    }
    question = _counterfactual(
        "The person stops sitting and starts driving. Had it gone differently, so that sitting gives "
        "way to walking, what would the music have done?",
        options,
    )
    answer = _reader([edge], aliases=aliases).answer(options, [_fact(edge)], question)
    assert answer.option_events["b"] == "music:tempo:down"  # the words' reading is unchanged
    assert answer.letters == ["b"] and answer.fact_id == edge.id


def test_an_option_is_read_as_a_change_of_categories_only_when_it_names_them() -> None:
    # Retrieval ranks a fact about a mood shift first; "a little more agitated" sits nearest
    # "mood shifts from scared to angry" by the embedding though it names neither mood, so that
    # fact would decide for it; read as no mood shift, the fact about arousal decides.
    mood = {
        "music:mood:tranquil->relaxed": "mood shifts from tranquil to relaxed",
        "music:mood:relaxed->tranquil": "mood shifts from relaxed to tranquil",
        "music:mood:calm->dull": "mood shifts from calm to dull",
        "music:mood:scared->angry": "mood shifts from scared to angry",
    }
    shift = _edge("visual:motion:down", "music:mood:scared->angry")
    calmer = _edge("visual:motion:down", "music:arousal:down")
    options = {
        "a": "The music becomes noticeably more relaxed once the shot changes.",
        "b": "the soundtrack sounds a little more agitated once the shot changes",
        "c": "a sunnier sound as the scene changes.",
        "d": "a quicker pace",
    }
    question = _counterfactual(
        "The footage livens up. What if the movement on screen steadies instead? Which change in "
        "the soundtrack would that bring?",
        options,
    )
    facts = [_fact(shift), _fact(calmer)]
    answer = _reader([shift, calmer], music=mood).answer(options, facts, question)
    assert not any(e and e.startswith("music:mood:") for e in answer.option_events.values())
    assert answer.letters == ["a"] and answer.fact_id == calmer.id
    # A text the corpus used whole keeps the corpus's reading, named categories or not.
    taught = _reader([shift], music=mood, aliases={"a gentler feel": {"music:mood:tranquil->relaxed": 1.0}})
    assert taught.event_of("a gentler feel") == "music:mood:tranquil->relaxed"


def test_an_option_naming_a_category_reads_as_that_categorys_event_not_a_co_effects() -> None:
    # Where one cause raises loudness and puts the music in a major key, and the key is major in
    # most scenes, the corpus teaches "major" only as the co-effect (loudness rising); an option
    # naming the category is read as the key's event, with the co-effect kept near it.
    loud = _edge("visual:motion:down", "music:loudness:up")
    major = _edge("visual:motion:down", "music:mode:is:major")
    aliases = {"swells": {"music:loudness:up": 0.9}, "major": {"music:loudness:up": 0.68}}
    options = {
        "a": "the track swells",
        "b": "the music is in a major key",
        "c": "A quicker pace",
        "d": "the beat drags",
    }
    question = _counterfactual(
        "The footage livens up. What if the movement on screen steadies instead? Which change in "
        "the soundtrack would that bring?",
        options,
    )
    reader = _reader([loud, major], aliases=aliases)
    answer = reader.answer(options, [_fact(loud)], question)
    assert answer.option_events["b"] == "music:mode:is:major"
    assert answer.letters == ["a"] and answer.fact_id == loud.id
    assert reader.answer(options, [_fact(major)], question).letters == ["b"]
