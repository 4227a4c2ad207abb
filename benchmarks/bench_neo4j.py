"""Push speed into the real local Neo4j: batched ``UNWIND ... MERGE`` vs one ``MERGE`` per relationship.

Pushes a synthetic CKG with ``--relationships`` edges (default 100,000) with karma's batched push, then
times the naive way (one auto-commit ``MERGE`` query per relationship) on a ``--per-row-sample`` subset
(half before, half after the batched push) and extrapolates it to all relationships (stated in the
output). Both run in this one process, against the same warmed-up server, on the same data. Goal:
batched at least 20x faster.

The karma graph already in the database is pulled first and pushed back at the end.

    bash scripts/neo4j.sh start
    .venv/bin/python benchmarks/bench_neo4j.py [--relationships 100000] [--per-row-sample 2000]
"""

from __future__ import annotations

import argparse
import random
import time

from graph.model import CausalGraph, CkgEdge, CkgNode
from graph.neo4j import Neo4jSettings, open_driver, server_version
from graph.neo4j.pull import pull_graph, read_provenance
from graph.neo4j.push import clear_karma_graph, edge_merge_query, push_graph
from graph.neo4j.schema import NODE_LABEL, edge_row


def synthetic_graph(n_nodes: int, n_edges: int, seed: int = 0) -> CausalGraph:
    """Visual and musical event nodes and ``causes`` edges with realistic statistics and evidence."""
    rng = random.Random(seed)
    graph = CausalGraph(build_config={"benchmark": "bench_neo4j", "seed": seed})
    half = n_nodes // 2
    for i in range(n_nodes):
        kind = "visual_change" if i < half else "music_change"
        node_id = f"{kind.split('_')[0]}:bench:{i:06d}"
        graph.nodes[node_id] = CkgNode(
            id=node_id, title=f"{kind} {i}", kind=kind, frequency=rng.randint(1, 500)
        )
    visual = sorted(n for n in graph.nodes if n.startswith("visual"))
    music = sorted(n for n in graph.nodes if n.startswith("music"))
    if n_edges > len(visual) * len(music):
        raise SystemExit(f"{n_edges} edges do not fit between {len(visual)} x {len(music)} nodes")
    while len(graph.edges) < n_edges:
        source, target = rng.choice(visual), rng.choice(music)
        edge_id = f"{source}->{target}|causes"
        if edge_id in graph.edges:
            continue
        support = rng.randint(1, 200)
        graph.edges[edge_id] = CkgEdge(
            id=edge_id,
            source=source,
            target=target,
            relation="causes",
            support=support,
            confidence=rng.random(),
            lift=rng.uniform(1.0, 4.0),
            precedence=rng.uniform(0.0, 0.5),
            weight=round(rng.uniform(0.0, 5.0), 3),
            evidence=[
                f"vid{rng.randint(0, 2681):04d}/t{rng.randint(0, 20):03d}" for _ in range(min(support, 8))
            ],
            description=f"{source} causes {target} (support {support})",
        )
    return graph


def count_relationships(driver, database: str) -> int:
    records, _, _ = driver.execute_query(
        f"MATCH (:{NODE_LABEL})-[r]->(:{NODE_LABEL}) RETURN count(r) AS c", database_=database
    )
    return records[0]["c"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relationships", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=4_000)
    parser.add_argument("--per-row-sample", type=int, default=2_000, help="relationships merged one by one")
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args()

    settings = Neo4jSettings.resolve()
    driver = open_driver(settings)
    db = settings.database
    saved = pull_graph(driver, db) if read_provenance(driver, db) is not None else None
    graph = synthetic_graph(args.nodes, args.relationships)
    print(
        f"Neo4j {server_version(driver)} at {settings.uri}; synthetic graph: {len(graph.nodes):,} nodes, "
        f"{len(graph.edges):,} relationships (CAUSES with statistics and evidence lists)"
    )
    query = edge_merge_query("causes")
    sample = [edge_row(graph.edges[k]) for k in sorted(graph.edges)[: args.per_row_sample]]
    halves = [sample[: len(sample) // 2], sample[len(sample) // 2 :]]
    nodes_only = CausalGraph(nodes=graph.nodes, build_config=graph.build_config)

    def per_row(rows: list[dict]) -> float:
        """The naive way: same nodes (pushed batched), then one auto-commit MERGE query per relationship."""
        clear_karma_graph(driver, db)
        push_graph(driver, nodes_only, db, batch_size=args.batch_size)
        started = time.perf_counter()
        with driver.session(database=db) as session:
            for row in rows:
                session.run(query, rows=[row]).consume()
        elapsed = time.perf_counter() - started
        assert count_relationships(driver, db) == len(rows)
        return elapsed

    try:
        # 0. Warm-up of both paths: the JVM's JIT compiles Neo4j's hot code during the first tens of
        # thousands of rows (on 2 cores it competes with the work), so neither measured run pays for it.
        warm = synthetic_graph(1_000, 20_000, seed=1)
        for _ in range(2):
            clear_karma_graph(driver, db)
            push_graph(driver, warm, db, batch_size=args.batch_size)
        clear_karma_graph(driver, db)
        push_graph(driver, CausalGraph(nodes=warm.nodes), db)
        with driver.session(database=db) as session:
            for key in sorted(warm.edges)[:500]:
                session.run(query, rows=[edge_row(warm.edges[key])]).consume()

        # 1. Per-row, first half of the sample; 2. karma's batched push; 3. per-row, second half: the
        # two methods share the machine's (fluctuating) load as evenly as one run allows.
        per_row_sample_s = per_row(halves[0])
        clear_karma_graph(driver, db)
        report = push_graph(driver, graph, db, batch_size=args.batch_size)
        assert count_relationships(driver, db) == len(graph.edges)
        batched_rels = report.edge_seconds
        again = push_graph(driver, graph, db, batch_size=args.batch_size)
        per_row_sample_s += per_row(halves[1])
    finally:
        clear_karma_graph(driver, db)
        if saved is not None:
            push_graph(driver, saved, db)
        driver.close()

    per_row_each = per_row_sample_s / len(sample)
    per_row_total = per_row_each * len(graph.edges)
    n = len(graph.edges)
    print(f"\n{'method':<46}{'relationships':>14}{'seconds':>10}{'rels/s':>11}")
    print(
        f"{'batched UNWIND MERGE (batch ' + format(args.batch_size, ',') + ')':<46}{n:>14,}{batched_rels:>10.2f}{n / batched_rels:>11,.0f}"
    )
    print(
        f"{'per-row MERGE, measured':<46}{len(sample):>14,}{per_row_sample_s:>10.2f}{1 / per_row_each:>11,.0f}"
    )
    print(
        f"{'per-row MERGE, extrapolated from the sample':<46}{n:>14,}{per_row_total:>10.2f}{1 / per_row_each:>11,.0f}"
    )
    print(
        f"\nwhole batched push (schema, stale check, nodes, relationships, provenance): {report.seconds:.2f} s; "
        f"repeat push (idempotent: {again.nodes_created} nodes, {again.relationships_created} relationships "
        f"created): {again.seconds:.2f} s"
    )
    print(
        "(both rows time only the relationship writes against the same nodes; parameter rows are built "
        "before the clock starts for both)"
    )
    ratio = per_row_total / batched_rels
    print(
        f"speed-up of batched over per-row MERGE for {n:,} relationships: {ratio:.1f}x "
        f"(goal >= 20x: {'met' if ratio >= 20 else 'NOT met'}; per-row time extrapolated from "
        f"{len(sample):,} relationships)"
    )


if __name__ == "__main__":
    main()
