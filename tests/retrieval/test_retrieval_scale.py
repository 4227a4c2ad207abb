"""Retrieval that scales: batched corpus embedding (batch invariance by fixed composition), one float32
copy of the vectors, ANN candidates chosen by size with exact rescoring, the index cached by graph hash
under the cache root (a read-only graph folder stays unchanged). GraphRAG-shaped inputs come from the
benchmark's generator (published GraphRAG table layout, read through karma's importer)."""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval import RetrievalQuery, get_retriever
from retrieval.ann import IndexConfig, VectorSearch, exact_similarities
from retrieval.embed import CORPUS_TOLERANCE, HashingEmbedder
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex, default_index_dir

REPO = Path(__file__).resolve().parents[2]


def load_synth():
    """benchmarks/graphrag_synth.py (the benchmarks folder is not a package)."""
    if "graphrag_synth" in sys.modules:
        return sys.modules["graphrag_synth"]
    spec = importlib.util.spec_from_file_location("graphrag_synth", REPO / "benchmarks" / "graphrag_synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["graphrag_synth"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def graphrag_graph(tmp_path_factory):
    synth = load_synth()
    folder = synth.write(synth.generate(400, seed=3), tmp_path_factory.mktemp("graphrag"))
    return synth, synth.load_graph(folder)


def test_graphrag_generator_is_graphrag_shaped_and_deterministic(tmp_path) -> None:
    import pyarrow.parquet as pq

    synth = load_synth()
    first, second = synth.generate(300, seed=5), synth.generate(300, seed=5)
    assert first == second
    folder = synth.write(first, tmp_path)
    entities = pq.read_table(folder / "entities.parquet")
    relationships = pq.read_table(folder / "relationships.parquet")
    assert {"id", "human_readable_id", "title", "type", "description", "text_unit_ids"} <= set(
        entities.column_names
    )
    assert {"id", "source", "target", "description", "weight"} <= set(relationships.column_names)
    assert 2.5 <= relationships.num_rows / entities.num_rows <= 3.0
    titles = set(entities.column("title").to_pylist())
    assert set(relationships.column("source").to_pylist()) <= titles  # endpoints are titles
    assert all(len(i) == 36 for i in entities.column("id").to_pylist())  # UUIDs
    graph = synth.load_graph(folder)
    assert len(graph.nodes) == 300 and len(graph.edges) == relationships.num_rows


@pytest.mark.slow
def test_corpus_vectors_equal_single_text_vectors_within_tolerance(graphrag_graph, embedder) -> None:
    _, graph = graphrag_graph
    view = GraphView.of(graph)
    texts = view.node_texts()[:40] + view.edge_texts()[:40]
    corpus = embedder.encode_corpus(texts, batch_size=16)
    single = np.stack([embedder.encode([text])[0] for text in texts])
    assert corpus.dtype == np.float32 and corpus.shape == single.shape
    assert float(np.abs(corpus - single).max()) <= CORPUS_TOLERANCE
    # fixed batch composition: the same set of texts in another order gives the same bits
    shuffled = list(reversed(texts))
    again = embedder.encode_corpus(shuffled, batch_size=16)
    assert np.array_equal(again[::-1], corpus)


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize(("rows", "kind"), [(300, "exact"), (1500, "hnsw"), (4000, "ivf")])
def test_search_kind_is_chosen_by_size_and_candidates_are_rescored_exactly(rows: int, kind: str) -> None:
    config = IndexConfig(exact_max=500, ivf_min=3000)
    vectors = _unit(rows, 32, seed=rows)
    search = VectorSearch.build(vectors, config)
    assert search.kind == kind
    assert search.vectors is vectors  # the one copy, not a second one
    queries = _unit(40, 32, seed=1)
    sims, found = search.search(queries, 5)
    batch_again = search.search(queries, 5)
    one_by_one = [search.search(queries[i : i + 1], 5) for i in range(len(queries))]
    assert np.array_equal(batch_again[1], found)
    assert all(np.array_equal(single[1][0], found[i]) for i, single in enumerate(one_by_one))
    hits = 0
    for i, query in enumerate(queries):
        everything = exact_similarities(vectors, np.arange(rows), query)
        truth = np.lexsort((np.arange(rows), -everything))[:5]
        hits += len(set(truth) & set(found[i]))
        # returned similarities are the exact ones, best first
        assert np.array_equal(sims[i], everything[found[i]])
        assert list(sims[i]) == sorted(sims[i], reverse=True)
    assert hits / (5 * len(queries)) >= (1.0 if kind == "exact" else 0.9)


def test_index_is_cached_by_graph_hash_under_the_cache_root_and_a_read_only_graph_folder_is_untouched(
    tmp_path, monkeypatch, graphrag_graph
) -> None:
    from graph.io import save_graph

    _, graph = graphrag_graph
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "graph"
    save_graph(graph, folder)
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}
    for path in [folder, *before]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        embedder = HashingEmbedder(32)
        first = get_retriever("hybrid", folder, embedder=embedder)
        again = get_retriever("hybrid", folder, embedder=embedder)
    finally:
        for path in [folder, *before]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    after = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}
    assert after == before  # nothing written, nothing changed in the user's folder
    cached = default_index_dir(graph.content_hash(), embedder.model_id)
    assert cached.parent == tmp_path / "cache" / "index"
    assert cached.name.startswith(graph.content_hash()[:16])
    assert (cached / "meta.json").is_file() and (cached / "edge_vectors.npy").is_file()
    assert not first.index.loaded_from_disk and again.index.loaded_from_disk
    query = RetrievalQuery(question="How is the glowing crowd chorus connected to the rain?")
    assert first.retrieve(query, k=5) == again.retrieve(query, k=5)


def test_one_float32_copy_of_the_vectors(graphrag_graph, tmp_path) -> None:
    _, graph = graphrag_graph
    retriever = get_retriever("hybrid", graph, embedder=HashingEmbedder(32), index_dir=False)
    index = retriever.index
    assert index.edge_vectors.dtype == np.float32 and index.node_vectors.dtype == np.float32
    edge_floats = index.edge_vectors.size
    big = [
        name
        for name, value in vars(retriever).items()
        if isinstance(value, np.ndarray) and value.size >= edge_floats and value is not index.edge_vectors
    ]
    assert big == []  # no float64 or FAISS-flat second copy kept by the retriever
    stats = index.stats()
    assert stats["vector_bytes"] == index.node_vectors.nbytes + index.edge_vectors.nbytes
    assert stats["edge_search"] == "exact" and stats["ann_bytes"] == 0


def test_hnsw_candidates_give_the_exact_scan_results(graphrag_graph) -> None:
    synth, graph = graphrag_graph
    embedder = HashingEmbedder(48)
    view = GraphView.of(graph)
    exact = get_retriever("hybrid", view, embedder=embedder, index_dir=False)
    ann = get_retriever(
        "hybrid", view, embedder=embedder, index_dir=False, index_config=IndexConfig(exact_max=0)
    )
    assert ann.index.stats()["edge_search"] == "hnsw" and ann.index.stats()["ann_bytes"] > 0
    queries = [RetrievalQuery(question=q) for q, _ in synth.questions(graph, 40, seed=2)]
    batch = ann.retrieve_many(queries, k=10)
    assert batch == exact.retrieve_many(queries, k=10)
    assert batch == [ann.retrieve(q, k=10) for q in queries]
    assert sum(bool(r.facts) for r in batch) == len(queries)


def test_saved_ann_index_is_reloaded(graphrag_graph, tmp_path) -> None:
    synth, graph = graphrag_graph
    embedder = HashingEmbedder(16)
    view = GraphView.of(graph)
    config = IndexConfig(exact_max=100, ivf_min=1000)  # 400 nodes: hnsw, ~1100 edges: ivf
    built = GraphIndex.build(view, embedder, config)
    built.save(tmp_path / "idx")
    loaded = GraphIndex.load(tmp_path / "idx", view, embedder.model_id, config)
    assert loaded is not None and loaded.loaded_from_disk
    assert (loaded.node_search.kind, loaded.edge_search.kind) == ("hnsw", "ivf")
    assert GraphIndex.load(tmp_path / "idx", view, embedder.model_id, IndexConfig()) is None
    queries = embedder.encode([q for q, _ in synth.questions(graph, 10, seed=4)])
    for a, b in ((built.node_search, loaded.node_search), (built.edge_search, loaded.edge_search)):
        assert np.array_equal(a.search(queries, 6)[1], b.search(queries, 6)[1])
    assert os.listdir(tmp_path / "idx")  # files written where asked


def test_candidates_skipped_by_the_similarity_bound_never_change_the_top_k(
    graphrag_graph, monkeypatch
) -> None:
    import retrieval.hybrid as hybrid_module

    synth, graph = graphrag_graph
    embedder = HashingEmbedder(48)
    view = GraphView.of(graph)
    retriever = get_retriever("hybrid", view, embedder=embedder, index_dir=False)
    queries = [RetrievalQuery(question=q) for q, _ in synth.questions(graph, 30, seed=9)]
    queries.append(RetrievalQuery(question="What does the hub entity do?"))
    bounded = {k: retriever.retrieve_many(queries, k=k) for k in (1, 5, 10)}
    monkeypatch.setattr(hybrid_module, "PROBE_FACTOR", 10**9)  # every candidate scored exactly
    for k, results in bounded.items():
        assert results == retriever.retrieve_many(queries, k=k)
