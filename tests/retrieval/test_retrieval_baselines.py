"""karma's keyword and path retrievers (``karma-keyword``, ``karma-paths``) and the empty one, on a known graph.

The published baselines (``keyword``, ``paths``) are tested rule by rule in test_published_baselines.py."""

from __future__ import annotations

from graph.model import CkgEdge
from retrieval import RetrievalQuery, get_retriever
from retrieval.keyword_karma import question_keywords


def test_keywords_are_words_of_four_or_more_letters_in_first_seen_order() -> None:
    assert question_keywords("Why does the TEMPO rise? The tempo, the key and mood!") == [
        "does",
        "tempo",
        "rise",
        "mood",
    ]


def test_keyword_matches_titles_by_substring_and_ranks_out_edges_by_target_degree(small_graph) -> None:
    retriever = get_retriever("karma-keyword", small_graph)
    query = RetrievalQuery(question="What happens when brightness changes?")
    matched = retriever.matched_nodes(query)
    # 'brightness' hits both brightness events and the concept; 'changes' hits 'key changes'.
    assert matched == [
        "concept:brightness",
        "music:key:changed",
        "visual:brightness:down",
        "visual:brightness:up",
    ]
    result = retriever.retrieve(query, k=25)
    sources = {fact.source for fact in result.facts}
    assert sources <= set(matched)
    # Out-edges only: brightness:up -> loudness:up, -> minor_to_major, -> concept (and the same for down).
    assert len(result.facts) == 7
    scores = [fact.score for fact in result.facts]
    assert scores == sorted(scores, reverse=True)
    loud = next(f for f in result.facts if f.id == "visual:brightness:up->music:loudness:up|causes")
    # loudness:up has degree 3 (two causes in, one concept link out); x1.5: 'increases' is a change word.
    assert loud.score == 4.5


def test_keyword_change_words_boost_the_edge(graph_factory) -> None:
    graph = graph_factory()
    up = "visual:brightness:up->music:loudness:up|causes"
    down = "visual:brightness:down->music:loudness:down|causes"
    graph.edges[up] = graph.edges[up].model_copy(
        update={"description": "bright scenes come with louder music"}
    )
    graph.edges[down] = graph.edges[down].model_copy(
        update={"description": "a darker shift lowers the volume"}
    )
    result = get_retriever("karma-keyword", graph).retrieve(RetrievalQuery(question="brightness"), k=10)
    scores = {f.id: f.score for f in result.facts}
    assert scores[up] == 3.0  # degree of loudness:up, no change word in the description
    assert scores[down] == 4.5  # degree 3 x 1.5 for 'shift'


def test_keyword_is_capped_at_the_published_25_and_at_k(small_graph) -> None:
    retriever = get_retriever("karma-keyword", small_graph, top_n=2)
    assert len(retriever.retrieve(RetrievalQuery(question="brightness motion saturation"), k=10).facts) == 2
    assert (
        len(
            get_retriever("karma-keyword", small_graph)
            .retrieve(RetrievalQuery(question="brightness"), k=1)
            .facts
        )
        == 1
    )


def test_keyword_ties_break_by_edge_id_and_runs_repeat(small_graph) -> None:
    retriever = get_retriever("karma-keyword", small_graph)
    query = RetrievalQuery(question="increases decreases")
    first = retriever.retrieve(query, k=25)
    assert first == retriever.retrieve(query, k=25)
    keys = [(-fact.score, fact.id) for fact in first.facts]
    assert keys == sorted(keys)


def test_paths_keeps_three_facts_on_shortest_paths_deterministically(small_graph) -> None:
    retriever = get_retriever("karma-paths", small_graph)
    assert "concept:brightness" in retriever.feature_nodes
    query = RetrievalQuery(question="How does the tempo react to dancing?")
    result = retriever.retrieve(query, k=10)
    assert len(result.facts) == 3
    assert result == retriever.retrieve(query, k=10)
    # Every fact lies on a path of at most two hops from a feature node, shortest paths first.
    assert all(fact.score in (1.0, 0.5) for fact in result.facts)
    keys = [(-fact.score, fact.id) for fact in result.facts]
    assert keys == sorted(keys)


def test_paths_without_concepts_uses_the_feature_event_nodes(graph_factory) -> None:
    graph = graph_factory()
    graph.nodes = {nid: node for nid, node in graph.nodes.items() if not nid.startswith("concept:")}
    graph.edges = {eid: edge for eid, edge in graph.edges.items() if edge.relation != "instance_of"}
    retriever = get_retriever("karma-paths", graph, max_facts=10)
    assert "visual:brightness:up" in retriever.feature_nodes
    assert "music:tempo:up" not in retriever.feature_nodes  # tempo is not a published feature
    result = retriever.retrieve(RetrievalQuery(question="tempo"), k=10)
    assert [f.id for f in result.facts] == [
        "visual:action:standing->dancing->music:tempo:up|causes",
        "visual:motion:down->music:tempo:down|causes",
        "visual:motion:up->music:tempo:up|causes",
    ]


def test_none_returns_nothing(small_graph) -> None:
    result = get_retriever("none", small_graph).retrieve(RetrievalQuery(question="anything"), k=10)
    assert result.facts == [] and result.retriever == "none"
    assert result.graph_hash == small_graph.content_hash()


def test_unknown_retriever_name_is_refused(small_graph) -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown retriever"):
        get_retriever("bm25", small_graph)


def test_retrievers_accept_a_store(small_graph) -> None:
    from graph import NetworkxStore

    store = NetworkxStore(small_graph)
    by_store = get_retriever("karma-keyword", store).retrieve(RetrievalQuery(question="tempo"), k=5)
    by_graph = get_retriever("karma-keyword", small_graph).retrieve(RetrievalQuery(question="tempo"), k=5)
    assert by_store == by_graph


def test_fact_carries_stable_id_and_statistics(small_graph) -> None:
    fact = (
        get_retriever("karma-keyword", small_graph).retrieve(RetrievalQuery(question="motion"), k=1).facts[0]
    )
    edge: CkgEdge = small_graph.edges[fact.id]
    assert (fact.source, fact.target) == (edge.source, edge.target)
    assert fact.stats["support"] == edge.support and fact.stats["confidence"] == round(edge.confidence, 4)
