"""Retrieval at full Karma-MV scale: latency per question (hybrid vs the published keyword scan) and
recall@k of the true causes, side by side in one run.

Setup (cached in ``--work``, reused when present): a features-only ``karma synth`` world of 2,682
videos (~12.6k transitions, ~37.7k questions) and a CKG built from it *without* a held-out fold of
videos; the questions of that fold are the ones retrieved for (leakage-safe, as an evaluation does).

Measured:

* one-off costs: graph load, embedding model load, FAISS index build (or load when the graph is
  unchanged);
* streaming latency per question, one ``retrieve`` call at a time, p50 / p95 / mean, for hybrid,
  keyword and paths. The hybrid's question-embedding cache starts empty, so questions whose
  normalised text was not seen before pay for the embedding inside their own latency;
* the same streaming pass for hybrid again, its cache now warm (what a rerun or the other arm of an
  ablation sees);
* batched cost per question: ``retrieve_many`` over all questions (hybrid embeds each distinct
  question text once and scores the batch with matrix products; keyword and paths have no batch
  path, they scan per question by design);
* the keyword / hybrid ratios, and recall@1/3/5/10 of every retriever on the same questions.

Goal: hybrid at least 20x faster than keyword per question at full scale, at higher recall.
Run: ``.venv/bin/python benchmarks/bench_retrieval.py [--videos 2682] [--questions 3000]``.

karma's own CKG stays small at full scale (one node per feature change, ~170 nodes), where the
published linear title scan is already sub-millisecond. The published CKG was made by GraphRAG, with
an entity per extracted name; to measure on such a graph, import it and point the benchmark at it:
``karma graph import GRAPHRAG_OUTPUT --out G`` then ``bench_retrieval.py --graph G --data QA_DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_RATIO = 20.0


def _world(work: Path, videos: int, seed: int, config: Path | None = None) -> Path:
    from karma.synth import generate, load_world

    config = config or REPO / "data" / "worlds" / "default.yaml"
    world = work / f"world_{config.stem}_{videos}_{seed}"
    meta = world / "world.json"
    if meta.is_file() and json.loads(meta.read_text()).get("videos") == videos:
        return world
    started = time.perf_counter()
    generate(load_world(config), world, videos=videos, seed=seed)
    print(f"generated world: {videos} videos in {time.perf_counter() - started:.1f} s")
    return world


def _graph(work: Path, world: Path, dataset, held_out: list[str]) -> Path:
    from graph import BuildConfig, build_graph, load_graph, save_graph

    folder = work / f"graph_{world.name}_heldout{len(held_out)}"
    if (folder / "graph.json").is_file():
        graph = load_graph(folder)
        if sorted(graph.build_config.get("exclude_videos", [])) == sorted(held_out):
            return folder
    started = time.perf_counter()
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig(exclude_videos=held_out))
    save_graph(graph, folder)
    print(f"built graph without {len(held_out)} held-out videos in {time.perf_counter() - started:.1f} s")
    return folder


def _percentiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    p50 = ordered[len(ordered) // 2]
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95, statistics.fmean(ordered)


def _streaming(retriever, queries, k: int) -> tuple[list[float], list]:
    latencies: list[float] = []
    results = []
    for query in queries:
        started = time.perf_counter()
        results.append(retriever.retrieve(query, k=k))
        latencies.append(time.perf_counter() - started)
    return latencies, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=2682, help="World size (2682 = full Karma-MV).")
    parser.add_argument("--held-out", type=int, default=268, help="Videos left out of the graph (questions).")
    parser.add_argument(
        "--questions", type=int, default=3000, help="Questions retrieved for (0: all held out)."
    )
    parser.add_argument("--k", type=int, default=10, help="Facts per question.")
    parser.add_argument("--seed", type=int, default=0, help="World seed.")
    parser.add_argument(
        "--world",
        type=Path,
        default=None,
        help="World config to generate (default data/worlds/default.yaml).",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "karma_bench_retrieval",
        help="Cache folder.",
    )
    parser.add_argument(
        "--graph",
        type=Path,
        help="Measure on this graph folder instead of a synth-built one, e.g. the published GraphRAG CKG "
        "brought in with `karma graph import` (needs --data)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        help="With --graph: the QA/features folder whose questions are retrieved for (recall is printed "
        "only when it holds a synth question_truth.jsonl)",
    )
    parser.add_argument(
        "--neo4j",
        action="store_true",
        help="Also push the graph with its embeddings to the local Neo4j (bash scripts/neo4j.sh start) and "
        "time neo4j-hybrid beside the others; replaces the karma graph the database holds",
    )
    args = parser.parse_args()
    if (args.graph is None) != (args.data is None):
        parser.error("--graph and --data go together")
    from machine import describe_machine

    print(describe_machine())

    from karma.data import load_dataset
    from retrieval import (
        GraphView,
        build_query,
        get_retriever,
        graph_thresholds,
        load_question_truth,
    )
    from retrieval.embed import Embedder
    from retrieval.index import INDEX_DIRNAME

    args.work.mkdir(parents=True, exist_ok=True)
    world = args.data if args.data else _world(args.work, args.videos, args.seed, args.world)
    started = time.perf_counter()
    dataset = load_dataset(world, lenient=args.data is not None)
    print(
        f"loaded {world.name}: {len(dataset.transitions)} transitions in {time.perf_counter() - started:.1f} s"
    )
    videos = sorted({t.video_id for t in dataset.transitions})
    if args.graph:
        held_out, graph_dir = videos, args.graph  # every question of --data; the graph is the user's
    else:
        held_out = videos[: args.held_out]
        graph_dir = _graph(args.work, world, dataset, held_out)

    started = time.perf_counter()
    view = GraphView.of(graph_dir)
    print(
        f"graph: {len(view.node_ids)} nodes, {len(view.edge_ids)} edges "
        f"(loaded in {time.perf_counter() - started:.2f} s)"
    )
    thresholds = graph_thresholds(view.graph.build_config)
    truth_file = world / "question_truth.jsonl"
    truth = load_question_truth(truth_file) if truth_file.is_file() else {}
    held = set(held_out)
    pairs = [(t, q) for t in dataset.transitions if t.video_id in held for q in t.questions]
    if args.questions:
        pairs = pairs[: args.questions]
    queries = [build_query(t, q, dataset.features[t.video_id], thresholds) for t, q in pairs]
    records = [truth.get((t.video_id, t.index, q.index)) for t, q in pairs]
    from retrieval import retrieval_text

    print(
        f"questions: {len(queries)} from {len(held_out)} held-out videos "
        f"({len({q.question for q in queries})} distinct texts, "
        f"{len({retrieval_text(q.question) for q in queries})} distinct after number normalisation)"
    )

    started = time.perf_counter()
    embedder = Embedder()
    embedder.encode(["warm-up"])
    model_s = time.perf_counter() - started
    started = time.perf_counter()
    hybrid = get_retriever("hybrid", view, embedder=embedder, index_dir=graph_dir / INDEX_DIRNAME)
    index_s = time.perf_counter() - started
    how = "loaded" if hybrid.index.loaded_from_disk else "built"
    print(f"one-off: embedding model {model_s:.2f} s, FAISS index {how} in {index_s:.2f} s")
    retrievers = {
        "hybrid": hybrid,
        "keyword": get_retriever("keyword", view),
        "paths": get_retriever("paths", view),
    }
    with contextlib.ExitStack() as stack:
        if args.neo4j:
            from neo4j_retriever import pushed_neo4j_hybrid

            index, exact = stack.enter_context(
                pushed_neo4j_hybrid(view.graph, embedder, args.work, ("index", "exact"))
            )
            retrievers["neo4j-hybrid"], retrievers["neo4j-exact"] = index, exact
        _measure(args, retrievers, embedder, queries, records, truth, world)


def _measure(args, retrievers, embedder, queries, records, truth, world) -> None:
    """Streaming (cold and warm), batched, the ratios and recall of every retriever on the same queries."""
    from machine import describe_machine

    from retrieval import embed as embed_module
    from retrieval import recall_at_k

    hybrid = retrievers["hybrid"]
    # Streaming first (hybrid's question cache is cold), again with the cache warm (a second pass, as
    # the other arm of an ablation or a rerun sees it), then the batch path on a fresh text cache.
    stream: dict[str, tuple[list[float], list]] = {}
    for name, retriever in retrievers.items():
        stream[name] = _streaming(retriever, queries, args.k)
    warm_latencies, warm_results = _streaming(hybrid, queries, args.k)
    embed_module._CACHES.get(embedder.model_ref, {}).clear()  # the batch pass pays its embeddings too
    batch_s: dict[str, float] = {}
    batch_results: dict[str, list] = {}
    for name, retriever in retrievers.items():
        started = time.perf_counter()
        batch_results[name] = retriever.retrieve_many(queries, k=args.k)
        batch_s[name] = (time.perf_counter() - started) / len(queries)
    started = time.perf_counter()
    warm_batch = hybrid.retrieve_many(queries, k=args.k)
    warm_batch_s = (time.perf_counter() - started) / len(queries)
    same = (
        all(batch_results[name] == stream[name][1] for name in retrievers)
        and warm_batch == stream["hybrid"][1]
    )
    same = same and warm_results == stream["hybrid"][1]

    print()
    print(f"{'retriever':<12} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9} {'batch ms/q':>11}")
    for name in retrievers:
        p50, p95, mean = _percentiles(stream[name][0])
        print(
            f"{name:<12} {p50 * 1e3:>9.3f} {p95 * 1e3:>9.3f} {mean * 1e3:>9.3f} {batch_s[name] * 1e3:>11.4f}"
        )
    wp50, wp95, wmean = _percentiles(warm_latencies)
    print(
        f"{'hybrid*':<12} {wp50 * 1e3:>9.3f} {wp95 * 1e3:>9.3f} {wmean * 1e3:>9.3f} {warm_batch_s * 1e3:>11.4f}"
        "   * question-embedding cache warm"
    )
    kp50, kp95, kmean = _percentiles(stream["keyword"][0])
    hp50, hp95, hmean = _percentiles(stream["hybrid"][0])
    batch_ratio = batch_s["keyword"] / batch_s["hybrid"]
    print()
    print(
        f"keyword / hybrid, streaming cold: p50 {kp50 / hp50:.1f}x, p95 {kp95 / hp95:.1f}x, mean {kmean / hmean:.1f}x"
    )
    print(
        f"keyword / hybrid, streaming warm: p50 {kp50 / wp50:.1f}x, p95 {kp95 / wp95:.1f}x, mean {kmean / wmean:.1f}x"
    )
    print(
        f"keyword / hybrid, batched (per question): cold {batch_ratio:.1f}x, "
        f"warm {batch_s['keyword'] / warm_batch_s:.1f}x  (goal >= {GOAL_RATIO:.0f}x)"
    )
    print(f"batch, cold and warm results identical to one-at-a-time results: {same}")
    for name in ("neo4j-hybrid", "neo4j-exact"):
        if name in stream:
            equal = sum(a.facts == b.facts for a, b in zip(stream[name][1], stream["hybrid"][1], strict=True))
            print(
                f"{name} returns the in-memory hybrid's facts in its order: {equal}/{len(queries)} questions"
            )
    if "neo4j-exact" in stream:
        print(
            "(neo4j-hybrid seeds from Neo4j's approximate native vector indexes, neo4j-exact from a full "
            "scan; the in-memory hybrid scans exactly up to 4,096 rows)"
        )

    print()
    if not truth:
        print(f"recall not measured: {world} has no question_truth.jsonl (only synth worlds know the causes)")
        return
    ks = (1, 3, 5, 10)
    print(f"{'retriever':<12} " + " ".join(f"{'R@' + str(k):>7}" for k in ks) + "   (recall of true causes)")
    scored = [i for i, record in enumerate(records) if record is not None and record.cause_events]
    recalls: dict[str, list[float]] = {}
    for name in retrievers:
        values = []
        for k in ks:
            hits = [
                recall_at_k(stream[name][1][i].facts, records[i].cause_events, records[i].effect_event, k)
                or 0.0
                for i in scored
            ]
            values.append(sum(hits) / max(len(hits), 1))
        recalls[name] = values
        print(f"{name:<12} " + " ".join(f"{value:>7.3f}" for value in values))
    higher = all(recalls["hybrid"][j] > recalls["keyword"][j] for j in range(len(ks)))
    print(f"\nhybrid recall above keyword at every k: {higher}; questions scored: {len(scored)}")
    _rule_table(retrievers, stream, records, scored)
    _other_rule_misses(stream["hybrid"][1], records, scored, world / "rules.json")
    print(f"\n{describe_machine()}")


def _rule_table(retrievers, stream, records, scored) -> None:
    """recall@1 of the question's own rule (the top fact is a true cause -> the asked effect), per type."""
    from retrieval.evaluate import rule_hit_at_k

    types = sorted({records[i].type for i in scored})
    print()
    print(f"{'retriever':<12} " + " ".join(f"{t[:14]:>15}" for t in [*types, "all"]) + "   (own rule @1)")
    for name in retrievers:
        cells = []
        for qtype in [*types, "all"]:
            chosen = [i for i in scored if qtype in ("all", records[i].type)]
            hits = [
                rule_hit_at_k(stream[name][1][i].facts, records[i].cause_events, records[i].effect_event, 1)
                or 0.0
                for i in chosen
            ]
            cells.append(f"{sum(hits) / max(len(hits), 1):>9.3f} n={len(hits):<4}")
        print(f"{name:<12} " + " ".join(cells))


def _other_rule_misses(results, records, scored, rules_file: Path) -> None:
    """Of the hybrid's own-rule misses, those whose first fact is another true rule of the question's
    own cause (a cause with two true effects: the question text does not say which one it asks)."""
    if not rules_file.is_file():
        return
    rules = json.loads(rules_file.read_text())["rules"]
    true_pairs = {(rule["cause"], rule["effect"]) for rule in rules}
    from retrieval.evaluate import rule_hit_at_k

    print()
    print("hybrid own-rule misses at 1, and of them: first fact another true rule of the question's cause")
    for qtype in sorted({records[i].type for i in scored}):
        misses = other = 0
        for i in scored:
            record = records[i]
            if record.type != qtype:
                continue
            facts = results[i].facts
            if rule_hit_at_k(facts, record.cause_events, record.effect_event, 1):
                continue
            misses += 1
            first = facts[0] if facts else None
            other += bool(
                first
                and first.source in record.cause_events
                and first.target != record.effect_event
                and (first.source, first.target) in true_pairs
            )
        print(f"  {qtype:<15} misses {misses:>4}, another true rule of the same cause first {other:>4}")


if __name__ == "__main__":
    main()
