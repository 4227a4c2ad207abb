"""The no-model graph scorer: rules on a small hand-made graph, and real strength on a synth world."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.eval.graph_scorer import graph_scorer_pick, option_support, stated_direction
from karma.records import Question, QuestionType
from retrieval.base import Fact

EDGE = "visual:brightness:up->music:loudness:up|causes"


def _graph() -> CausalGraph:
    nodes = {
        "visual:brightness:up": CkgNode(
            id="visual:brightness:up", title="brightness increases", kind="visual_change"
        ),
        "music:loudness:up": CkgNode(id="music:loudness:up", title="loudness increases", kind="music_change"),
    }
    edge = CkgEdge(
        id=EDGE, source="visual:brightness:up", target="music:loudness:up", relation="causes", weight=0.6
    )
    return CausalGraph(nodes=nodes, edges={EDGE: edge})


FACTS = [Fact(id=EDGE, text="brightness increases -> loudness increases", score=1.0)]


def _q(text: str, options: list[str], qtype: QuestionType = QuestionType.evidential) -> Question:
    return Question(type=qtype, question=text, options=dict(zip("abcd", options, strict=True)), answer="a")


def test_effect_option_supported_when_the_cause_is_stated() -> None:
    q = _q(
        "Across the cut brightness went 100.0 → 130.0. Which change in the music does this explain?",
        ["tempo decreases", "loudness rises", "key changes", "loudness decreases"],
    )
    assert graph_scorer_pick(q, FACTS, _graph()) == ["b"]  # "rises" folds onto "increases"


def test_contradicted_cause_gives_no_support() -> None:
    q = _q(
        "Across the cut brightness went 130.0 → 100.0. Which change in the music does this explain?",
        ["tempo decreases", "loudness increases", "key changes", "loudness decreases"],
    )
    assert option_support(q, FACTS, _graph())["b"] == 0.0
    assert graph_scorer_pick(q, FACTS, _graph()) == ["a", "b", "c", "d"]  # no support: a 4-way tie


def test_cause_option_supported_for_explain_the_music_questions() -> None:
    q = _q(
        "The soundtrack's loudness went -20.0 → -12.0 dB. Which on-screen change best explains this?",
        ["motion increases", "brightness decreases", "brightness increases", "contrast increases"],
    )
    assert graph_scorer_pick(q, FACTS, _graph()) == ["c"]


def test_hypothetical_direction_wins_in_counterfactuals() -> None:
    text = "Brightness went 100.0 → 90.0. Suppose brightness had instead gone 100.0 → 140.0. Which change?"
    assert stated_direction(text, "brightness") == "up"
    q = _q(
        text,
        ["loudness decreases", "loudness increases", "tempo increases", "key changes"],
        QuestionType.counterfactual,
    )
    assert graph_scorer_pick(q, FACTS, _graph()) == ["b"]


def test_removal_counterfactual_predicts_no_change() -> None:
    q = _q(
        "If the brightness increase had not happened, how would the loudness differ?",
        ["loudness increases", "loudness stays the same", "loudness decreases", "tempo doubles"],
        QuestionType.counterfactual,
    )
    assert graph_scorer_pick(q, FACTS, _graph()) == ["b"]


def test_no_facts_or_no_graph_is_a_full_tie() -> None:
    q = _q("brightness went 1 → 2. Which?", ["loudness increases", "b", "c", "d"])
    assert graph_scorer_pick(q, [], _graph()) == ["a", "b", "c", "d"]
    assert graph_scorer_pick(q, FACTS, None) == ["a", "b", "c", "d"]


@pytest.mark.slow
def test_beats_chance_on_a_synth_world_with_held_out_folds(tmp_path: Path) -> None:
    from graph import BuildConfig, build_graph, video_folds
    from karma.data import load_dataset
    from karma.synth import generate, load_world
    from pipelines.answering import build_retrieval_query
    from retrieval import get_retriever

    generate(load_world("data/worlds/tiny.yaml"), tmp_path, videos=30, seed=0)
    dataset = load_dataset(tmp_path)
    credit = []
    for fold in video_folds(dataset.video_ids, 3, seed=0):
        graph = build_graph(dataset.transitions, dataset.features, BuildConfig(exclude_videos=sorted(fold)))
        retriever = get_retriever("keyword", graph)
        for transition, question in dataset.iter_questions():
            if transition.video_id not in fold:
                continue
            query = build_retrieval_query(transition, question, dataset.features[transition.video_id])
            picks = graph_scorer_pick(question, retriever.retrieve(query, k=10).facts, graph)
            credit.append(1 / len(picks) if question.answer in picks else 0.0)
    assert len(credit) == len(dataset.iter_questions())
    assert sum(credit) / len(credit) > 0.45  # chance is 0.25; the planted causes carry the answer
