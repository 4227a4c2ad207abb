"""BASELINE (karma before issue 17, copied verbatim from git for bench_retrieval): the hybrid retriever: vector seeds, k-hop expansion weighted by edge statistics, rerank, budget cut.

1. Seeds. The observed visual events of the transition (exact node ids) plus the nodes nearest to the
   question in the FAISS node index. The question is embedded as ``retrieval_text`` (numeric changes
   read as directions); a counterfactual question also embeds its hypothetical clause (``Suppose ...``)
   and its observed events do not seed (they are what did not happen in the hypothetical).
2. Expansion. Activation spreads ``hops`` times along edges in both directions, multiplied by the edge's
   strength (relation prior x normalised weight) and a hop decay. Every edge next to an activated node
   is a candidate, and so is every edge among the question's nearest edges in the FAISS edge index.
3. Rerank. An edge scores ``strength x (activation(cause) + activation(effect)) + similarity weight x
   cosine(question, edge text)``: an edge between an observed change and the change the question asks
   about wins, and among the rest the statistics decide.
4. Cut. The top ``k`` (and, when a token budget is set, as many as fit).

Speed: the graph is held as dense arrays, so a batch of questions is a few matrix products; question
embeddings are cached by text (``retrieval_text`` makes questions that differ only in numbers share
one). Determinism: similarities and scores are rounded before ranking and ties go to the smaller edge
id, so float noise from batch composition cannot reorder facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from baseline.index_v1 import GraphIndex, load_or_build_index

from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.embed import Embedder
from retrieval.facts import SCORE_DECIMALS, make_fact
from retrieval.graph_view import GraphView
from retrieval.query import graph_thresholds, hypothetical_clause, retrieval_text
from retrieval.serialize import estimate_tokens
from retrieval.template import HybridConfig, events_from_deltas  # shared, unchanged since

SIM_DECIMALS = 4
"""Cosine similarities are rounded to this many decimals (batch-independent results)."""
BATCH = 256
"""Queries scored together (the score matrix is batch x edges)."""
SEARCH_MARGIN = 4
"""Extra FAISS candidates rescored exactly, so ties at the cut-off resolve the same way every time."""
OMP_MIN_WORK = 50_000_000
"""FAISS searches smaller than this (index rows x queries) run on one thread."""


class HybridRetriever(Retriever):
    """Vector seeds + statistics-weighted graph expansion + rerank."""

    name = "hybrid"

    def __init__(
        self,
        view: GraphView,
        embedder: Embedder | None = None,
        index: GraphIndex | None = None,
        index_dir: str | Path | None = None,
        config: HybridConfig | None = None,
    ) -> None:
        self.view = view
        self.config = config or HybridConfig()
        self.embedder = embedder or Embedder()
        if index_dir is not None and self.embedder.disk_cache is None:
            self.embedder.disk_cache = Path(index_dir) / "query_vectors"
        self.index = index or load_or_build_index(view, self.embedder, index_dir)
        if self.index.content_hash != view.content_hash:
            raise ValueError(
                f"index was built for graph {self.index.content_hash}, not for this graph {view.content_hash}"
            )
        self.thresholds = graph_thresholds(view.graph.build_config)
        self._node_row = {node_id: row for row, node_id in enumerate(view.node_ids)}
        edges = [view.graph.edges[edge_id] for edge_id in view.edge_ids]
        self._src = np.array([self._node_row[e.source] for e in edges], dtype=np.int64)
        self._tgt = np.array([self._node_row[e.target] for e in edges], dtype=np.int64)
        prior = self.config.relation_prior
        floor = self.config.weight_floor
        self._strength = np.array(
            [
                prior.get(e.relation, 0.0) * (floor + (1 - floor) * max(e.weight, 0.0) / view.max_weight)
                for e in edges
            ],
            dtype=np.float64,
        )
        n, e = len(view.node_ids), len(edges)
        from scipy import sparse

        # Spreading matrix, both directions: node -> node strength x decay (sparse: graphs may be big).
        # Several edges between one pair (causes + text_relation) add up: more evidence, more spread.
        rows = np.concatenate([self._src, self._tgt])
        cols = np.concatenate([self._tgt, self._src])
        values = np.concatenate([self._strength, self._strength]) * self.config.hop_decay
        self._spread_t = sparse.csr_matrix((values, (cols, rows)), shape=(n, n))
        # Node -> incident edge columns (transposed: edge x node), for the candidate mask.
        ones = np.ones(2 * e, dtype=np.float32)
        edge_cols = np.concatenate([np.arange(e), np.arange(e)])
        self._incidence_t = sparse.csr_matrix((ones, (edge_cols, rows)), shape=(e, n))
        self._facts: dict[int, Fact] = {}
        self._float64: dict[int, np.ndarray] = {}
        self._edge_vectors64 = self._stored64(self.index.edge_vectors)

    # -- embedding and search ----------------------------------------------------------------------
    def _search(
        self, index, stored: np.ndarray, vectors: np.ndarray, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``n`` rows per query: FAISS proposes ``n + SEARCH_MARGIN`` candidates, which are rescored
        in float64 and ranked by (rounded similarity, row). FAISS's float32 kernels differ between one
        query and a batch by ~1e-7; rescoring keeps seeds identical however queries are grouped."""
        total = index.ntotal
        if n <= 0 or total == 0 or len(vectors) == 0:
            return np.zeros((len(vectors), 0), np.float64), np.zeros((len(vectors), 0), np.int64)
        import faiss

        # OpenMP threads cost more than they save on a CKG-sized index (and spin on a busy machine).
        threads = faiss.omp_get_max_threads()
        if total * len(vectors) < OMP_MIN_WORK:
            faiss.omp_set_num_threads(1)
        try:
            _, proposed = index.search(
                np.ascontiguousarray(vectors, dtype=np.float32), min(n + SEARCH_MARGIN, total)
            )
        finally:
            faiss.omp_set_num_threads(threads)
        width = min(n, total)
        # Vectorised exact rescoring; FAISS fills missing slots with -1 (only when total < n + margin).
        valid = proposed >= 0
        safe = np.where(valid, proposed, 0)
        exact = np.einsum("qmd,qd->qm", self._stored64(stored)[safe], vectors.astype(np.float64))
        exact = np.where(valid, np.round(exact, SIM_DECIMALS), -np.inf)
        # rank by (similarity desc, row asc): sims are multiples of 1e-4, so one integer key orders both
        ticks = np.where(valid, np.round(exact * 10**SIM_DECIMALS), -(10**SIM_DECIMALS) - 1).astype(np.int64)
        key = -ticks * (total + 1) + safe
        order = np.argsort(key, axis=1, kind="stable")[:, :width]
        out_sims = np.take_along_axis(exact, order, axis=1)
        out_rows = np.where(np.isfinite(out_sims), np.take_along_axis(safe, order, axis=1), -1)
        return out_sims, out_rows

    def _stored64(self, stored: np.ndarray) -> np.ndarray:
        """float64 copies of the index vectors, made once."""
        key = id(stored)
        if key not in self._float64:
            self._float64[key] = stored.astype(np.float64)
        return self._float64[key]

    def _fact(self, column: int, score: float) -> Fact:
        cached = self._facts.get(column)
        if cached is None:
            edge = self.view.graph.edges[self.view.edge_ids[column]]
            cached = self._facts[column] = make_fact(self.view, edge, 0.0)
        # text and statistics are per edge; only the score is per question (stats dict is shared, read-only)
        return Fact.model_construct(
            id=cached.id,
            text=cached.text,
            score=score,
            source=cached.source,
            target=cached.target,
            stats=cached.stats,
        )

    # -- the batch path ----------------------------------------------------------------------------
    def retrieve_many(self, queries: Sequence[RetrievalQuery], k: int = 10) -> list[RetrievalResult]:
        results: list[RetrievalResult] = []
        for start in range(0, len(queries), BATCH):  # bounded (batch x edges) score matrices
            results.extend(self._retrieve_batch(queries[start : start + BATCH], k))
        return results

    def _retrieve_batch(self, queries: Sequence[RetrievalQuery], k: int) -> list[RetrievalResult]:
        config = self.config
        b, n, e = len(queries), len(self.view.node_ids), len(self.view.edge_ids)
        if n == 0 or e == 0:
            return [RetrievalResult(retriever=self.name, graph_hash=self.view.content_hash) for _ in queries]
        main_texts = [retrieval_text(q.question) for q in queries]
        hypo = [
            hypothetical_clause(q.question) if q.question_type == "counterfactual" else None for q in queries
        ]
        hypo_rows = [i for i, text in enumerate(hypo) if text]
        vectors = self.embedder.encode(main_texts + [hypo[i] for i in hypo_rows])  # type: ignore[misc]
        main_vecs, hypo_vecs = vectors[:b], vectors[b:]

        # 1. seeds: observed events + FAISS nearest nodes (question, and the hypothetical clause).
        act = np.zeros((b, n), dtype=np.float64)
        for i, query in enumerate(queries):
            weight = (
                config.counterfactual_observed_weight
                if query.question_type == "counterfactual"
                else config.observed_weight
            )
            observed = set(query.observed_events) | set(
                events_from_deltas(query.visual_deltas, self.thresholds)
            )
            for node_id in observed:
                row = self._node_row.get(node_id)
                if row is not None:
                    act[i, row] += weight
        for rows_of, vecs, weight in (
            (list(range(b)), main_vecs, 1.0),
            (hypo_rows, hypo_vecs, config.hypothetical_weight),
        ):
            sims, rows = self._search(self.index.node_index, self.index.node_vectors, vecs, config.node_seeds)
            for j, i in enumerate(rows_of):
                keep = (rows[j] >= 0) & (sims[j] >= config.min_similarity)
                np.add.at(act[i], rows[j][keep], weight * sims[j][keep].astype(np.float64))

        # 2. expansion: activation spreads hop by hop (increments only, so nothing is counted twice).
        step = act
        reached = act.copy()
        for hop in range(config.hops):
            gated = np.where(step >= config.min_activation, step, 0.0)
            step = np.asarray((self._spread_t @ gated.T).T)
            if hop < config.hops - 1:
                reached = reached + step
            act = act + step
        touched = (
            np.asarray((self._incidence_t @ (reached >= config.min_activation).astype(np.float32).T).T) > 0
        )

        # 3. rerank: statistics x activation of both ends + similarity to the question.
        # float64: float32 matrix products round differently for one query and for a batch
        edge_vectors = self._edge_vectors64
        edge_sims = np.round(main_vecs.astype(np.float64) @ edge_vectors.T, SIM_DECIMALS)
        if hypo_rows:
            hypo_sims = np.round(hypo_vecs.astype(np.float64) @ edge_vectors.T, SIM_DECIMALS)
            edge_sims[hypo_rows] = np.maximum(edge_sims[hypo_rows], hypo_sims)
        sims, rows = self._search(
            self.index.edge_index, self.index.edge_vectors, main_vecs, config.edge_seeds
        )
        for i in range(b):
            hit = rows[i][(rows[i] >= 0) & (sims[i] >= config.min_similarity)]
            touched[i, hit] = True
        scores = self._strength * (act[:, self._src] + act[:, self._tgt])
        scores = np.round(scores + config.similarity_weight * np.maximum(edge_sims, 0.0), SCORE_DECIMALS)
        scores[~touched] = -np.inf
        return [self._top(scores[i], k) for i in range(b)]

    def _top(self, row: np.ndarray, k: int) -> RetrievalResult:
        """Best ``k`` finite scores, ties by edge id (= column order, the ids are sorted)."""
        finite = np.flatnonzero(np.isfinite(row))
        if k <= 0 or finite.size == 0:
            return RetrievalResult(retriever=self.name, graph_hash=self.view.content_hash)
        if finite.size > k:
            kth = np.partition(row[finite], finite.size - k)[finite.size - k]
            finite = finite[row[finite] >= kth]  # keeps every tie at the boundary
        order = finite[np.lexsort((finite, -row[finite]))][:k]
        facts: list[Fact] = []
        used = 0
        for column in order.tolist():
            fact = self._fact(column, float(row[column]))
            if self.config.budget_tokens is not None:
                cost = estimate_tokens(fact.text)
                if used + cost > self.config.budget_tokens:
                    break
                used += cost
            facts.append(fact)
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        return self.retrieve_many([query], k)[0]
