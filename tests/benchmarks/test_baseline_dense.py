"""benchmarks/baseline: the pre-issue-17 hybrid that bench_retrieval_scale measures against keeps only
the dense scoring the library no longer has, over the library's own pieces (exact ``VectorSearch``
scans, ``retrieval.template``'s config, events, strength, top-k and budget). Checked: it answers a
GraphRAG-shaped graph's questions, the same facts one at a time as batched, finds true edges, and the
folder holds no copy of library code (the old index and its persistence are gone)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from retrieval import RetrievalQuery
from retrieval.ann import IndexConfig, VectorSearch
from retrieval.embed import HashingEmbedder
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str, path: Path):
    """A benchmark module by file (the benchmarks folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def test_the_dense_baseline_answers_with_the_library_pieces(tmp_path: Path) -> None:
    synth = _load("graphrag_synth", BENCHMARKS / "graphrag_synth.py")
    dense = _load("baseline_hybrid_v1", BENCHMARKS / "baseline" / "hybrid_v1.py")
    synth.write(synth.generate(300, seed=0), tmp_path / "g")
    graph = synth.load_graph(tmp_path / "g")
    view = GraphView.of(graph)
    embedder = HashingEmbedder(384)
    built = GraphIndex.build(view, embedder)
    index = GraphIndex(
        content_hash=view.content_hash,
        model_id=embedder.model_id,
        node_search=VectorSearch(built.node_vectors, "exact", None, IndexConfig()),
        edge_search=VectorSearch(built.edge_vectors, "exact", None, IndexConfig()),
    )
    retriever = dense.HybridRetriever(view, embedder=embedder, index=index)
    pairs = synth.questions(graph, 60, seed=1)
    queries = [RetrievalQuery(question=q) for q, _ in pairs]
    one_by_one = [retriever.retrieve(q, k=10) for q in queries]
    assert retriever.retrieve_many(queries, k=10) == one_by_one
    assert all(len(r.facts) == 10 for r in one_by_one)
    found = sum(truth in r.fact_ids for r, (_, truth) in zip(one_by_one, pairs, strict=True))
    assert found >= 0.9 * len(pairs), found  # each question names both ends of its true edge (60 of 60 seen)


def test_the_baseline_folder_copies_no_library_code() -> None:
    files = sorted(p.name for p in (BENCHMARKS / "baseline").glob("*.py"))
    assert "index_v1.py" not in files  # the old index and persistence: retrieval.index / retrieval.ann
    tree = ast.parse((BENCHMARKS / "baseline" / "hybrid_v1.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert {
        "edge_strength",
        "events_from_deltas",
        "top_candidates",
        "within_budget",
        "GraphIndex",
    } <= imported
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert not defined & {"_search", "_flat", "save", "load", "load_or_build_index", "_stored64"}
