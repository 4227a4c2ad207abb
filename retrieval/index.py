"""Vector indexes over the CKG's node and edge texts, cached by graph hash and rebuilt only when it changes.

Build: every node and edge text is embedded with ``Embedder.encode_corpus`` (length-sorted, fixed
batches: the model's real throughput, and the same graph always gets the same vectors), once. The
vectors are kept in one float32 array per table; candidates come from an exact scan or an ANN
structure chosen by size (``retrieval.ann``) and are rescored exactly.

Where: by default under the cache root, ``cache_dir("index")/<graph hash>-<settings hash>/``
(``$KARMA_CACHE_DIR`` moves it), never inside the user's graph folder, so a read-only graph folder works
and stays unchanged. Files: ``node_vectors.npy``, ``edge_vectors.npy`` (memory-mapped on load),
``nodes.ann`` / ``edges.ann`` (when not an exact scan) and ``meta.json``, written last. The index is
reused when ``meta.json`` names the same graph content hash, embedding model, text format and index
settings, and every file has the size and sha256 ``meta.json`` recorded for it (``files``; hashing the
vectors costs about a quarter second at 30,000 entities, against a rebuild of minutes); anything else
triggers a rebuild, and a file that fails its checksum (or an index from before checksums) is named on
stderr as it is rebuilt. Rows follow the sorted node / edge ids of the graph, so the
ids themselves need not be stored.

Route: the index records the embedding route its vectors came from (``meta.json`` ``route``: ``exact``,
the model's forward pass, or ``static``, the distilled model2vec embedding; ``retrieval.static_embed``).
Build and load bind the Embedder to that route (``Embedder.bind_route`` / ``use_route``), so questions are
embedded the same way; an index is never read back for the other route (its model id and route differ),
and an Embedder forced to the other route is refused (``RouteMismatch``). Indexes written before routes
existed have no ``route`` and are exact.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retrieval.ann import IndexConfig, VectorSearch
from retrieval.embed import Embedder, RouteMismatch
from retrieval.graph_view import GraphView

TEXT_VERSION = "3"
"""Bump when node_text / edge_text change: stored vectors then no longer match the texts."""
FORMAT_VERSION = "2"
"""Bump when the files of a stored index change."""
INDEX_DIRNAME = "retrieval_index"
"""Former folder name of the index inside a graph folder (no longer written there)."""
CACHE_KIND = "index"
"""Sub-folder of the cache root that holds indexes (``karma.core.paths.cache_dir``)."""


def settings_key(model_id: str, config: IndexConfig) -> str:
    """Hash of what, besides the graph, decides the stored files."""
    from karma.core.hashing import canonical_hash

    return canonical_hash(
        {"model": model_id, "text": TEXT_VERSION, "format": FORMAT_VERSION, "index": config.model_dump()}
    )[:12]


def default_index_dir(content_hash: str, model_id: str, config: IndexConfig | None = None) -> Path:
    """``cache_dir("index")/<graph hash>-<settings hash>``: where a graph's index is cached."""
    from karma.core.paths import cache_dir

    return cache_dir(CACHE_KIND) / f"{content_hash[:24]}-{settings_key(model_id, config or IndexConfig())}"


@dataclass
class GraphIndex:
    """Node and edge vectors of one graph (one float32 copy each) with a candidate search over each."""

    content_hash: str
    """Graph content hash the vectors were computed from."""
    model_id: str
    """Embedding model that produced them."""
    node_search: VectorSearch
    """Candidates over the node vectors."""
    edge_search: VectorSearch
    """Candidates over the edge vectors."""
    config: IndexConfig = field(default_factory=IndexConfig)
    """How the search structures were chosen."""
    loaded_from_disk: bool = False
    """True when the vectors were read back instead of computed (tests and logs use it)."""
    embed_seconds: float = 0.0
    """Time spent embedding when the index was built."""
    build_seconds: float = 0.0
    """Whole build (embedding + search structures) when it was built."""
    route: str = "exact"
    """Embedding route of the vectors: ``exact`` (the model) or ``static`` (distilled; static_embed)."""

    def bind(self, embedder: object) -> None:
        """Make ``embedder`` embed questions with this index's route (RouteMismatch when it is forced to,
        or already serves, the other route; an embedder without routes must be on the exact one)."""
        use_route = getattr(embedder, "use_route", None)
        if use_route is not None:
            use_route(self.route)
        elif self.route != getattr(embedder, "route", "exact"):
            raise RouteMismatch(
                f"the index was built with the {self.route} route; {embedder!r} has no such route"
            )

    @property
    def node_vectors(self) -> np.ndarray:
        """(nodes, dim) float32, rows in sorted node-id order."""
        return self.node_search.vectors

    @property
    def edge_vectors(self) -> np.ndarray:
        """(edges, dim) float32, rows in sorted edge-id order."""
        return self.edge_search.vectors

    @classmethod
    def build(
        cls,
        view: GraphView,
        embedder: Embedder,
        config: IndexConfig | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> GraphIndex:
        config = config or IndexConfig()
        started = time.perf_counter()
        route = _bind_for(view, embedder)
        node_vectors = embedder.encode_corpus(view.node_texts(), progress=progress)
        edge_vectors = embedder.encode_corpus(view.edge_texts(), progress=progress)
        embedded = time.perf_counter()
        dim = embedder.dim
        node_vectors = node_vectors if len(node_vectors) else np.zeros((0, dim), np.float32)
        edge_vectors = edge_vectors if len(edge_vectors) else np.zeros((0, dim), np.float32)
        index = cls(
            content_hash=view.content_hash,
            model_id=embedder.model_id,
            node_search=VectorSearch.build(node_vectors, config),
            edge_search=VectorSearch.build(edge_vectors, config),
            config=config,
            embed_seconds=embedded - started,
            route=route,
        )
        index.build_seconds = time.perf_counter() - started
        return index

    def stats(self) -> dict[str, object]:
        """Sizes and timings: what ``karma graph stats`` and the benchmark print."""
        edges = len(self.edge_vectors)
        vector_bytes = int(self.node_vectors.nbytes + self.edge_vectors.nbytes)
        ann_bytes = self.node_search.nbytes() + self.edge_search.nbytes()
        return {
            "nodes": len(self.node_vectors),
            "edges": edges,
            "dim": int(self.node_vectors.shape[1]) if self.node_vectors.ndim == 2 else 0,
            "node_search": self.node_search.kind,
            "edge_search": self.edge_search.kind,
            "vector_bytes": vector_bytes,
            "ann_bytes": ann_bytes,
            "ann_bytes_per_edge": ann_bytes / edges if edges else 0.0,
            "embed_seconds": round(self.embed_seconds, 3),
            "build_seconds": round(self.build_seconds, 3),
        }

    def meta(self) -> dict[str, object]:
        return {
            "content_hash": self.content_hash,
            "model": self.model_id,
            "text_version": TEXT_VERSION,
            "format_version": FORMAT_VERSION,
            "index_config": self.config.model_dump(),
            "route": self.route,
            **self.stats(),
        }

    def save(self, folder: Path) -> None:
        """Write the index files; meta.json last, with the size and sha256 of each, so a half-written,
        altered or replaced index is never taken as valid."""
        folder.mkdir(parents=True, exist_ok=True)
        meta_path = folder / "meta.json"
        if meta_path.exists():
            meta_path.unlink()
        from karma.core.atomic import atomic_path, atomic_write_text
        from karma.core.cache_health import file_records

        written = []
        for name, search in (("node", self.node_search), ("edge", self.edge_search)):
            with atomic_path(folder / f"{name}_vectors.npy") as tmp:
                np.save(tmp, np.ascontiguousarray(search.vectors, dtype=np.float32))
            written.append(f"{name}_vectors.npy")
            if search.ann is not None:
                with atomic_path(folder / f"{name}s.ann") as tmp_ann:
                    search.save(tmp_ann)
                written.append(f"{name}s.ann")
        meta = {**self.meta(), "files": file_records(folder, written)}
        atomic_write_text(meta_path, json.dumps(meta, indent=2, sort_keys=True))

    @classmethod
    def load(
        cls,
        folder: Path,
        view: GraphView,
        model_id: str,
        config: IndexConfig | None = None,
        route: str = "exact",
    ) -> GraphIndex | None:
        """The stored index when it matches this graph, model, settings and embedding route, else None."""
        config = config or IndexConfig()
        meta_path = folder / "meta.json"
        if not meta_path.is_file():
            return None
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        expected = {
            "content_hash": view.content_hash,
            "model": model_id,
            "text_version": TEXT_VERSION,
            "format_version": FORMAT_VERSION,
            "index_config": config.model_dump(),
            "nodes": len(view.node_ids),
            "edges": len(view.edge_ids),
        }
        if any(meta.get(key) != value for key, value in expected.items()):
            return None
        if meta.get("route", "exact") != route:
            return None
        from karma.core.cache_health import check_files, note_rebuilt

        problem = check_files(folder, meta.get("files"))
        if problem is not None:
            note_rebuilt(f"retrieval index {problem}")
            return None
        try:
            searches = []
            for name in ("node", "edge"):
                vectors = np.load(folder / f"{name}_vectors.npy", mmap_mode="r", allow_pickle=False)
                kind = str(meta[f"{name}_search"])
                searches.append(VectorSearch.load(vectors, kind, folder / f"{name}s.ann", config))
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            note_rebuilt(f"retrieval index {folder}: cannot be read back ({exc})")
            return None
        return cls(
            content_hash=view.content_hash,
            model_id=model_id,
            node_search=searches[0],
            edge_search=searches[1],
            config=config,
            loaded_from_disk=True,
            embed_seconds=float(meta.get("embed_seconds", 0.0)),
            build_seconds=float(meta.get("build_seconds", 0.0)),
            route=route,
        )


def _bind_for(view: GraphView, embedder: object) -> str:
    """The embedding route of ``view``'s index (chosen by its node + edge text count), with ``embedder``
    bound to it; ``exact`` for an embedder without routes."""
    bind_route = getattr(embedder, "bind_route", None)
    if bind_route is None:
        return str(getattr(embedder, "route", "exact"))
    return str(bind_route(len(view.node_ids) + len(view.edge_ids)))


def load_or_build_index(
    view: GraphView,
    embedder: Embedder,
    folder: str | Path | None,
    config: IndexConfig | None = None,
    progress: Callable[[int], None] | None = None,
) -> GraphIndex:
    """Reuse the index in ``folder`` when it matches the graph, else build it (and save it there).

    ``folder=None`` builds in memory only. An unwritable folder only costs the rebuild next time.
    """
    if folder is None:
        return GraphIndex.build(view, embedder, config, progress)
    path = Path(folder)
    route = _bind_for(view, embedder)
    stored = GraphIndex.load(path, view, embedder.model_id, config, route=route)
    if stored is not None:
        return stored
    index = GraphIndex.build(view, embedder, config, progress)
    with contextlib.suppress(OSError):
        index.save(path)
    return index


def cached_index(view: GraphView, embedder: Embedder, config: IndexConfig | None = None) -> GraphIndex:
    """The graph's index from the cache root (built and cached there on first use)."""
    folder = default_index_dir(view.content_hash, embedder.model_id, config)
    return load_or_build_index(view, embedder, folder, config)
