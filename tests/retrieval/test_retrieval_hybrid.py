"""The hybrid retriever with the real packaged MiniLM: ranking, determinism, persisted FAISS index."""

from __future__ import annotations

from retrieval import GraphView, RetrievalQuery, get_retriever, hypothetical_clause, retrieval_text
from retrieval.index import GraphIndex


def test_retrieval_text_reads_numeric_changes_as_directions() -> None:
    text = "Tempo went 121.8 → 125.8 BPM and loudness went -21.2 → -25.7 dB (1-9 scale). Why?"
    assert retrieval_text(text) == "Tempo went up and loudness went down. Why?"
    assert (
        retrieval_text("the main action went dancing → running")
        == "the main action went from dancing to running"
    )
    assert retrieval_text("key went D# major → C minor") == "key went from D# major to C minor"
    clause = hypothetical_clause(
        "Brightness went 131.9 → 110.9. Suppose brightness had instead gone 131.9 → 145.9. Which?"
    )
    assert clause == "Suppose brightness had instead gone up."


def test_observed_change_and_asked_effect_rank_their_edge_first(small_graph, embedder) -> None:
    retriever = get_retriever("hybrid", small_graph, embedder=embedder)
    query = RetrievalQuery(
        question="Across the cut the picture got brighter. Why did the music get louder?",
        question_type="evidential",
        observed_events=["visual:brightness:up", "visual:saturation:up"],
    )
    result = retriever.retrieve(query, k=5)
    assert result.facts[0].id == "visual:brightness:up->music:loudness:up|causes"
    # the planted co-movement with the same effect ranks below the cause
    ids = result.fact_ids
    co_move = "visual:saturation:up->music:loudness:up|co_moves"
    assert co_move not in ids or ids.index(co_move) > 0
    scores = [fact.score for fact in result.facts]
    assert scores == sorted(scores, reverse=True)


def test_deltas_alone_seed_the_observed_events(small_graph, embedder) -> None:
    retriever = get_retriever("hybrid", small_graph, embedder=embedder)
    query = RetrievalQuery(
        question="What will the music do next?", question_type="predictive", visual_deltas={"motion": 6.0}
    )
    assert retriever.retrieve(query, k=1).facts[0].id == "visual:motion:up->music:tempo:up|causes"


def test_two_runs_and_batch_vs_single_are_identical(small_graph, embedder) -> None:
    queries = [
        RetrievalQuery(
            question="Why did the tempo rise?",
            question_type="evidential",
            observed_events=["visual:motion:up"],
        ),
        RetrievalQuery(
            question="How will the loudness change?",
            question_type="predictive",
            observed_events=["visual:brightness:down"],
        ),
        RetrievalQuery(
            question="Brightness went 100 → 80. Suppose brightness had instead gone 100 → 130. What then?",
            question_type="counterfactual",
            observed_events=["visual:brightness:down"],
        ),
    ]
    first = get_retriever("hybrid", small_graph, embedder=embedder).retrieve_many(queries, k=6)
    second = get_retriever("hybrid", small_graph, embedder=embedder).retrieve_many(queries, k=6)
    single = [get_retriever("hybrid", small_graph, embedder=embedder).retrieve(q, k=6) for q in queries]
    assert first == second == single
    # the counterfactual asks about brightness going up: its effects come before the observed 'down'
    top = first[2].facts[0]
    assert top.source == "visual:brightness:up"


def test_index_is_persisted_and_rebuilt_only_when_the_graph_changes(
    small_graph, embedder, tmp_path, graph_factory
) -> None:
    folder = tmp_path / "index"
    first = get_retriever("hybrid", small_graph, embedder=embedder, index_dir=folder)
    assert not first.index.loaded_from_disk and (folder / "meta.json").is_file()
    again = get_retriever("hybrid", small_graph, embedder=embedder, index_dir=folder)
    assert again.index.loaded_from_disk
    query = RetrievalQuery(question="Why is the music louder?", observed_events=["visual:brightness:up"])
    assert first.retrieve(query, k=5) == again.retrieve(query, k=5)
    changed = graph_factory()
    edge = changed.edges["visual:motion:up->music:tempo:up|causes"]
    changed.edges[edge.id] = edge.model_copy(update={"support": edge.support + 1})
    rebuilt = get_retriever("hybrid", changed, embedder=embedder, index_dir=folder)
    assert not rebuilt.index.loaded_from_disk
    assert GraphIndex.load(folder, GraphView.of(changed), embedder.model_id) is not None
    assert GraphIndex.load(folder, GraphView.of(small_graph), embedder.model_id) is None


def test_token_budget_cuts_the_facts(small_graph, embedder) -> None:
    query = RetrievalQuery(
        question="How does the music follow the picture?", observed_events=["visual:brightness:up"]
    )
    full = get_retriever("hybrid", small_graph, embedder=embedder).retrieve(query, k=10)
    cut = get_retriever("hybrid", small_graph, embedder=embedder, budget_tokens=60).retrieve(query, k=10)
    assert 0 < len(cut.facts) < len(full.facts)
    assert cut.facts == full.facts[: len(cut.facts)]


def test_a_stated_direction_and_the_rule_outrank_its_alternative_and_concept_links(
    small_graph, embedder
) -> None:
    # The hypothetical clause says "up": edges from "brightness decreases" (close to it in embedding
    # space) and the concept link "brightness increases is a brightness" must not come first.
    retriever = get_retriever("hybrid", small_graph, embedder=embedder)
    query = RetrievalQuery(
        question=(
            "Brightness went 131.9 → 120.0. Suppose brightness had instead gone 131.9 → 145.9. "
            "Which change would the soundtrack have shown?"
        ),
        question_type="counterfactual",
    )
    top = retriever.retrieve(query, k=3).facts[0]
    assert top.source == "visual:brightness:up" and not top.id.endswith("|instance_of")
