"""BASELINE (karma before issue 17, for bench_retrieval_scale): the hybrid retriever's old dense scoring.

Only what the library no longer has is kept here: every query is scored against every edge, in
(batch x edges) float64 matrices, with seeds spread over the whole graph as a dense activation matrix.
Everything else is the library's own code: the seeds' nearest nodes and edges come from
``retrieval.ann.VectorSearch`` exact scans (FAISS brute force proposing ``n + 4`` candidates, rescored
in float64 and ranked by rounded similarity then row, as the old FAISS flat index and its rescoring
did), and the configuration, observed events, edge strength, top-k with ties and the token budget are
``retrieval.template``'s; the fact texts are ``retrieval.facts.make_fact``'s.

The old algorithm: 1. seeds = observed visual events (exact node ids; a counterfactual's own do not
count) + the nodes nearest to the question (and its hypothetical clause); 2. activation spreads
``hops`` times along edges both ways, times strength and hop decay; 3. an edge scores ``strength x
(activation(cause) + activation(effect)) + similarity weight x cosine(question, edge text)``, among
the edges next to an activated node or near the question; 4. the top ``k``, within the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.facts import SCORE_DECIMALS, make_fact
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex
from retrieval.query import graph_thresholds, hypothetical_clause, retrieval_text
from retrieval.template import HybridConfig, edge_strength, events_from_deltas, top_candidates, within_budget

SIM_DECIMALS = 4
"""Cosine similarities are rounded to this many decimals (batch-independent results)."""
BATCH = 256
"""Queries scored together (the score matrix is batch x edges)."""


class HybridRetriever(Retriever):
    """Vector seeds + statistics-weighted graph expansion + rerank, scored densely over all edges."""

    name = "hybrid"

    def __init__(
        self, view: GraphView, embedder, index: GraphIndex, config: HybridConfig | None = None
    ) -> None:
        """``index``: the graph's vectors with exact-scan searches (``VectorSearch`` of kind exact)."""
        self.view = view
        self.config = config or HybridConfig()
        self.embedder = embedder
        self.index = index
        if index.content_hash != view.content_hash:
            raise ValueError(
                f"index was built for graph {index.content_hash}, not for this graph {view.content_hash}"
            )
        self.thresholds = graph_thresholds(view.graph.build_config)
        self._node_row = {node_id: row for row, node_id in enumerate(view.node_ids)}
        edges = [view.graph.edges[edge_id] for edge_id in view.edge_ids]
        self._src = np.array([self._node_row[e.source] for e in edges], dtype=np.int64)
        self._tgt = np.array([self._node_row[e.target] for e in edges], dtype=np.int64)
        self._strength = np.array(
            [edge_strength(self.config, e.relation, e.weight, view.max_weight) for e in edges],
            dtype=np.float64,
        )
        n, e = len(view.node_ids), len(edges)
        from scipy import sparse

        # Spreading matrix, both directions: node -> node strength x decay (sparse: graphs may be big).
        rows = np.concatenate([self._src, self._tgt])
        cols = np.concatenate([self._tgt, self._src])
        values = np.concatenate([self._strength, self._strength]) * self.config.hop_decay
        self._spread_t = sparse.csr_matrix((values, (cols, rows)), shape=(n, n))
        # Node -> incident edge columns (transposed: edge x node), for the candidate mask.
        ones = np.ones(2 * e, dtype=np.float32)
        edge_cols = np.concatenate([np.arange(e), np.arange(e)])
        self._incidence_t = sparse.csr_matrix((ones, (edge_cols, rows)), shape=(e, n))
        self._facts: dict[int, Fact] = {}
        # The old memory profile: a float64 copy of every edge vector, for the dense similarities.
        self._edge_vectors64 = np.asarray(index.edge_vectors, dtype=np.float64)
        self._columns = np.arange(e, dtype=np.int64)

    def _fact(self, column: int, score: float) -> Fact:
        cached = self._facts.get(column)
        if cached is None:
            edge = self.view.graph.edges[self.view.edge_ids[column]]
            cached = self._facts[column] = make_fact(self.view, edge, 0.0)
        return Fact.model_construct(
            id=cached.id, text=cached.text, score=score, source=cached.source, target=cached.target,
            stats=cached.stats,
        )  # fmt: skip

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

        # 1. seeds: observed events + nearest nodes (question, and the hypothetical clause).
        act = np.zeros((b, n), dtype=np.float64)
        for i, query in enumerate(queries):
            counterfactual = query.question_type == "counterfactual"
            weight = config.counterfactual_observed_weight if counterfactual else config.observed_weight
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
            sims, rows = self.index.node_search.search(vecs, config.node_seeds)
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

        # 3. rerank, densely: statistics x activation of both ends + similarity to the question.
        edge_sims = np.round(main_vecs.astype(np.float64) @ self._edge_vectors64.T, SIM_DECIMALS)
        if hypo_rows:
            hypo_sims = np.round(hypo_vecs.astype(np.float64) @ self._edge_vectors64.T, SIM_DECIMALS)
            edge_sims[hypo_rows] = np.maximum(edge_sims[hypo_rows], hypo_sims)
        sims, rows = self.index.edge_search.search(main_vecs, config.edge_seeds)
        for i in range(b):
            touched[i, rows[i][(rows[i] >= 0) & (sims[i] >= config.min_similarity)]] = True
        scores = self._strength * (act[:, self._src] + act[:, self._tgt])
        scores = np.round(scores + config.similarity_weight * np.maximum(edge_sims, 0.0), SCORE_DECIMALS)
        scores[~touched] = -np.inf
        return [self._top(scores[i], k) for i in range(b)]

    def _top(self, row: np.ndarray, k: int) -> RetrievalResult:
        """Best ``k`` finite scores, ties by edge id (= column order, the ids are sorted), in the budget."""
        order = top_candidates(self._columns, row, k)
        facts = within_budget((self._fact(int(c), float(row[c])) for c in order), self.config.budget_tokens)
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        return self.retrieve_many([query], k)[0]
