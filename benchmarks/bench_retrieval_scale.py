"""Retrieval on GraphRAG-size graphs: today's hybrid build vs the scalable one, and both vs the keyword
scan (and, with ``--neo4j``, the ``neo4j-hybrid`` retriever), side by side in one run.

Graphs: ``graphrag_synth`` tables (UUID ids, upper-case LLM-style titles, descriptions, ~3
relationships per entity, heavy-tailed degrees) at each ``--sizes`` entity count, read through karma's
GraphRAG importer. Questions name both ends of one relationship; recall@10 = that edge is returned.

Per size, in one run:

* build: embedding dominates it. The model's throughput is measured on the same sample of the graph's
  texts with the baseline's passes (``benchmarks/baseline``: karma before issue 17, its dense scoring
  over the library's pieces: 4-row passes per exact token count) and the new ones (length-sorted 64-row batches), alternated, best of
  ``--rounds``; both builds are then extrapolated to all texts (said so in the output), plus the
  search structures each builds, measured on the full graph (FAISS flat vs exact scan / HNSW);
* memory per edge beyond the raw float32 vectors: search structures + the retriever's arrays (the
  baseline adds a FAISS flat copy and a float64 copy of every vector);
* latency per question with the question vector given (what the retriever costs), streaming, for the
  keyword scan, the hybrid and the baseline hybrid; the hybrid batched; the model's cost of embedding
  one question, measured separately, so the cold ratio is printed too;
* recall@10 on the same questions; with ``--neo4j`` the neo4j-hybrid latency and its parity.

Routes (issue 27, item 5), per size in the same run: the static route (``retrieval.static_embed``: a
model2vec embedding distilled once from the packaged MiniLM) builds the whole index, measured, and
answers the same questions; against it, side by side, the exact MiniLM route (the whole index built and
measured up to ``--exact-max`` entities, above that its build extrapolated from the measured throughput
and its recall not measured) and the keyword scan: build seconds, recall@10 of the true edges on the
same questions, the static route's top-10 overlap with the exact route's, and the cold time of a first
answer on the static route (import + index + one question).

The full graphs' vectors (for latency, memory and recall) are 384-dim ``HashingEmbedder`` vectors by
default (``--vectors model`` embeds every text with the model: hours at 100k on 2 shared cores); the
model's own cost enters through the measured throughput and question-embedding latency.

    .venv/bin/python benchmarks/bench_retrieval_scale.py --sizes 3000,30000 [--neo4j] [--exact-max 3000]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

import graphrag_synth  # benchmarks/graphrag_synth.py, beside this script
from machine import describe_machine

BUILD_GOAL = 10.0
LATENCY_GOAL = 20.0
MEMORY_GOAL = 2048
MODEL_LOAD_SECONDS = 0.0
"""Seconds the MiniLM model took to load at the start of the run (part of a cold static+rerank answer)."""
IMPORT_SECONDS: dict[int, float] = {}
"""Seconds the GraphRAG import of each graph took (by id), for the cold static-route time."""


def _pct(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], statistics.fmean(ordered)


def _graph(work: Path, entities: int):
    folder = work / f"graphrag_{entities}"
    if not (folder / "relationships.parquet").is_file():
        started = time.perf_counter()
        graphrag_synth.write(graphrag_synth.generate(entities, seed=0), folder)
        print(f"  generated tables in {time.perf_counter() - started:.1f} s -> {folder}")
    started = time.perf_counter()
    graph = graphrag_synth.load_graph(folder)
    IMPORT_SECONDS[id(graph)] = time.perf_counter() - started
    print(
        f"  imported {len(graph.nodes)} entities, {len(graph.edges)} relationships "
        f"in {IMPORT_SECONDS[id(graph)]:.1f} s"
    )
    return graph


def _sample(texts: list[str], n: int) -> list[str]:
    import random

    return random.Random(0).sample(texts, min(n, len(texts)))


def _recall(results, truth: list[str]) -> float:
    hits = [t in r.fact_ids for r, t in zip(results, truth, strict=True)]
    return sum(hits) / max(len(hits), 1)


def _stream(retriever, queries, k: int) -> tuple[list[float], list]:
    latencies, results = [], []
    for query in queries:
        started = time.perf_counter()
        results.append(retriever.retrieve(query, k=k))
        latencies.append(time.perf_counter() - started)
    return latencies, results


def _best_rate(fn, texts: list[str], rounds: int) -> float:
    """Texts per second, best of ``rounds`` (the machine is shared: the best run is the least disturbed)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def embedding_rates(model, texts: list[str], sample: int, rounds: int) -> tuple[float, float, list[str]]:
    """(baseline, new) texts/s of the model on the same sample of the graph's texts, alternated."""
    from baseline.embed_v1 import encode_v1

    picked = _sample(texts, sample)
    model.encode(["warm-up"])
    old = new = 0.0
    for _ in range(rounds):
        old = max(old, _best_rate(lambda t: encode_v1(model, t), picked, 1))
        new = max(new, _best_rate(model.encode_corpus, picked, 1))
    return old, new, picked


def encoder_flops(model, texts: list[str]) -> tuple[float, float]:
    """(FLOPs to encode ``texts`` once, mean tokens a text): every token passes each layer's four
    attention projections and its two feed-forward matrices (2 FLOPs a weight) plus the attention
    scores and weighted sum (4 x tokens x hidden a layer); embedding lookups, norms and pooling are
    left out, so this is a lower bound on the work."""
    st = model._load()
    config = st[0].auto_model.config
    layers, hidden, inner = config.num_hidden_layers, config.hidden_size, config.intermediate_size
    weights = 4 * hidden * hidden + 2 * hidden * inner
    limit = getattr(st, "max_seq_length", None) or 512
    lengths = [len(ids) for ids in st.tokenizer(texts, truncation=True, max_length=limit)["input_ids"]]
    flops = sum(layers * (2 * weights * n + 4 * hidden * n * n) for n in lengths)
    return float(flops), statistics.fmean(lengths)


def gemm_peak(model, threads: int, rounds: int = 5) -> float:
    """FLOP/s of one float32 matrix product the size of a 64-text batch's feed-forward layer, on
    ``threads`` threads, best of ``rounds``: what this machine gives the model's main operation."""
    import torch

    config = model._load()[0].auto_model.config
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(64 * 48, config.hidden_size, generator=generator)
    b = torch.randn(config.hidden_size, config.intermediate_size, generator=generator)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            for _ in range(10):
                torch.mm(a, b)
            best = min(best, (time.perf_counter() - started) / 10)
    finally:
        torch.set_num_threads(previous)
    return 2.0 * a.shape[0] * a.shape[1] * b.shape[1] / best


def run_size(entities: int, args, model, vectors_embedder) -> dict[str, float]:
    import faiss
    import numpy as np

    from retrieval import RetrievalQuery, get_retriever
    from retrieval.graph_view import GraphView
    from retrieval.hybrid import HybridRetriever
    from retrieval.index import GraphIndex

    print(f"\n== {entities} entities ({describe_machine()}) ==")
    graph = _graph(args.work, entities)
    view = GraphView.of(graph)
    texts = view.node_texts() + view.edge_texts()
    n_edges = len(view.edge_ids)
    print(f"  texts to embed: {len(texts)} ({len(view.node_ids)} nodes + {n_edges} edges)")

    if args.routes_only:
        return _routes_only(graph, view, entities, texts, args, model)

    # -- build ---------------------------------------------------------------------------------------------
    old_tps, new_tps, picked = embedding_rates(model, texts, args.sample, args.rounds)
    n_sample = len(picked)
    print(
        f"  {model.model_id} on the same {n_sample} of these texts, alternated, best of {args.rounds}: "
        f"baseline {old_tps:.1f} texts/s (4-row passes per token count), new {new_tps:.1f} texts/s "
        f"(length-sorted {64}-row batches)"
    )
    flops, mean_tokens = encoder_flops(model, picked)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    peak_one, peak_all = gemm_peak(model, model.threads), gemm_peak(model, cores)
    per_text = flops / n_sample
    ceiling = peak_all / (old_tps * per_text)
    print(
        f"  compute bound: {mean_tokens:.1f} tokens a text, >= {per_text / 1e6:.0f} MFLOP a text; baseline "
        f"{old_tps * per_text / 1e9:.1f} GFLOP/s, new {new_tps * per_text / 1e9:.1f} GFLOP/s (both on "
        f"{model.threads} thread(s)); float32 GEMM here {peak_one / 1e9:.1f} GFLOP/s on {model.threads}, "
        f"{peak_all / 1e9:.1f} on all {cores} cores -> even at the all-core GEMM peak with no other cost, "
        f"a build of these vectors is at most {ceiling:.1f}x faster than the baseline"
    )
    started = time.perf_counter()
    index = GraphIndex.build(view, vectors_embedder)
    stats = index.stats()
    ann_s = float(stats["build_seconds"]) - float(stats["embed_seconds"])
    started = time.perf_counter()
    for table in (index.node_vectors, index.edge_vectors):
        flat = faiss.IndexFlatIP(table.shape[1])
        flat.add(np.ascontiguousarray(table, dtype=np.float32))
        del flat
    flat_s = time.perf_counter() - started
    base_build = len(texts) / old_tps + flat_s
    new_build = len(texts) / new_tps + ann_s
    print(
        f"  build, baseline: {base_build:.0f} s = {len(texts)} texts at {old_tps:.1f}/s (extrapolated) "
        f"+ FAISS flat {flat_s:.1f} s (measured)"
    )
    print(
        f"  build, new:      {new_build:.0f} s = {len(texts)} texts at {new_tps:.1f}/s (extrapolated) "
        f"+ search structures {ann_s:.1f} s (measured: nodes {stats['node_search']}, edges {stats['edge_search']})"
    )
    build_ratio = base_build / new_build
    print(f"  build speed-up: {build_ratio:.2f}x (goal >= {BUILD_GOAL:.0f}x)")

    # -- memory ------------------------------------------------------------------------------------------
    hybrid = HybridRetriever(view, embedder=vectors_embedder, index=index)
    dim = int(stats["dim"])
    arrays = hybrid.memory_bytes() / max(n_edges, 1)
    new_extra = int(stats["ann_bytes"]) / max(n_edges, 1) + arrays
    base_extra = 4 * dim + 8 * dim + arrays  # FAISS flat copy + float64 copy + the same arrays
    print(
        f"  memory per edge beyond the raw vectors ({4 * dim} B at {dim} dims): baseline {base_extra:.0f} B "
        f"(FAISS flat copy {4 * dim} + float64 copy {8 * dim} + arrays {arrays:.0f}; its queries also make "
        f"batch x edges float64 matrices), new {new_extra:.0f} B (search structures + arrays; goal <= {MEMORY_GOAL} B)"
    )

    # -- latency and recall ------------------------------------------------------------------------------
    pairs = graphrag_synth.questions(graph, args.questions, seed=1)
    queries = [RetrievalQuery(question=q) for q, _ in pairs]
    truth = [t for _, t in pairs]
    streamed = queries[: args.keyword_questions]
    keyword = get_retriever("keyword", view)
    kw_lat, kw_res = _stream(keyword, streamed, args.k)
    vectors_embedder.encode([q.question for q in queries])  # question vectors cached: retrieval alone
    lat, res = _stream(hybrid, streamed, args.k)
    started = time.perf_counter()
    batch_res = hybrid.retrieve_many(queries, k=args.k)
    batch_s = (time.perf_counter() - started) / len(queries)
    same = batch_res[: len(res)] == res
    embed_lat = []
    for query in streamed[: args.embed_questions]:
        t0 = time.perf_counter()
        model.encode([query.question + " (timing)"])
        embed_lat.append(time.perf_counter() - t0)
    ep50, emean = _pct(embed_lat)
    kp50, kmean = _pct(kw_lat)
    hp50, hmean = _pct(lat)
    print(f"  {'per question':<30} {'p50 ms':>9} {'mean ms':>9}   recall@{args.k}")
    print(
        f"  {'keyword scan':<30} {kp50 * 1e3:>9.3f} {kmean * 1e3:>9.3f}   {_recall(kw_res, truth[: len(kw_res)]):.3f}"
    )
    print(
        f"  {'hybrid (question vector given)':<30} {hp50 * 1e3:>9.3f} {hmean * 1e3:>9.3f}   "
        f"{_recall(res, truth[: len(res)]):.3f}"
    )
    print(
        f"  {'hybrid batched, per question':<30} {'':>9} {batch_s * 1e3:>9.3f}   {_recall(batch_res, truth):.3f}"
    )
    print(f"  {'+ embedding one question':<30} {ep50 * 1e3:>9.3f} {emean * 1e3:>9.3f}   ({model.model_id})")
    out = {
        "build_ratio": build_ratio,
        "build_ceiling": ceiling,
        "bytes_per_edge": new_extra,
        "latency_ratio": kmean / hmean,
        "batched_ratio": kmean / batch_s,
        "cold_ratio": kmean / (hmean + emean),
    }
    if entities <= args.baseline_max:
        from baseline.hybrid_v1 import HybridRetriever as BaselineHybrid

        from retrieval.ann import IndexConfig, VectorSearch

        # The old build searched its seeds by exact scans over the same vectors (FAISS flat indexes then).
        old_index = GraphIndex(
            content_hash=view.content_hash,
            model_id=vectors_embedder.model_id,
            node_search=VectorSearch(index.node_vectors, "exact", None, IndexConfig()),
            edge_search=VectorSearch(index.edge_vectors, "exact", None, IndexConfig()),
        )
        baseline = BaselineHybrid(view, embedder=vectors_embedder, index=old_index)
        base_lat, base_res = _stream(baseline, streamed, args.k)
        bp50, bmean = _pct(base_lat)
        print(
            f"  {'baseline hybrid (vector given)':<30} {bp50 * 1e3:>9.3f} {bmean * 1e3:>9.3f}   "
            f"{_recall(base_res, truth[: len(base_res)]):.3f}"
        )
        out["baseline_latency_ratio"] = bmean / hmean
        del baseline, old_index
        gc.collect()
    print(
        f"  keyword / hybrid: {out['latency_ratio']:.1f}x with the question vector given, "
        f"{out['batched_ratio']:.1f}x batched, {out['cold_ratio']:.1f}x including one {model.model_id} question "
        f"embedding (goal >= {LATENCY_GOAL:.0f}x at 30k and 100k); batch == one at a time: {same}"
    )
    if args.neo4j and entities <= args.neo4j_max:
        out.update(_neo4j(graph, vectors_embedder, streamed[: args.neo4j_questions], res, args, kmean))
    del hybrid, index
    gc.collect()
    out.update(_routes(graph, view, entities, texts, streamed, truth, kw_res, kmean, new_tps, args))
    return out


def _routes_only(graph, view, entities, texts, args, model) -> dict[str, float]:
    """``--routes-only``: the keyword scan and the embedding routes, without the build, memory and
    baseline comparisons above (the MiniLM throughput for an extrapolated exact build is measured on a
    ``--sample`` of the graph's texts, best of ``--rounds``)."""
    from retrieval import RetrievalQuery, get_retriever

    picked = _sample(texts, args.sample)
    tps = max(_best_rate(model.encode_corpus, picked, 1) for _ in range(args.rounds))
    print(
        f"  {model.model_id}: {tps:.1f} texts/s on {len(picked)} of these texts (64-row batches), best of {args.rounds}"
    )
    pairs = graphrag_synth.questions(graph, args.questions, seed=1)
    queries = [RetrievalQuery(question=q) for q, _ in pairs]
    truth = [t for _, t in pairs]
    streamed = queries[: args.keyword_questions]
    kw_lat, kw_res = _stream(get_retriever("keyword", view), streamed, args.k)
    return _routes(graph, view, entities, texts, streamed, truth, kw_res, statistics.fmean(kw_lat), tps, args)


def _overlap(results, reference) -> float:
    """Mean share of the reference's top-k facts that ``results`` also returns."""
    shares = [
        len(set(a.fact_ids) & set(b.fact_ids)) / len(b.fact_ids)
        for a, b in zip(results, reference, strict=True)
        if b.fact_ids
    ]
    return statistics.fmean(shares) if shares else 0.0


class _StoredVectors:
    """The exact MiniLM index's stored vectors standing in for the query-time MiniLM vectors of the same
    texts (rerank embedder of the overlap curve: every pool size on every question without embedding
    the pools again); questions and other texts go to the model. Same model, same texts: the stored
    corpus vectors differ from per-text ones only in float32's last bits (``CORPUS_TOLERANCE``)."""

    route = "exact"
    disk_cache = None

    def __init__(self, view, index, model) -> None:
        import numpy as np

        self._model = model
        self.model_id = model.model_id
        self.table = {}
        for texts, vectors in (
            (view.node_texts(), index.node_vectors),
            (view.edge_texts(), index.edge_vectors),
        ):
            self.table.update(zip(texts, np.asarray(vectors), strict=True))
        self.embedded = 0

    @property
    def dim(self) -> int:
        return self._model.dim

    def encode(self, texts):
        import numpy as np

        self.embedded += len(texts)
        missing = [text for text in dict.fromkeys(texts) if text not in self.table]
        if missing:
            self.table.update(zip(missing, self._model.encode(missing), strict=True))
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def _forget_exact_vectors(model) -> None:
    """Empty the process's in-memory MiniLM text cache (a cold query-time rerank)."""
    from retrieval import embed

    embed._CACHES.get(model.model_ref, {}).clear()


def _exact_vectors_held(model) -> int:
    """Texts whose MiniLM vectors the process holds in memory (what static+rerank has embedded)."""
    from retrieval import embed

    return len(embed._CACHES.get(model.model_ref, {}))


def _exact_index(view, entities, args):
    """The exact MiniLM route's index: built here (measured) up to ``--exact-max`` entities, read back
    from ``--exact-cache`` when stored there by an earlier run (its build time is the one measured when
    it was built, from its meta.json); None above ``--exact-max``."""
    from retrieval.embed import Embedder
    from retrieval.index import GraphIndex, load_or_build_index

    if entities > args.exact_max:
        return None, None
    embedder = Embedder(route="exact")
    if args.exact_cache is not None:
        index = load_or_build_index(view, embedder, args.exact_cache / f"exact_{entities}")
    else:
        index = GraphIndex.build(view, embedder)
    return index, embedder


def _routes(
    graph, view, entities, texts, queries, truth, kw_res, kw_mean, exact_tps, args
) -> dict[str, float]:
    """Static route, static+rerank and the exact MiniLM route vs the keyword scan: build time, cold
    time, per-question latency, recall@k of the true edges and top-k overlap with the exact route."""
    from retrieval.embed import Embedder
    from retrieval.hybrid import HybridConfig, HybridRetriever
    from retrieval.index import GraphIndex

    truth = truth[: len(queries)]
    imported = IMPORT_SECONDS.get(id(graph), 0.0)
    print(
        f"  -- embedding routes ({len(texts)} texts; {len(queries)} questions, recall@{args.k} of the true edge) --"
    )
    static_embedder = Embedder(route="static")
    static_index = GraphIndex.build(view, static_embedder)
    static_build = static_index.build_seconds
    static = HybridRetriever(
        view, embedder=static_embedder, index=static_index, config=HybridConfig(rerank_pool=0)
    )
    started = time.perf_counter()
    static.retrieve(queries[0], k=args.k)  # first answer: the question's static embedding + retrieval
    first_answer = time.perf_counter() - started
    static_lat, _ = _stream(static, queries[: args.rerank_questions], args.k)
    static_res = static.retrieve_many(queries, k=args.k)
    static_recall = _recall(static_res, truth)
    s = static_index.stats()
    out: dict[str, float] = {"static_build_s": static_build, "static_recall": static_recall}
    exact_index, exact_embedder = _exact_index(view, entities, args)
    exact_res = None
    if exact_index is not None:
        exact = HybridRetriever(view, embedder=exact_embedder, index=exact_index)
        exact_res = exact.retrieve_many(queries, k=args.k)
        exact_recall = _recall(exact_res, truth)
        exact_build = exact_index.build_seconds
        how = "measured earlier, read back" if exact_index.loaded_from_disk else "measured"
        exact_row = (f"{exact_build:.1f} ({how})", exact_recall)
    else:
        exact_build = len(texts) / exact_tps + (static_build - float(s["embed_seconds"]))
        exact_recall = float("nan")
        exact_row = (f"{exact_build:.0f} (extrapolated: {exact_tps:.1f} texts/s)", float("nan"))

    def overlap_of(results) -> float:
        return float("nan") if exact_res is None else _overlap(results, exact_res[: len(results)])

    def shown(value: float) -> str:
        return "not run" if value != value else f"{value:.3f}"

    static_cold = imported + static_build + first_answer
    static_built = f"{static_build:.1f} (embed {float(s['embed_seconds']):.1f}, measured)"
    print(
        f"  {'route':<26} {'index build s':>38} {'cold s':>7} {'ms/question':>12} {'recall':>7} {'overlap':>8}"
    )
    print(
        f"  {'static (model2vec, 256d)':<26} {static_built:>38} "
        f"{static_cold:>7.1f} {statistics.fmean(static_lat) * 1e3:>12.1f} {static_recall:>7.3f} "
        f"{shown(overlap_of(static_res)):>8}"
    )
    out["cold_s"] = static_cold
    out["static_overlap"] = overlap_of(static_res)
    # static+rerank, per pool: the first answer from a cold start (no MiniLM vector in memory; the
    # model's load, measured at the start of the run, is added), then questions one at a time (the
    # in-memory text cache warms across them, as in a session), on the real query-time MiniLM vectors.
    sample = queries[: args.rerank_questions]
    from retrieval.hybrid import default_rerank_pool

    for pool in [default_rerank_pool(len(texts)) if p is None else p for p in args.pools]:
        _forget_exact_vectors(static_embedder)
        reranked = HybridRetriever(
            view, embedder=static_embedder, index=static_index, config=HybridConfig(rerank_pool=pool)
        )
        started = time.perf_counter()
        first = reranked.retrieve(sample[0], k=args.k)
        rerank_first = time.perf_counter() - started
        first_texts = _exact_vectors_held(static_embedder)
        lat, res = _stream(reranked, sample[1:], args.k)
        res = [first, *res]
        texts_each = (_exact_vectors_held(static_embedder) - first_texts) / max(len(sample) - 1, 1)
        cold = imported + static_build + MODEL_LOAD_SECONDS + rerank_first
        overlap = overlap_of(res)
        print(
            f"  {reranked.route:<26} {'(the static index)':>38} {cold:>7.1f} {statistics.fmean(lat) * 1e3:>12.1f} "
            f"{_recall(res, truth[: len(res)]):>7.3f} {shown(overlap):>8}   (first answer {rerank_first:.1f} s "
            f"embedding {first_texts} texts; then {texts_each:.0f} new texts a question; {len(res)} questions, "
            "real MiniLM vectors at query time)"
        )
        out[f"rerank{pool}_cold_s"] = cold
        out[f"rerank{pool}_ms"] = statistics.fmean(lat) * 1e3
        if overlap == overlap:
            out[f"rerank{pool}_overlap"] = overlap
        del reranked
        gc.collect()
    print(f"  {'exact MiniLM (384d)':<26} {exact_row[0]:>38} {'':>7} {'':>12} {shown(exact_row[1]):>7}")
    print(
        f"  {'keyword scan':<26} {'0 (no index)':>38} {'':>7} {kw_mean * 1e3:>12.1f} {_recall(kw_res, truth[: len(kw_res)]):>7.3f}"
    )
    print(
        f"  (cold = import {imported:.1f} s + index build + first answer; static+rerank adds the MiniLM load, "
        f"{MODEL_LOAD_SECONDS:.1f} s at the start of this run; the distilled static model comes from the cache: "
        f"distilling it once took {static_embedder._static().distill_seconds:.1f} s in this process)"
    )
    if exact_res is not None and args.curve:
        # overlap vs pool on every question, the exact index's stored MiniLM vectors standing in for the
        # query-time ones (see _StoredVectors): what the pool buys, at no embedding cost here.
        print(
            f"  overlap with the exact route's top-{args.k} vs pool, all {len(queries)} questions (stored MiniLM vectors):"
        )
        stand_in = _StoredVectors(view, exact_index, exact_embedder)
        for pool in args.curve:
            stand_in.embedded = 0
            curve = HybridRetriever(
                view,
                embedder=static_embedder,
                index=static_index,
                config=HybridConfig(rerank_pool=pool),
                rerank_embedder=stand_in,  # type: ignore[arg-type]
            )
            res = curve.retrieve_many(queries, k=args.k)
            same = sum(a.fact_ids == b.fact_ids for a, b in zip(res, exact_res, strict=True))
            print(
                f"    pool {pool:>5}: overlap {_overlap(res, exact_res):.3f}, identical lists {same}/{len(res)}, "
                f"recall {_recall(res, truth):.3f}, texts looked up a question {stand_in.embedded / len(queries):.0f}"
            )
            out[f"curve{pool}_overlap"] = _overlap(res, exact_res)
    print(
        f"  static vs exact: build {exact_build / static_build:.1f}x faster; recall@{args.k} ratio "
        + (
            "not measured"
            if exact_recall != exact_recall
            else f"{static_recall / max(exact_recall, 1e-9):.3f}"
        )
        + f"; static vs keyword: recall@{args.k} {static_recall:.3f} vs {_recall(kw_res, truth[: len(kw_res)]):.3f}"
    )
    out.update({"exact_build_s": exact_build, "route_build_ratio": exact_build / static_build})
    if exact_recall == exact_recall:
        out.update({"exact_recall": exact_recall, "recall_ratio": static_recall / max(exact_recall, 1e-9)})
    del static, static_index
    gc.collect()
    return out


def _neo4j(graph, embedder, queries, expected, args, keyword_mean: float) -> dict[str, float]:
    from neo4j_retriever import pushed_neo4j_hybrid

    with pushed_neo4j_hybrid(graph, embedder, args.work) as (retriever,):
        lat, res = _stream(retriever, queries, args.k)
    p50, mean = _pct(lat)
    same = sum(a.facts == b.facts for a, b in zip(res, expected, strict=False))
    print(
        f"  {'neo4j-hybrid, cached':<24} {p50 * 1e3:>9.3f} {mean * 1e3:>9.3f}   "
        f"(keyword / neo4j-hybrid {keyword_mean / mean:.2f}x); same facts as the in-memory hybrid: "
        f"{same}/{len(res)}"
    )
    return {"neo4j_ms": mean * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3000,30000,100000", help="Entity counts, comma-separated.")
    parser.add_argument(
        "--questions", type=int, default=1000, help="Questions for the batched pass and recall."
    )
    parser.add_argument("--keyword-questions", type=int, default=200, help="Questions timed one at a time.")
    parser.add_argument(
        "--sample", type=int, default=256, help="Texts whose embedding throughput is measured."
    )
    parser.add_argument(
        "--baseline-max", type=int, default=30000, help="Largest size the old dense scoring runs at."
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--neo4j", action="store_true", help="Also push each graph and time neo4j-hybrid.")
    parser.add_argument("--neo4j-questions", type=int, default=50)
    parser.add_argument("--neo4j-max", type=int, default=30000, help="Largest size pushed to Neo4j.")
    parser.add_argument("--rounds", type=int, default=2, help="Alternated rounds of the throughput sample.")
    parser.add_argument("--embed-questions", type=int, default=20, help="Questions timed through the model.")
    parser.add_argument(
        "--vectors",
        choices=("hashing", "model"),
        default="hashing",
        help="Vectors of the full graphs for latency/memory/recall: 384-dim HashingEmbedder (fast; the "
        "default on a shared 2-core machine) or the model itself (embeds every text).",
    )
    parser.add_argument(
        "--exact-max",
        type=int,
        default=100000,
        help="Largest size whose whole exact-route (MiniLM) index is built for the route comparison; above "
        "it the exact build is extrapolated and its recall not measured.",
    )
    parser.add_argument(
        "--exact-cache",
        type=Path,
        default=None,
        help="Keep each size's exact MiniLM index in DIR/exact_<size> and read it back in later runs (its "
        "build time is then the one measured when it was built).",
    )
    parser.add_argument(
        "--pools",
        default="auto",
        help="static+rerank pools timed on real query-time MiniLM vectors (auto: the size rule's default).",
    )
    parser.add_argument(
        "--rerank-questions", type=int, default=30, help="Questions answered one at a time per pool."
    )
    parser.add_argument(
        "--curve",
        default="0,50,100,200,400,800",
        help="Pools of the overlap curve on every question (where the exact index exists); empty: none.",
    )
    parser.add_argument(
        "--routes-only", action="store_true", help="Only the embedding routes and the keyword scan."
    )
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "karma_bench_retrieval_scale"
    )
    args = parser.parse_args()
    args.pools = [None if v.strip() == "auto" else int(v) for v in args.pools.split(",") if v.strip()]
    args.curve = [int(v) for v in args.curve.split(",") if v.strip()]
    args.work.mkdir(parents=True, exist_ok=True)
    print(describe_machine())
    from retrieval.embed import Embedder, HashingEmbedder

    global MODEL_LOAD_SECONDS
    started = time.perf_counter()
    model = Embedder()
    model.encode(["warm-up"])
    MODEL_LOAD_SECONDS = time.perf_counter() - started
    vectors = model if args.vectors == "model" else HashingEmbedder(model.dim)
    print(f"full-graph vectors: {vectors.model_id}; embedding throughput: {model.model_id}")
    summary = {}
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        summary[size] = run_size(size, args, model, vectors)
    print("\nsummary (ratios measured in this run):")
    for size, values in summary.items():
        print(
            f"  {size}: "
            + ", ".join(
                f"{key} {value:.3f}" if abs(value) < 10 else f"{key} {value:.1f}"
                for key, value in values.items()
            )
        )
    print(describe_machine())


if __name__ == "__main__":
    main()
