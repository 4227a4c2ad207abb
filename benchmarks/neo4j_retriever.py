"""The ``neo4j-hybrid`` retriever of a benchmark's graph on the real local server, for benchmarks that
time it beside the in-memory retrievers (``bash scripts/neo4j.sh start`` first).

The graph and its node/edge vectors are pushed as ``karma graph push --embeddings`` does (replacing the
karma graph the database held); the vectors come from the same cached index the in-memory hybrid uses.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def pushed_neo4j_hybrid(
    graph, embedder, work: Path, searches: tuple[str, ...] = ("index",)
) -> Iterator[list]:
    """Push ``graph`` with its embeddings and yield one ``neo4j-hybrid`` retriever reading it per
    ``searches`` entry (``index``: Neo4j's native vector indexes, approximate; ``exact``: a full scan)."""
    from graph.neo4j import Neo4jSettings, open_driver
    from graph.neo4j.push import push_graph
    from retrieval import get_retriever
    from retrieval.neo4j_hybrid import push_embeddings

    settings = Neo4jSettings.resolve()
    with open_driver(settings) as driver:
        started = time.perf_counter()
        push_graph(driver, graph, settings.database)
        os.environ.setdefault("KARMA_CACHE_DIR", str(work / "cache"))
        report = push_embeddings(driver, graph, embedder, settings.database)
        print(
            f"  neo4j: graph + {report.nodes + report.relationships} vectors pushed in "
            f"{time.perf_counter() - started:.1f} s"
        )
        yield [
            get_retriever(
                "neo4j-hybrid", None, embedder=embedder, driver=driver, settings=settings, search=search
            )
            for search in searches
        ]
