"""``neo4j-hybrid`` on the real server: the hybrid algorithm run in Cypher over pushed vectors returns the
same facts in the same order as the in-memory hybrid, on the built sample graph (packaged MiniLM) and on
a 30k-entity GraphRAG-shaped graph; the split guard is evaluated in the query."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from graph import BuildConfig, build_graph
from graph.neo4j.push import push_graph
from retrieval import RetrievalQuery, build_query, get_retriever, graph_thresholds
from retrieval.embed import HashingEmbedder
from retrieval.leakage import SplitLeakageError
from retrieval.neo4j_hybrid import Neo4jRetrievalError, push_embeddings

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "data" / "sample"

pytestmark = pytest.mark.neo4j


def _synth():
    if "graphrag_synth" in sys.modules:
        return sys.modules["graphrag_synth"]
    spec = importlib.util.spec_from_file_location("graphrag_synth", REPO / "benchmarks" / "graphrag_synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["graphrag_synth"] = module
    spec.loader.exec_module(module)
    return module


def _facts(results):
    return [[(f.id, f.text, f.score, f.stats) for f in r.facts] for r in results]


@pytest.fixture(scope="module")
def sample():
    from karma.data import load_dataset

    dataset = load_dataset(SAMPLE)
    videos = sorted({t.video_id for t in dataset.transitions})
    graph = build_graph(
        dataset.transitions,
        dataset.features,
        BuildConfig(min_support=1, min_lift=0.0, exclude_videos=videos[:1]),
    )
    return dataset, graph, videos


@pytest.mark.slow
def test_neo4j_hybrid_equals_in_memory_hybrid_on_the_sample_graph(
    clean_db, neo4j_settings, sample, tmp_path, monkeypatch
):
    from retrieval.embed import Embedder

    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    dataset, graph, _ = sample
    embedder = Embedder()
    push_graph(clean_db, graph, neo4j_settings.database)
    report = push_embeddings(clean_db, graph, embedder, neo4j_settings.database)
    assert report.nodes == len(graph.nodes) and report.relationships == len(graph.edges)
    thresholds = graph_thresholds(graph.build_config)
    queries = [
        build_query(t, q, dataset.features.get(t.video_id), thresholds)
        for t in dataset.transitions
        for q in t.questions
    ]
    queries.append(RetrievalQuery(question="Why does the music get louder when the picture brightens?"))
    memory = get_retriever("hybrid", graph, embedder=embedder).retrieve_many(queries, k=8)
    neo = get_retriever("neo4j-hybrid", graph, embedder=embedder, driver=clean_db, settings=neo4j_settings)
    in_db = neo.retrieve_many(queries, k=8)
    assert _facts(in_db) == _facts(memory)
    assert all(r.graph_hash == graph.content_hash() for r in in_db)
    assert sum(len(r.facts) for r in in_db) >= 4 * len(queries)  # not a parity of empty lists
    assert neo.retrieve(queries[0], k=8).facts == in_db[0].facts
    # the hypothetical clause of counterfactual questions is searched in the database too
    assert any(q.question_type == "counterfactual" for q in queries)


def test_neo4j_hybrid_split_guard_runs_in_the_query(clean_db, neo4j_settings, sample, tmp_path, monkeypatch):
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    _, graph, videos = sample
    embedder = HashingEmbedder(32)
    push_graph(clean_db, graph, neo4j_settings.database)
    push_embeddings(clean_db, graph, embedder, neo4j_settings.database)
    guarded = get_retriever(
        "neo4j-hybrid", None, embedder=embedder, driver=clean_db, settings=neo4j_settings, strict_split=True
    )
    held_out = RetrievalQuery(question="Why is the music louder?", video_id=videos[0])
    assert guarded.retrieve(held_out, k=3).graph_hash == graph.content_hash()
    with pytest.raises(SplitLeakageError, match="was not excluded"):
        guarded.retrieve(RetrievalQuery(question="Why?", video_id=videos[1]), k=3)
    with pytest.raises(SplitLeakageError, match="names no video_id"):
        guarded.retrieve(RetrievalQuery(question="Why?"), k=3)


def test_neo4j_hybrid_refuses_missing_or_stale_embeddings(
    clean_db, neo4j_settings, sample, graph_factory, tmp_path, monkeypatch
):
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    _, graph, _ = sample
    push_graph(clean_db, graph, neo4j_settings.database)
    with pytest.raises(Neo4jRetrievalError, match="no embeddings"):
        get_retriever("neo4j-hybrid", None, embedder=HashingEmbedder(16), driver=clean_db)
    push_embeddings(clean_db, graph, HashingEmbedder(16), neo4j_settings.database)
    with pytest.raises(Neo4jRetrievalError, match="model"):
        get_retriever("neo4j-hybrid", None, embedder=HashingEmbedder(24), driver=clean_db)
    other = graph_factory(seed=3)
    with pytest.raises(Neo4jRetrievalError, match="not"):
        get_retriever("neo4j-hybrid", other, embedder=HashingEmbedder(16), driver=clean_db)
    push_graph(clean_db, other, neo4j_settings.database)  # a new graph: the old vectors are stale
    with pytest.raises(Neo4jRetrievalError, match="no embeddings"):
        get_retriever("neo4j-hybrid", other, embedder=HashingEmbedder(16), driver=clean_db)


@pytest.mark.slow
def test_neo4j_hybrid_equals_in_memory_hybrid_on_a_30k_entity_graphrag_graph(
    clean_db, neo4j_settings, tmp_path, monkeypatch
):
    """30,000 entities, ~90,000 relationships. The vectors are lexical (HashingEmbedder, 64 dims): the
    model would need tens of minutes to embed 120k texts on this machine; the parity under test is the
    retrieval algorithm's, which takes any embedder. ANN paths (HNSW in FAISS, the
    native index in Neo4j) would each miss some true neighbours, so both search exactly here."""
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    synth = _synth()
    folder = synth.write(synth.generate(30_000, seed=0), tmp_path / "graphrag")
    graph = synth.load_graph(folder)
    assert len(graph.nodes) == 30_000 and len(graph.edges) > 85_000
    embedder = HashingEmbedder(64)
    push_graph(clean_db, graph, neo4j_settings.database)
    push_embeddings(clean_db, graph, embedder, neo4j_settings.database)
    from retrieval.ann import IndexConfig

    # exact seeds on both sides (in-memory exact scan; Neo4j full scan + exact rescoring): two different
    # ANN structures cannot promise the same neighbours, the algorithm's parity is what is tested here
    memory = get_retriever(
        "hybrid", graph, embedder=embedder, index_dir=False, index_config=IndexConfig(exact_max=10**9)
    )
    queries = [RetrievalQuery(question=q) for q, _ in synth.questions(graph, 25, seed=7)]
    expected = memory.retrieve_many(queries, k=10)
    in_db = get_retriever(
        "neo4j-hybrid", graph, embedder=embedder, driver=clean_db, search="exact"
    ).retrieve_many(queries, k=10)
    assert _facts(in_db) == _facts(expected)
    assert all(len(r.facts) == 10 for r in in_db)
