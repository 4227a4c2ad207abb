"""BASELINE (karma before issue 17, copied verbatim from git for bench_retrieval): FAISS indexes over the CKG's node and edge texts, persisted and rebuilt only when the graph changes.

On disk (``<graph dir>/retrieval_index/`` by default): ``nodes.faiss``, ``edges.faiss`` and
``meta.json``. The index is reused when ``meta.json`` names the same graph content hash, embedding model
and text format; anything else triggers a rebuild. Rows follow the sorted node / edge ids of the graph,
so the ids themselves need not be stored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.embed import Embedder
from retrieval.graph_view import GraphView

TEXT_VERSION = "3"
"""Bump when node_text / edge_text change: stored vectors then no longer match the texts."""
INDEX_DIRNAME = "retrieval_index"
"""Folder name of the persisted index inside a graph folder."""


@dataclass
class GraphIndex:
    """Node and edge vectors of one graph with a FAISS inner-product index over each."""

    content_hash: str
    """Graph content hash the vectors were computed from."""
    model_id: str
    """Embedding model that produced them."""
    node_vectors: np.ndarray
    """(nodes, dim) float32, rows in sorted node-id order."""
    edge_vectors: np.ndarray
    """(edges, dim) float32, rows in sorted edge-id order."""
    node_index: object
    """faiss.IndexFlatIP over node_vectors."""
    edge_index: object
    """faiss.IndexFlatIP over edge_vectors."""
    loaded_from_disk: bool = False
    """True when the vectors were read back instead of computed (tests and logs use it)."""

    @staticmethod
    def _flat(vectors: np.ndarray):
        import faiss

        index = faiss.IndexFlatIP(vectors.shape[1])
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return index

    @classmethod
    def build(cls, view: GraphView, embedder: Embedder) -> GraphIndex:
        node_vectors = (
            embedder.encode(view.node_texts()) if view.node_ids else np.zeros((0, embedder.dim), np.float32)
        )
        edge_vectors = (
            embedder.encode(view.edge_texts()) if view.edge_ids else np.zeros((0, embedder.dim), np.float32)
        )
        return cls(
            content_hash=view.content_hash,
            model_id=embedder.model_id,
            node_vectors=node_vectors,
            edge_vectors=edge_vectors,
            node_index=cls._flat(node_vectors),
            edge_index=cls._flat(edge_vectors),
        )

    def meta(self) -> dict[str, object]:
        return {
            "content_hash": self.content_hash,
            "model": self.model_id,
            "text_version": TEXT_VERSION,
            "dim": int(self.node_vectors.shape[1]) if self.node_vectors.ndim == 2 else 0,
            "nodes": len(self.node_vectors),
            "edges": len(self.edge_vectors),
        }

    def save(self, folder: Path) -> None:
        """Write the index files; meta.json last, so a half-written index is never taken as valid."""
        import faiss

        folder.mkdir(parents=True, exist_ok=True)
        meta_path = folder / "meta.json"
        if meta_path.exists():
            meta_path.unlink()
        for name, index in (("nodes", self.node_index), ("edges", self.edge_index)):
            tmp = folder / f"{name}.faiss.tmp{os.getpid()}"
            faiss.write_index(index, str(tmp))
            os.replace(tmp, folder / f"{name}.faiss")
        tmp_meta = folder / f"meta.json.tmp{os.getpid()}"
        tmp_meta.write_text(json.dumps(self.meta(), indent=2, sort_keys=True))
        os.replace(tmp_meta, meta_path)

    @classmethod
    def load(cls, folder: Path, view: GraphView, model_id: str) -> GraphIndex | None:
        """The stored index when it matches this graph and model, else None."""
        import faiss

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
            "nodes": len(view.node_ids),
            "edges": len(view.edge_ids),
        }
        if any(meta.get(key) != value for key, value in expected.items()):
            return None
        try:
            node_index = faiss.read_index(str(folder / "nodes.faiss"))
            edge_index = faiss.read_index(str(folder / "edges.faiss"))
        except RuntimeError:
            return None
        dim = int(meta.get("dim", 0))

        def vectors(index) -> np.ndarray:
            if index.ntotal == 0:
                return np.zeros((0, dim), np.float32)
            return np.asarray(index.reconstruct_n(0, index.ntotal), dtype=np.float32)

        return cls(
            content_hash=view.content_hash,
            model_id=model_id,
            node_vectors=vectors(node_index),
            edge_vectors=vectors(edge_index),
            node_index=node_index,
            edge_index=edge_index,
            loaded_from_disk=True,
        )


def load_or_build_index(view: GraphView, embedder: Embedder, folder: str | Path | None) -> GraphIndex:
    """Reuse the index in ``folder`` when it matches the graph, else build it (and save it there)."""
    if folder is None:
        return GraphIndex.build(view, embedder)
    path = Path(folder)
    stored = GraphIndex.load(path, view, embedder.model_id)
    if stored is not None:
        return stored
    index = GraphIndex.build(view, embedder)
    index.save(path)
    return index
