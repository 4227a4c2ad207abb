"""LLM pipeline prompts: the graph block is the only difference between the two arms."""

from __future__ import annotations

import difflib

import pytest

from karma.core.records import Question, SceneFeatures, SceneRef, Transition
from pipelines.llm import LlmPipeline
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever

OPTIONS = {
    "a": "The music gets louder and faster",
    "b": "The music gets quieter",
    "c": "The key changes to major",
    "d": "Nothing changes",
}


class FixedFactsRetriever(Retriever):
    """A real Retriever over a fixed fact list (stands in for the graph retrievers in these tests);
    it records every query so the tests can check what a retriever is allowed to see."""

    name = "fixed"

    def __init__(self, facts: list[Fact]):
        self.facts = facts
        self.queries: list[RetrievalQuery] = []

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        self.queries.append(query)
        ranked = sorted(self.facts, key=lambda f: (-f.score, f.id))[:k]
        return RetrievalResult(retriever=self.name, facts=ranked, graph_hash="g123")


FACTS = [
    Fact(id="e1", text="visual:brightness:up -> music:loudness:up (support 12, confidence 0.71)", score=0.9),
    Fact(id="e2", text="visual:motion:up -> music:tempo:up (support 8, confidence 0.64)", score=0.7),
]


def _transition(qtype: str) -> Transition:
    return Transition(
        video_id="vidA",
        index=3,
        past_scene=SceneRef(name="scene_003.mp4", start_time="00:00:10.125", end_time="00:00:13.833"),
        current_scene=SceneRef(name="scene_004.mp4", start_time="00:00:13.833", end_time="00:00:16.542"),
        questions=[
            Question(
                type=qtype,
                question="How does the music respond to the brighter scene?",
                options=OPTIONS,
                answer="a",
                explanation="SECRET EXPLANATION",
                index=0,
            )
        ],
    )


FEATURES = {
    "scene_003": SceneFeatures(
        **{"Brightness": 80.0, "Motion": 2.0, "Average Loudness (dB)": -22.0, "Key": "D minor"}
    ),
    "scene_004": SceneFeatures(
        **{"Brightness": 190.0, "Motion": 9.5, "Average Loudness (dB)": -9.0, "Key": "F major"}
    ),
}


@pytest.mark.parametrize("qtype", ["evidential", "predictive", "counterfactual"])
def test_graph_on_and_off_differ_exactly_by_the_block(qtype: str):
    transition = _transition(qtype)
    on = LlmPipeline(retriever=FixedFactsRetriever(FACTS), use_graph=True).prepare(transition, 0, FEATURES)
    off = LlmPipeline(retriever=FixedFactsRetriever(FACTS), use_graph=False).prepare(transition, 0, FEATURES)

    assert on.request.messages[0] == off.request.messages[0]  # same system prompt
    settings = ("max_tokens", "temperature", "seed", "choices")
    assert [getattr(on.request, s) for s in settings] == [getattr(off.request, s) for s in settings]
    on_user, off_user = on.request.messages[1].content, off.request.messages[1].content
    assert off.graph_block == "" and on.graph_block.startswith("\nCausal knowledge")
    assert on_user.replace(on.graph_block, "", 1) == off_user

    # The line diff holds only the block's lines, all of them added.
    diff = [line for line in difflib.ndiff(off_user.splitlines(), on_user.splitlines()) if line[:1] in "+-?"]
    assert all(line.startswith("+ ") for line in diff)
    added = [line[2:] for line in diff]
    assert len(added) == on.graph_block.count("\n")  # one added line per line of the block
    assert [line for line in added if line] == on.graph_block.strip("\n").splitlines()
    assert on.fact_ids == ["e1", "e2"] and off.fact_ids == []
    assert on.prompt_hash != off.prompt_hash
    assert on.template_hash == off.template_hash and on.template_version == off.template_version


def test_off_arm_does_not_even_query_the_retriever():
    retriever = FixedFactsRetriever(FACTS)
    LlmPipeline(retriever=retriever, use_graph=False).prepare(_transition("evidential"), 0, FEATURES)
    assert retriever.queries == []


def test_retrieval_query_never_sees_answer_options_or_explanation():
    retriever = FixedFactsRetriever(FACTS)
    LlmPipeline(retriever=retriever).prepare(_transition("evidential"), 0, FEATURES)
    (query,) = retriever.queries
    dumped = query.model_dump_json()
    assert "SECRET EXPLANATION" not in dumped
    for option in OPTIONS.values():
        assert option not in dumped
    assert query.transition_id == "vidA/t003"


def test_predictive_hides_current_music_in_both_arms_only():
    transition = _transition("predictive")
    for use_graph in (True, False):
        prompt = LlmPipeline(use_graph=use_graph).prepare(transition, 0, FEATURES)
        user = prompt.request.messages[1].content
        past, current = user.split("Current scene", 1)
        assert prompt.audio_masked
        assert "-22" in past and "D minor" in past  # the past scene's music stays visible
        assert "-9" not in current and "F major" not in current
        assert "Average Loudness (dB): hidden" in current and "- Brightness: 190" in current
    evidential = LlmPipeline().prepare(_transition("evidential"), 0, FEATURES).request.messages[1].content
    assert "F major" in evidential and "hidden" not in evidential


def test_graph_on_without_facts_states_that_nothing_was_found():
    prompt = LlmPipeline(retriever=FixedFactsRetriever([]), use_graph=True).prepare(
        _transition("evidential"), 0, FEATURES
    )
    assert "none found" in prompt.graph_block and prompt.fact_ids == []
    no_retriever = LlmPipeline(retriever=None, use_graph=True).prepare(_transition("evidential"), 0, FEATURES)
    assert no_retriever.graph_block == prompt.graph_block


def test_prompts_are_deterministic_and_record_ids():
    transition = _transition("counterfactual")
    first = LlmPipeline(retriever=FixedFactsRetriever(FACTS)).prepare(transition, 0, FEATURES)
    second = LlmPipeline(retriever=FixedFactsRetriever(FACTS)).prepare(transition, 0, FEATURES)
    assert first.prompt_hash == second.prompt_hash and first.request == second.request
    assert first.question_id == "vidA/t003/q0"
    assert "SECRET EXPLANATION" not in first.request.model_dump_json()
    constrained = LlmPipeline(constrain_choices=True).prepare(transition, 0, FEATURES)
    assert constrained.request.choices == ["a", "b", "c", "d"]


def test_question_index_out_of_range_names_the_transition():
    with pytest.raises(IndexError, match="vidA/t003"):
        LlmPipeline().prepare(_transition("evidential"), 5, FEATURES)
