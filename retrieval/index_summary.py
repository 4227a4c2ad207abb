"""``karma graph stats``'s lines on a graph's cached retrieval index: where it is, its build time and
memory, the hybrid retriever's arrays included (so it sits above both ``retrieval.index`` and
``retrieval.hybrid``)."""

from __future__ import annotations

from retrieval.embed import Embedder, embed_device
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex, _bind_for, cached_index, default_index_dir


def index_summary(
    graph: object, model: str | None = None, build: bool = False, device: str | None = None
) -> list[str]:
    """Lines describing the graph's cached retrieval index (``karma graph stats``): where it is, how
    long it took to build, and its memory; with ``build`` it is built (and cached) when missing, its
    texts embedded on ``device`` (``retrieval.embed.embed_device``).

    Memory counts the float32 vectors, the search structures (FAISS's serialised size) and the hybrid
    retriever's own arrays (sources, targets, strengths, the sparse spreading and incidence matrices).
    """
    from retrieval.graph_view import as_causal_graph

    causal = as_causal_graph(graph)  # type: ignore[arg-type]
    view = GraphView.of(causal)
    embedder = Embedder(model, device=embed_device(device))
    folder = default_index_dir(view.content_hash, embedder.model_id)
    route = _bind_for(view, embedder)
    index = GraphIndex.load(folder, view, embedder.model_id, route=route)
    if index is None and not build:
        return [
            f"retrieval index: not built yet for model {embedder.model_id} (--index builds it into {folder})"
        ]
    if index is None:
        index = cached_index(view, embedder)
    from retrieval.hybrid import HybridRetriever

    stats = index.stats()
    retriever_bytes = HybridRetriever(view, embedder=embedder, index=index).memory_bytes()
    edges = max(int(stats["edges"]), 1)
    beyond = (int(stats["ann_bytes"]) + retriever_bytes) / edges
    mib = 1024 * 1024
    return [
        f"retrieval index ({embedder.model_id}, {index.route} route, {stats['dim']} dims): {folder}",
        f"  built in {stats['build_seconds']:.1f} s ({stats['embed_seconds']:.1f} s embedding "
        f"{int(stats['nodes']) + int(stats['edges'])} texts); search: nodes {stats['node_search']}, "
        f"edges {stats['edge_search']}",
        f"  memory: vectors {int(stats['vector_bytes']) / mib:.1f} MiB (float32, one copy), search structures "
        f"{int(stats['ann_bytes']) / mib:.1f} MiB, retriever arrays {retriever_bytes / mib:.1f} MiB; "
        f"{beyond:.0f} B per edge beyond the raw vectors",
    ]
