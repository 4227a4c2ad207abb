"""Nearest-neighbour candidates over one float32 vector table, rescored exactly.

The vectors are kept once (a float32 array, memory-mapped when loaded from the cache). How candidates
are proposed depends on the table's size (``choose_kind``):

* ``exact``: up to ``IndexConfig.exact_max`` rows, a brute-force FAISS scan of that array (no index
  memory at all);
* ``hnsw``: FAISS HNSW over 8-bit scalar-quantised codes (graph links + 1 byte a dimension), built on
  one thread so the same vectors always give the same graph;
* ``ivf``: from ``IndexConfig.ivf_min`` rows, FAISS IVF with 8-bit codes (faster to build than HNSW at
  millions of rows), trained on a fixed sample.

Every search asks for ``n + margin`` candidates and rescores them exactly (float64 inner products of
the float32 vectors, rounded to ``SIM_DECIMALS``), ranked by (similarity desc, row asc). Rescoring is
per query, so a query's seeds are the same whether it is searched alone or in a batch; and only the
candidates are ever scored exactly, never the whole table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

SIM_DECIMALS = 4
"""Cosine similarities are rounded to this many decimals (batch-independent results)."""
OMP_MIN_WORK = 50_000_000
"""FAISS searches smaller than this (rows x queries) run on one thread."""


class IndexConfig(BaseModel):
    """How the vector search structure is chosen and tuned."""

    exact_max: int = Field(default=4_096, ge=0)
    """Tables up to this many rows are scanned exactly (as fast as an ANN there, and exact)."""
    ivf_min: int = Field(default=2_000_000, ge=1)
    """Tables from this many rows use IVF instead of HNSW."""
    hnsw_m: int = Field(default=32, ge=4)
    """HNSW links per node."""
    hnsw_ef_construction: int = Field(default=80, ge=8)
    """HNSW build beam width."""
    hnsw_ef_search: int = Field(default=128, ge=8)
    """HNSW search beam width (at least the number of candidates asked for)."""
    ivf_nprobe: int = Field(default=32, ge=1)
    """IVF lists visited per query."""
    margin: int = Field(default=24, ge=0)
    """Candidates beyond ``n`` asked from an ANN structure, rescored exactly (4 for exact scans)."""

    def choose_kind(self, rows: int) -> str:
        """``exact``, ``hnsw`` or ``ivf`` for a table of ``rows`` vectors."""
        if rows <= self.exact_max:
            return "exact"
        return "ivf" if rows >= self.ivf_min else "hnsw"


EXACT_MARGIN = 4
"""Extra candidates of an exact scan (float32 scan ties at the cut-off resolve the same way)."""


class VectorSearch:
    """Candidates from an ANN structure (or an exact scan), rescored exactly on the one vector copy."""

    def __init__(self, vectors: np.ndarray, kind: str, ann: object | None, config: IndexConfig) -> None:
        self.vectors = vectors
        """(rows, dim) float32: the only copy of the vectors."""
        self.kind = kind
        """exact / hnsw / ivf."""
        self.ann = ann
        """The FAISS index proposing candidates (None for exact)."""
        self.config = config

    # -- build / persist ---------------------------------------------------------------------------
    @classmethod
    def build(cls, vectors: np.ndarray, config: IndexConfig) -> VectorSearch:
        kind = config.choose_kind(len(vectors))
        if kind == "exact" or len(vectors) == 0:
            return cls(vectors, "exact", None, config)
        import faiss

        dim = vectors.shape[1]
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)  # one thread: the same vectors always give the same structure
        try:
            if kind == "hnsw":
                index = faiss.IndexHNSWSQ(
                    dim, faiss.ScalarQuantizer.QT_8bit, config.hnsw_m, faiss.METRIC_INNER_PRODUCT
                )
                index.hnsw.efConstruction = config.hnsw_ef_construction
                index.train(data)
                index.add(data)
            else:
                nlist = max(16, int(np.sqrt(len(data))))
                quantizer = faiss.IndexFlatIP(dim)
                index = faiss.IndexIVFScalarQuantizer(
                    quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
                )
                sample = np.random.default_rng(0).choice(
                    len(data), size=min(len(data), 64 * nlist), replace=False
                )
                index.cp.seed = 0  # fixed k-means seed: the same vectors give the same lists
                index.train(data[np.sort(sample)])
                index.add(data)
        finally:
            faiss.omp_set_num_threads(threads)
        return cls(vectors, kind, index, config)

    def save(self, path: Path) -> None:
        """Write the ANN structure (nothing for exact scans); the vectors are saved by the caller."""
        if self.ann is None:
            return
        import faiss

        faiss.write_index(self.ann, str(path))

    @classmethod
    def load(cls, vectors: np.ndarray, kind: str, path: Path, config: IndexConfig) -> VectorSearch:
        if kind == "exact":
            return cls(vectors, kind, None, config)
        import faiss

        return cls(vectors, kind, faiss.read_index(str(path)), config)

    def nbytes(self) -> int:
        """Memory of the search structure beyond the vectors (FAISS's serialised size)."""
        if self.ann is None:
            return 0
        import faiss

        return int(faiss.serialize_index(self.ann).nbytes)

    # -- search ------------------------------------------------------------------------------------
    def _propose(self, queries: np.ndarray, want: int) -> np.ndarray:
        import faiss

        total = len(self.vectors)
        threads = faiss.omp_get_max_threads()
        if total * len(queries) < OMP_MIN_WORK:
            faiss.omp_set_num_threads(1)  # OpenMP threads cost more than they save on small searches
        try:
            if self.ann is None:
                _, rows = faiss.knn(
                    np.ascontiguousarray(queries, dtype=np.float32),
                    np.ascontiguousarray(self.vectors, dtype=np.float32),
                    want,
                    metric=faiss.METRIC_INNER_PRODUCT,
                )
            else:
                if self.kind == "hnsw":
                    params = faiss.SearchParametersHNSW(efSearch=max(self.config.hnsw_ef_search, want))
                else:
                    params = faiss.SearchParametersIVF(nprobe=self.config.ivf_nprobe)
                _, rows = self.ann.search(
                    np.ascontiguousarray(queries, dtype=np.float32), want, params=params
                )
        finally:
            faiss.omp_set_num_threads(threads)
        return np.asarray(rows, dtype=np.int64)

    def search(self, queries: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``n`` rows per query: (similarities rounded to SIM_DECIMALS, rows); -1 rows pad."""
        total = len(self.vectors)
        if n <= 0 or total == 0 or len(queries) == 0:
            return np.zeros((len(queries), 0), np.float64), np.zeros((len(queries), 0), np.int64)
        margin = EXACT_MARGIN if self.ann is None else self.config.margin
        proposed = self._propose(queries, min(n + margin, total))
        width = min(n, total)
        sims = np.full((len(queries), width), -np.inf)
        rows = np.full((len(queries), width), -1, dtype=np.int64)
        for i in range(len(queries)):
            candidates = np.unique(proposed[i][proposed[i] >= 0])
            exact = exact_similarities(self.vectors, candidates, queries[i])
            order = np.lexsort((candidates, -exact))[:width]
            sims[i, : len(order)] = exact[order]
            rows[i, : len(order)] = candidates[order]
        return sims, rows


def exact_similarities(vectors: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Inner products of ``vectors[rows]`` with ``query`` in float64, rounded to SIM_DECIMALS.

    Each value depends only on its own row and the query (a per-row reduction), so the same pair gets
    the same similarity in any batch; the hybrid retriever scores its candidate edges the same way.
    """
    if len(rows) == 0:
        return np.zeros(0, dtype=np.float64)
    query64 = np.asarray(query, dtype=np.float64)
    return np.round(np.einsum("md,d->m", vectors[rows], query64, dtype=np.float64), SIM_DECIMALS)
