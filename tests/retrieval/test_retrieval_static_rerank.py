"""static+rerank (retrieval.hybrid, ``HybridConfig.rerank_pool``): on a static-route index, the static
vectors propose node seeds, edge seeds and candidate edges, and the exact model's vectors of those texts
only decide, with the exact route's scoring. When the pool holds every row, the facts (ids, order,
scores) must be the exact route's, bit for bit; a smaller pool embeds fewer texts.

The model-free tests stand in 64-dim hashing vectors for the static route and 48-dim ones for the exact
model (any two embedders show the mechanism); one test runs the real routes (distilled static model and
packaged MiniLM on a 50-entity graph, a few seconds once the static model is cached).
"""

from __future__ import annotations

import numpy as np
import pytest

from retrieval import RetrievalQuery
from retrieval.ann import IndexConfig, VectorSearch
from retrieval.embed import Embedder, HashingEmbedder
from retrieval.graph_view import GraphView
from retrieval.hybrid import RERANK_POOL, RERANK_POOL_MAX, HybridConfig, HybridRetriever, rerank_pool
from retrieval.index import GraphIndex
from tests.retrieval.test_retrieval_scale import load_synth


class CountingEmbedder(HashingEmbedder):
    """A hashing embedder that counts the texts it is asked for (and keeps their vectors: fast)."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.embedded = 0
        self._seen: dict[str, np.ndarray] = {}

    def encode(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        for text in texts:
            if text not in self._seen:
                self._seen[text] = self._vector(text)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._seen[text] for text in texts])


def _index(view: GraphView, embedder: object, route: str, config: IndexConfig | None = None) -> GraphIndex:
    """An index of ``view`` with ``embedder``'s per-text vectors, labelled ``route``."""
    config = config or IndexConfig()
    nodes = embedder.encode(view.node_texts())  # type: ignore[attr-defined]
    edges = embedder.encode(view.edge_texts())  # type: ignore[attr-defined]
    return GraphIndex(
        content_hash=view.content_hash,
        model_id=embedder.model_id,  # type: ignore[attr-defined]
        node_search=VectorSearch.build(nodes, config),
        edge_search=VectorSearch.build(edges, config),
        config=config,
        route=route,
    )


@pytest.fixture(scope="module")
def graph_and_questions(tmp_path_factory):
    synth = load_synth()
    folder = synth.write(synth.generate(150, seed=11), tmp_path_factory.mktemp("graphrag_rerank"))
    graph = synth.load_graph(folder)
    pairs = synth.questions(graph, 40, seed=3)
    queries = [RetrievalQuery(question=q) for q, _ in pairs]
    # counterfactual questions: their hypothetical clause is embedded and searched too
    for question, _ in pairs[:6]:
        clause = question.rstrip("?").replace("Why does", "Suppose").replace("What links", "Suppose")
        queries.append(
            RetrievalQuery(question=f"{clause}. How would the music differ?", question_type="counterfactual")
        )
    return GraphView.of(graph), queries


def _static_view(view: GraphView):
    """(a static-route index of hashing vectors, the embedder bound to it)."""
    static = CountingEmbedder(64)
    static.route = "static"  # stands in for the distilled static embedding
    return _index(view, static, "static"), static


def test_pool_setting(monkeypatch) -> None:
    monkeypatch.delenv("KARMA_RERANK_POOL", raising=False)
    assert rerank_pool() == RERANK_POOL and rerank_pool(0) == 0 and rerank_pool(7) == 7
    # Unset, the pool follows the index's size: 400 up to 40,000 texts, 1,200 at a 30k-entity
    # GraphRAG graph's 119,910 texts, never above the cap; a given pool wins over the size.
    assert rerank_pool(texts=40_000) == RERANK_POOL and rerank_pool(texts=40_001) == 500
    assert rerank_pool(texts=119_910) == 1200 and rerank_pool(texts=10**7) == RERANK_POOL_MAX
    assert rerank_pool(7, texts=119_910) == 7
    monkeypatch.setenv("KARMA_RERANK_POOL", "30")
    assert rerank_pool() == 30 and rerank_pool(5) == 5  # a config value wins over the environment
    monkeypatch.setenv("KARMA_RERANK_POOL", "many")
    with pytest.raises(ValueError, match="KARMA_RERANK_POOL"):
        rerank_pool()


def test_full_pool_gives_the_exact_route_list(graph_and_questions) -> None:
    view, queries = graph_and_questions
    exact_model = CountingEmbedder(48)
    reference = HybridRetriever(view, embedder=exact_model, index=_index(view, exact_model, "exact"))
    assert reference.route == "exact"
    index, static = _static_view(view)
    everything = len(view.node_ids) + len(view.edge_ids)
    reranked = HybridRetriever(
        view,
        embedder=static,
        index=index,
        config=HybridConfig(rerank_pool=everything),
        rerank_embedder=CountingEmbedder(48),
    )
    assert reranked.route == f"static+rerank-{everything}"
    for k in (10, 3):
        expected = reference.retrieve_many(queries, k=k)
        got = reranked.retrieve_many(queries, k=k)
        for want, have in zip(expected, got, strict=True):
            assert want.fact_ids, "every question should retrieve something"
            assert [(f.id, f.score) for f in have.facts] == [(f.id, f.score) for f in want.facts]
        # one at a time as in a batch
        assert [reranked.retrieve(q, k=k).facts for q in queries[:5]] == [r.facts for r in got[:5]]
    # and the static vectors alone give other lists (else this test would show nothing)
    alone = HybridRetriever(view, embedder=static, index=index, config=HybridConfig(rerank_pool=0))
    assert alone.route == "static"
    static_lists = [r.fact_ids for r in alone.retrieve_many(queries, k=10)]
    assert static_lists != [r.fact_ids for r in reference.retrieve_many(queries, k=10)]


def test_small_pool_embeds_fewer_texts_and_stays_close(graph_and_questions) -> None:
    view, queries = graph_and_questions
    index, static = _static_view(view)
    exact_model = CountingEmbedder(48)
    reference = HybridRetriever(view, embedder=exact_model, index=_index(view, exact_model, "exact"))
    counted = {}
    overlap = {}
    expected = reference.retrieve_many(queries, k=10)
    for pool in (20, 10_000):
        embedder = CountingEmbedder(48)
        retriever = HybridRetriever(
            view,
            embedder=static,
            index=index,
            config=HybridConfig(rerank_pool=pool),
            rerank_embedder=embedder,
        )
        got = retriever.retrieve_many(queries, k=10)
        counted[pool] = embedder.embedded
        overlap[pool] = np.mean(
            [
                len(set(a.fact_ids) & set(b.fact_ids)) / len(b.fact_ids)
                for a, b in zip(got, expected, strict=True)
            ]
        )
    assert counted[20] < counted[10_000]
    # per question: the question (and clause) + at most 20 nodes, 20 edges and 20 candidates per search
    assert counted[20] <= len(queries) * (2 + 2 * 20 + 20 + 20 + 16) * 2
    assert overlap[10_000] == 1.0
    assert overlap[20] > 0.5


def test_exact_route_ignores_the_pool(graph_and_questions) -> None:
    view, queries = graph_and_questions
    model = CountingEmbedder(48)
    index = _index(view, model, "exact")
    plain = HybridRetriever(view, embedder=model, index=index)
    pooled = HybridRetriever(view, embedder=model, index=index, config=HybridConfig(rerank_pool=5))
    assert pooled.route == "exact" and pooled._exact is None
    assert plain.retrieve_many(queries, k=10) == pooled.retrieve_many(queries, k=10)


def test_real_routes_full_pool_equals_exact_per_text_vectors(tmp_path, monkeypatch) -> None:
    """The distilled static model proposes, the packaged MiniLM decides: with the pool holding every row,
    the facts equal an exact-route index built from the same per-text MiniLM vectors."""
    monkeypatch.delenv("KARMA_EMBED_ROUTE", raising=False)
    synth = load_synth()
    graph = synth.load_graph(synth.write(synth.generate(50, seed=5), tmp_path / "g"))
    view = GraphView.of(graph)
    queries = [RetrievalQuery(question=q) for q, _ in synth.questions(graph, 10, seed=4)]
    static = Embedder(route="static")
    static_index = GraphIndex.build(view, static)
    assert static_index.route == "static"
    everything = len(view.node_ids) + len(view.edge_ids)
    reranked = HybridRetriever(
        view, embedder=static, index=static_index, config=HybridConfig(rerank_pool=everything)
    )
    assert reranked.route == f"static+rerank-{everything}" and reranked._exact is not None
    got = reranked.retrieve_many(queries, k=10)
    exact = Embedder(route="exact")
    reference = HybridRetriever(view, embedder=exact, index=_index(view, exact, "exact"))
    expected = reference.retrieve_many(queries, k=10)
    for want, have in zip(expected, got, strict=True):
        assert [(f.id, f.score) for f in have.facts] == [(f.id, f.score) for f in want.facts]
