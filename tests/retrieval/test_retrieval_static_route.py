"""The static embedding route (retrieval.static_embed): chosen by graph size, forced by setting, recorded
in the index metadata, never read back or queried as the other route, and close to the exact route's
recall on a small GraphRAG-shaped graph.

The static model is distilled once per machine from the packaged MiniLM into the cache root (about 1-2
minutes on 2 cores the first time; then read back in well under a second).
"""

from __future__ import annotations

import json

import pytest

from retrieval import RetrievalQuery
from retrieval.embed import Embedder, RouteMismatch
from retrieval.graph_view import GraphView
from retrieval.hybrid import HybridConfig, HybridRetriever
from retrieval.index import GraphIndex, load_or_build_index
from retrieval.static_embed import STATIC_MIN_TEXTS, choose_route, embed_route
from tests.retrieval.test_retrieval_scale import load_synth

RECALL_MARGIN = 0.10
"""The static route's recall@10 of the true edges may trail the exact route's by at most this much on the
200-entity graph below (measured: see docs/retrieval.md, "The static route")."""


@pytest.fixture(scope="module")
def small_graph(tmp_path_factory):
    synth = load_synth()
    folder = synth.write(synth.generate(200, seed=7), tmp_path_factory.mktemp("graphrag_static"))
    graph = synth.load_graph(folder)
    return synth, graph, GraphView.of(graph)


@pytest.fixture(scope="module")
def exact_folder(small_graph, tmp_path_factory):
    """The small graph's exact index under the default (auto) setting, built once for this module."""
    _, _, view = small_graph
    folder = tmp_path_factory.mktemp("exact_index") / "idx"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("KARMA_EMBED_ROUTE", raising=False)
        embedder = Embedder()
        index = load_or_build_index(view, embedder, folder)
    assert index.route == "exact" and embedder.route == "exact"
    return folder


def test_route_setting_and_choice_by_size(monkeypatch) -> None:
    monkeypatch.delenv("KARMA_EMBED_ROUTE", raising=False)
    assert embed_route() == "auto"
    assert choose_route("auto", STATIC_MIN_TEXTS) == "exact"
    assert choose_route("auto", STATIC_MIN_TEXTS + 1) == "static"
    assert choose_route("auto", STATIC_MIN_TEXTS + 1, local_model=False) == "exact"
    assert choose_route("exact", 10 * STATIC_MIN_TEXTS) == "exact"
    assert choose_route("static", 10) == "static"
    monkeypatch.setenv("KARMA_EMBED_ROUTE", "Static")
    assert embed_route() == "static" and Embedder().route == "static"
    assert embed_route("exact") == "exact"  # an explicit value wins over the environment
    monkeypatch.setenv("KARMA_EMBED_ROUTE", "fast")
    with pytest.raises(ValueError, match="KARMA_EMBED_ROUTE"):
        embed_route()


def test_small_graph_stays_exact_and_records_it(exact_folder) -> None:
    meta = json.loads((exact_folder / "meta.json").read_text())
    assert meta["route"] == "exact" and "+static" not in meta["model"] and meta["dim"] == 384


def test_auto_route_above_threshold_is_static_and_recorded(small_graph, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("KARMA_EMBED_ROUTE", raising=False)
    _, _, view = small_graph
    texts = len(view.node_ids) + len(view.edge_ids)
    monkeypatch.setattr("retrieval.static_embed.STATIC_MIN_TEXTS", texts - 1)  # this graph is "large"
    embedder = Embedder()
    index = load_or_build_index(view, embedder, tmp_path / "idx")
    assert index.route == "static" and embedder.route == "static"
    meta = json.loads((tmp_path / "idx" / "meta.json").read_text())
    assert meta["route"] == "static" and "+static-" in meta["model"] and meta["dim"] == 256
    # read back (not rebuilt) by another auto embedder, which is bound to the static route for questions
    again = Embedder()
    loaded = load_or_build_index(view, again, tmp_path / "idx")
    assert loaded.loaded_from_disk and again.route == "static"


def test_forced_route_is_honoured_and_the_other_route_refused(
    small_graph, exact_folder, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("KARMA_EMBED_ROUTE", raising=False)
    _, _, view = small_graph
    folder = tmp_path / "idx"
    static = load_or_build_index(view, Embedder(route="static"), folder)  # small graph, forced static
    assert static.route == "static"
    exact_embedder = Embedder(route="exact")
    # never read back for the other route: the stored static index is not taken for exact vectors
    assert GraphIndex.load(folder, view, exact_embedder.model_id, route="exact") is None
    assert GraphIndex.load(folder, view, Embedder(route="static").model_id, route="exact") is None
    # and an embedder forced to the other route cannot be bound to it (so cannot query it)
    with pytest.raises(RouteMismatch, match="static embedding route"):
        static.bind(exact_embedder)
    # an auto embedder bound to one route refuses an index of the other
    auto = Embedder()
    static.bind(auto)
    assert auto.route == "static"
    with pytest.raises(RouteMismatch):
        auto.use_route("exact")
    # the other way round: the exact index is never read back for the static route
    assert GraphIndex.load(exact_folder, view, exact_embedder.model_id, route="exact") is not None
    assert GraphIndex.load(exact_folder, view, exact_embedder.model_id, route="static") is None
    exact = GraphIndex.load(exact_folder, view, exact_embedder.model_id, route="exact")
    with pytest.raises(RouteMismatch, match="exact embedding route"):
        exact.bind(Embedder(route="static"))


def test_static_vectors_are_per_text(small_graph) -> None:
    _, _, view = small_graph
    embedder = Embedder(route="static")
    texts = view.edge_texts()[:50]
    corpus = embedder.encode_corpus(texts)
    single = [embedder.encode([text])[0] for text in texts[:5]]
    for row, vector in zip(corpus[:5], single, strict=True):
        assert (row == vector).all()  # a static vector depends on its text alone: bit for bit


def test_static_recall_close_to_exact(small_graph, exact_folder, monkeypatch) -> None:
    monkeypatch.delenv("KARMA_EMBED_ROUTE", raising=False)
    synth, graph, view = small_graph
    pairs = synth.questions(graph, 120, seed=2)
    queries = [RetrievalQuery(question=q) for q, _ in pairs]
    recall = {}
    for route in ("exact", "static"):
        folder = exact_folder if route == "exact" else None  # the exact index is read back, not rebuilt
        # the static vectors alone (rerank_pool=0): static+rerank has its own tests
        # (test_retrieval_static_rerank.py)
        retriever = HybridRetriever(
            view, embedder=Embedder(route=route), index_dir=folder, config=HybridConfig(rerank_pool=0)
        )
        assert retriever.index.route == route and retriever.index.loaded_from_disk == (route == "exact")
        results = retriever.retrieve_many(queries, k=10)
        recall[route] = sum(t in r.fact_ids for r, (_, t) in zip(results, pairs, strict=True)) / len(pairs)
    assert recall["static"] >= recall["exact"] - RECALL_MARGIN, recall
