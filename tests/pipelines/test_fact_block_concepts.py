"""Concept links (``instance_of``: "tempo decreases is a tempo") are not facts for the model: the
graph-on block skips them and shows the next-ranked facts instead, the same facts a retriever that
never ranked concept links would give (real graph from the sample data, real hybrid retriever)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph import BuildConfig, build_graph
from karma.data import load_dataset
from pipelines.answering import CONCEPT_RELATIONS, GraphContext, build_retrieval_query, retrieve_without
from pipelines.assembly import make_retriever
from retrieval.serialize import relation_of

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture(scope="module")
def world():
    dataset = load_dataset(SAMPLE)
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig(min_support=2))
    assert any(e.relation == "instance_of" for e in graph.edges.values())
    return dataset, make_retriever("hybrid", graph)


def test_skipped_concept_links_are_replaced_by_the_next_ranked_facts(world) -> None:
    dataset, retriever = world
    checked = 0
    for transition in dataset.transitions[:6]:
        for question in transition.questions:
            query = build_retrieval_query(
                transition, question, dataset.features[transition.video_id], retriever
            )
            everything = retriever.retrieve(query, k=len(retriever.view.edge_ids)).facts
            wanted = [f.id for f in everything if relation_of(f) not in CONCEPT_RELATIONS][:10]
            got = retrieve_without(retriever, query, 10, CONCEPT_RELATIONS).facts
            assert [f.id for f in got] == wanted
            checked += any(relation_of(f) == "instance_of" for f in everything[:10])
            assert (
                retrieve_without(retriever, query, 10, frozenset()).facts
                == retriever.retrieve(query, k=10).facts
            )
    assert checked, "no question had a concept link in its top 10: the test checks nothing"


def test_the_graph_block_shows_concept_links_only_when_asked(world) -> None:
    dataset, retriever = world
    transition = dataset.transitions[0]
    question = transition.questions[0]
    features = dataset.features[transition.video_id]
    plain = GraphContext(retriever, use_graph=True).retrieve(transition, question, features)
    shown = GraphContext(retriever, use_graph=True, concept_facts=True).retrieve(
        transition, question, features
    )
    assert not [f for f in plain.facts if relation_of(f) == "instance_of"]
    assert [f for f in shown.facts if relation_of(f) == "instance_of"]
