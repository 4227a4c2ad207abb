"""Benchmark: build the CKG for a full-scale features-only synthetic world (2,682 videos, ~12.6k
transitions) and print the time of each stage, the goal ratio (build time / 20 s) and the speed-up of
the vectorised edge statistics over a plain-Python count on the same events, measured in one run.

    .venv/bin/python benchmarks/bench_graph.py                 # generates data/worlds/default.yaml
    .venv/bin/python benchmarks/bench_graph.py --data DIR      # an existing Karma-MV folder
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

GOAL_SECONDS = 20.0
ROOT = Path(__file__).resolve().parents[1]


def _python_pair_counts(table) -> int:  # type: ignore[no-untyped-def]
    """Support/confidence/lift of every visual x music pair with Python sets (the baseline)."""
    rows = {c: set(table.occurs[:, j].nonzero()[0].tolist()) for j, c in enumerate(table.columns)}
    defined = {c: set(table.defined[:, j].nonzero()[0].tolist()) for j, c in enumerate(table.columns)}
    visual = [c for c in table.columns if c.startswith("visual:")]
    music = [c for c in table.columns if c.startswith("music:")]
    kept = 0
    for a in visual:
        for b in music:
            support = len(rows[a] & rows[b])
            cause = len(rows[a] & defined[b])
            both = len(defined[a] & defined[b])
            effect = len(rows[b] & defined[a])
            if cause and both and effect and support >= 5 and (support / cause) / (effect / both) >= 1.2:
                kept += 1
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, help="Existing Karma-MV folder (default: generate the default world)."
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the generated world.")
    args = parser.parse_args()

    from graph import build_graph, save_graph, score_against_truth
    from graph.ckg.builder import _prepare
    from graph.ckg.detect import build_event_table
    from graph.ckg.stats import pair_stats
    from karma.data import load_dataset

    with tempfile.TemporaryDirectory(prefix="karma-bench-graph-") as tmp:
        data = args.data
        if data is None:
            from karma.synth import generate, load_world

            data = Path(tmp) / "world"
            started = time.perf_counter()
            summary = generate(load_world(ROOT / "data" / "worlds" / "default.yaml"), data, seed=args.seed)
            print(
                f"generate  {time.perf_counter() - started:7.2f} s  ({summary.videos} videos, {summary.transitions} transitions)"
            )

        started = time.perf_counter()
        dataset = load_dataset(data)
        load_s = time.perf_counter() - started
        print(
            f"load      {load_s:7.2f} s  ({len(dataset.transitions)} transitions, {len(dataset.features)} feature files)"
        )

        started = time.perf_counter()
        graph = build_graph(dataset.transitions, dataset.features)
        build_s = time.perf_counter() - started
        relations: dict[str, int] = {}
        for edge in graph.edges.values():
            relations[edge.relation] = relations.get(edge.relation, 0) + 1
        print(
            f"build     {build_s:7.2f} s  ({len(graph.nodes)} nodes, edges {dict(sorted(relations.items()))})"
        )

        again = build_graph(dataset.transitions, dataset.features)
        print(f"deterministic: {again.content_hash() == graph.content_hash()} (hash {graph.content_hash()})")

        started = time.perf_counter()
        save_graph(graph, Path(tmp) / "graph")
        print(f"save      {time.perf_counter() - started:7.2f} s  (graph.json, parquet tables, GraphML)")

        kept, pairs, prev = _prepare(dataset.transitions, dataset.features, set())
        table = build_event_table(pairs, [t.transition_id for t in kept], prev=prev)
        started = time.perf_counter()
        pair_stats(table)
        numpy_s = time.perf_counter() - started
        started = time.perf_counter()
        _python_pair_counts(table)
        python_s = time.perf_counter() - started
        print(
            f"edge statistics: numpy {numpy_s:.3f} s vs Python sets {python_s:.3f} s "
            f"(x{python_s / max(numpy_s, 1e-9):.1f}; numpy also computes precedence and its test)"
        )
        print(f"build / goal ({GOAL_SECONDS:.0f} s): {build_s / GOAL_SECONDS:.2f}")

        truth = Path(data) / "ground_truth.json"
        if truth.is_file():
            report = score_against_truth(graph, truth)
            print(
                f"vs truth: precision {report.precision:.3f} recall {report.recall:.3f} "
                f"precision@{report.n_truth} {report.precision_at_k:.3f}; planted non-causal ok: "
                f"{report.non_causal_ok}; proxies ok: {report.proxies_ok}"
            )


if __name__ == "__main__":
    main()
