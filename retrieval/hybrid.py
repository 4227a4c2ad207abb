"""The hybrid retriever: vector seeds, k-hop expansion weighted by edge statistics, rerank, budget cut.

1. Seeds. The events the question states in words (``retrieval.stated``, weighted highest), the
   observed visual events of the transition (exact node ids) plus the nodes nearest to the
   question in the FAISS node index. The question is embedded as ``retrieval_text`` (numeric changes
   read as directions); a counterfactual question also embeds its hypothetical clause (``Suppose ...``)
   and its observed events do not seed (they are what did not happen in the hypothetical).
2. Expansion. Activation spreads ``hops`` times along edges in both directions, multiplied by the edge's
   strength (relation prior x normalised weight) and a hop decay. Every edge next to an activated node
   is a candidate, and so is every edge among the question's nearest edges in the FAISS edge index.
3. Rerank, relevance first. An edge's relevance is ``seed(cause) + seed(effect) + similarity weight x
   cosine(question, edge text) + spread weight x spread(cause, effect)``: how much its own ends are the
   question's variables (the stated and observed seeds of step 1; the nodes merely nearest the
   question spread activation, so they decide which edges are candidates, but their own seed is not
   counted) and how close its text is to the question. A stated event's alternatives (the other directions of its variable) take no vector
   seed: the question said which way. Relevance is rounded to ``RELEVANCE_DECIMALS``; the
   strength (relation prior x weight) only breaks ties in it, so a strong ``causes`` edge about
   loudness never outranks the edge about the contrast the question asks about.
4. Cut. The top ``k`` (and, when a token budget is set, as many as fit).

The rules of steps 1-4 (seeds, spreading, the relevance terms, the score, the cut and the budget) are
``retrieval.template``'s, shared with ``neo4j-hybrid``; this module supplies the graph access on node
rows (``node_key``, ``stated``, ``alternatives``; ``hop`` as a sparse product) and the candidate search.

static+rerank (an index of the static embedding route, ``retrieval.static_embed``): the static vectors
only propose, per question, the ``rerank_pool`` nearest nodes, nearest edges and candidate edges (by
their score on static similarities); the exact model's vectors of those texts, computed per text at
query time and cached, then decide with the exact route's own search ranking and ``pair_scores``. When
the pools hold what the exact route would have used, the facts are the exact route's (the same ids,
order and scores on the same vectors); ``route`` says which of exact / static / static+rerank-N ran.

Speed: one float32 copy of the vectors; seeds come from an exact scan or an ANN structure chosen by
the graph's size, rescored exactly (``retrieval.ann``); activation is a sparse (batch x nodes) matrix,
so a question costs what it reaches, and only its candidate edges are scored, never the whole graph.
Question embeddings are cached by text (``retrieval_text`` makes questions that differ only in numbers
share one). Determinism: similarities and scores are rounded before ranking, every exact similarity is a
per-pair reduction, and ties go to the smaller edge id, so batch composition cannot reorder facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.ann import SIM_DECIMALS, IndexConfig
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.embed import Embedder, embed_device
from retrieval.facts import make_fact
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex, load_or_build_index
from retrieval.query import graph_thresholds
from retrieval.template import (
    HybridConfig,
    edge_strength,
    pair_scores,
    question_texts,
    seed_activation,
    spread,
    spread_terms,
    top_candidates,
    within_budget,
    zero_concepts,
)

BATCH = 256
"""Queries scored together (sparse batch x node / edge matrices)."""
PROBE_FACTOR = 4
"""Per question, the ``PROBE_FACTOR x k`` most promising candidates are scored first; their k-th best
score bounds which of the others can still reach the top k."""
PAIR_CHUNK = 8192
"""(query, candidate edge) pairs whose exact similarities are computed in one step (bounded memory)."""
RERANK_POOL = 400
"""Smallest default ``HybridConfig.rerank_pool`` (measured: docs/retrieval.md, "The static route")."""
RERANK_TEXTS_PER_SLOT = 100
"""The default pool grows by one slot per this many indexed texts (rounded up to a hundred slots)."""
RERANK_POOL_MAX = 2000
"""Largest default pool (each slot costs up to ~2.3 MiniLM texts embedded per question)."""
RERANK_ENV = "KARMA_RERANK_POOL"
"""Environment variable that sets the rerank pool when the config leaves it unset."""


def default_rerank_pool(texts: int) -> int:
    """The pool chosen by index size: ``RERANK_POOL``, or one slot per ``RERANK_TEXTS_PER_SLOT`` texts
    rounded up to a hundred, at most ``RERANK_POOL_MAX`` (the overlap with the exact route's top-10
    falls as the graph grows at a fixed pool: 0.990 at 3k entities, 0.966 at 10k, 0.904 at 30k with
    400; 0.965 at 30k with 1,200, the size rule's pool there; docs/retrieval.md)."""
    hundreds = -(-max(texts, 0) // (RERANK_TEXTS_PER_SLOT * 100))
    return min(RERANK_POOL_MAX, max(RERANK_POOL, hundreds * 100))


def rerank_pool(value: int | None = None, texts: int = 0) -> int:
    """The rerank pool: ``value`` when given, else ``$KARMA_RERANK_POOL``, else
    :func:`default_rerank_pool` of the index's ``texts``. ValueError on a negative or non-integer setting."""
    import os

    if value is not None:
        chosen: object = value
    else:
        chosen = os.environ.get(RERANK_ENV) or default_rerank_pool(texts)
    try:
        pool = int(str(chosen).strip())
    except ValueError:
        raise ValueError(f"${RERANK_ENV} must be a whole number >= 0, got {chosen!r}") from None
    if pool < 0:
        raise ValueError(f"the rerank pool must be >= 0, got {pool}")
    return pool


@dataclass
class _Batch:
    """One batch of questions and their vectors, as the retriever's stages share them."""

    queries: Sequence[RetrievalQuery]
    hypo: list[str | None]
    """Each question's hypothetical clause (counterfactuals), else None."""
    hypo_rows: list[int]
    """The questions that have a hypothetical clause, in order (rows of ``hypo_vecs``)."""
    main_vecs: np.ndarray
    hypo_vecs: np.ndarray
    main_exact: np.ndarray | None
    """static+rerank: the exact model's vectors of the questions (None on other routes)."""
    hypo_exact: np.ndarray | None

    def hypo_of(self) -> np.ndarray:
        """Per question, its row in ``hypo_vecs`` (-1 without a hypothetical clause)."""
        rows = np.full(len(self.queries), -1, dtype=np.int64)
        rows[self.hypo_rows] = np.arange(len(self.hypo_rows))
        return rows


@dataclass
class _Pairs:
    """The candidate (question, edge) pairs of a batch, grouped by question, with their ranking terms."""

    query: np.ndarray
    edge: np.ndarray
    """Edge columns; a question's pairs are ``indptr[i]:indptr[i + 1]``, edges ascending."""
    indptr: np.ndarray
    seed_pairs: set[tuple[int, int]]
    """(question, edge column) of the question's nearest edges (kept by static+rerank's pool)."""
    seed_src: np.ndarray
    seed_tgt: np.ndarray
    spread_src: np.ndarray
    spread_tgt: np.ndarray
    concept: np.ndarray
    """Pairs whose edge touches a concept node (no similarity, no spread)."""
    strength: np.ndarray


class HybridRetriever(Retriever):
    """Vector seeds + statistics-weighted graph expansion + rerank."""

    name = "hybrid"
    config_model = HybridConfig
    embeds = True

    @classmethod
    def build(cls, source: Any, config: Mapping[str, Any]) -> HybridRetriever:
        """``get_retriever("hybrid", graph, **config)``: HybridConfig fields plus ``embedder`` (an
        Embedder) or ``model``/``device``, ``index_dir`` (default: cached by graph hash under
        ``cache_dir("index")``; ``False``: in memory only) and ``index_config`` (an IndexConfig)."""
        from karma.core.errors import InputError

        if source is None:
            raise InputError(f"retriever {cls.name!r} needs a graph")
        config = dict(config)
        view = source if isinstance(source, GraphView) else GraphView.of(source)
        embedder = config.pop("embedder", None)
        model = config.pop("model", None)
        device = config.pop("device", None)
        index_dir = config.pop("index_dir", None)
        index_config = config.pop("index_config", None)
        if embedder is None:
            embedder = Embedder(model, device=embed_device(device))
        elif model is not None or device is not None:
            raise TypeError("pass either embedder or model/device, not both")
        if index_dir is None:  # cached by graph hash under the cache root, never in the graph folder
            from retrieval.index import default_index_dir

            index_dir = default_index_dir(view.content_hash, embedder.model_id, index_config)
        elif index_dir is False:
            index_dir = None  # in memory only
        return cls(
            view,
            embedder=embedder,
            index_dir=index_dir,
            config=HybridConfig(**config),
            index_config=index_config,
        )

    def __init__(
        self,
        view: GraphView,
        embedder: Embedder | None = None,
        index: GraphIndex | None = None,
        index_dir: str | Path | None = None,
        config: HybridConfig | None = None,
        index_config: IndexConfig | None = None,
        rerank_embedder: Embedder | None = None,
    ) -> None:
        self.view = view
        self.config = config or HybridConfig()
        self.embedder = embedder or Embedder(device=embed_device())
        if index_dir is not None and self.embedder.disk_cache is None:
            self.embedder.disk_cache = Path(index_dir) / "query_vectors"
        self.index = index or load_or_build_index(view, self.embedder, index_dir, index_config)
        self.index.bind(self.embedder)  # questions embedded by the index's route (exact or static)
        if self.index.content_hash != view.content_hash:
            raise ValueError(
                f"index was built for graph {self.index.content_hash}, not for this graph {view.content_hash}"
            )
        # static+rerank: the static index proposes, the exact model's vectors (of the proposed texts
        # only, computed per text at query time and cached) decide, with the exact route's scoring.
        self._exact: Embedder | None = None
        self.pool = 0
        if self.index.route == "static":
            texts = len(self.index.node_vectors) + len(self.index.edge_vectors)
            self.pool = rerank_pool(self.config.rerank_pool, texts)
            if self.pool:
                self._exact = rerank_embedder or Embedder(
                    self.embedder.model_ref,
                    device=embed_device(self.embedder.device_setting),
                    disk_cache=self.embedder.disk_cache,
                    route="exact",
                )
                if self._exact.route != "exact":
                    raise ValueError("the rerank embedder must be on the exact route")
        self._texts: dict[str, list[str]] = {}
        self.thresholds = graph_thresholds(view.graph.build_config)
        self._node_row = {node_id: row for row, node_id in enumerate(view.node_ids)}
        edges = [view.graph.edges[edge_id] for edge_id in view.edge_ids]
        self._src = np.array([self._node_row[e.source] for e in edges], dtype=np.int64)
        self._tgt = np.array([self._node_row[e.target] for e in edges], dtype=np.int64)
        self._strength = np.array(
            [edge_strength(self.config, e.relation, e.weight, view.max_weight) for e in edges],
            dtype=np.float64,
        )
        self._max_strength = float(self._strength.max()) if len(edges) else 0.0
        from retrieval.stated import StatedEvents

        self._stated_events = StatedEvents({node_id: view.title(node_id) for node_id in view.node_ids})
        # The alternatives of an event: the other events of its ``modality:variable``.
        variable_rows: dict[str, list[int]] = {}
        for row, node_id in enumerate(view.node_ids):
            if view.graph.nodes[node_id].kind != "concept" and node_id.count(":") >= 2:
                variable_rows.setdefault(":".join(node_id.split(":")[:2]), []).append(row)
        self._alternatives = {
            row: [other for other in rows if other != row] for rows in variable_rows.values() for row in rows
        }
        self._concept = np.array(
            [view.graph.nodes[node_id].kind == "concept" for node_id in view.node_ids], dtype=bool
        )
        n, e = len(view.node_ids), len(edges)
        from scipy import sparse

        # Spreading matrix, both directions: node -> node strength x decay (sparse: graphs may be big).
        # Several edges between one pair (causes + text_relation) add up: more evidence, more spread.
        rows = np.concatenate([self._src, self._tgt])
        cols = np.concatenate([self._tgt, self._src])
        values = np.concatenate([self._strength, self._strength]) * self.config.hop_decay
        self._spread = sparse.csr_matrix((values, (rows, cols)), shape=(n, n))
        # Node -> incident edge columns, for the candidate set.
        ones = np.ones(2 * e, dtype=np.float32)
        edge_cols = np.concatenate([np.arange(e), np.arange(e)])
        self._incidence = sparse.csr_matrix((ones, (rows, edge_cols)), shape=(n, e))
        self._facts: dict[int, Fact] = {}

    def memory_bytes(self) -> int:
        """Bytes of the retriever's own arrays (beyond the vectors and the search structures)."""
        arrays = [self._src, self._tgt, self._strength]
        for matrix in (self._spread, self._incidence):
            arrays += [matrix.data, matrix.indices, matrix.indptr]
        return int(sum(array.nbytes for array in arrays))

    @property
    def route(self) -> str:
        """How questions are matched: ``exact`` (the model's vectors), ``static`` (the distilled
        static vectors alone) or ``static+rerank-<pool>`` (static candidates, exact re-scoring)."""
        if self.index.route != "static":
            return self.index.route
        return f"static+rerank-{self.pool}" if self._exact is not None else "static"

    # -- static+rerank: exact vectors of proposed texts only ---------------------------------------
    def _table_texts(self, table: str) -> list[str]:
        texts = self._texts.get(table)
        if texts is None:
            texts = self._texts[table] = self.view.node_texts() if table == "node" else self.view.edge_texts()
        return texts

    def _exact_rows(self, table: str, rows: np.ndarray) -> np.ndarray:
        """(len(rows), dim) exact-model vectors of some node or edge rows: ``Embedder.encode`` of their
        texts (one text per forward pass, so a row's vector never depends on what else is asked;
        cached by text in memory and, with a disk cache, on disk)."""
        assert self._exact is not None
        texts = self._table_texts(table)
        return self._exact.encode([texts[row] for row in rows.tolist()])

    def _nearest(
        self, table: str, vecs: np.ndarray, exact_vecs: np.ndarray | None, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``n`` node or edge rows per query, as ``VectorSearch.search`` returns them. static+rerank:
        the static index's top ``pool`` rows, re-scored with exact vectors (float64 inner product,
        rounded), ranked by (similarity desc, row asc), as the exact route's search ranks its own."""
        search = self.index.node_search if table == "node" else self.index.edge_search
        if self._exact is None or exact_vecs is None or n <= 0:
            return search.search(vecs, n)
        from retrieval.ann import exact_similarities

        _, proposed = search.search(vecs, max(n, self.pool))
        width = min(n, len(search.vectors))
        sims = np.full((len(vecs), width), -np.inf)
        rows = np.full((len(vecs), width), -1, dtype=np.int64)
        for i in range(len(vecs)):
            candidates = np.unique(proposed[i][proposed[i] >= 0])
            table_vectors = self._exact_rows(table, candidates)
            exact = exact_similarities(table_vectors, np.arange(len(candidates)), exact_vecs[i])
            order = np.lexsort((candidates, -exact))[:width]
            sims[i, : len(order)] = exact[order]
            rows[i, : len(order)] = candidates[order]
        return sims, rows

    # -- facts -------------------------------------------------------------------------------------
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
        b, n, e = len(queries), len(self.view.node_ids), len(self.view.edge_ids)
        if n == 0 or e == 0:
            return [RetrievalResult(retriever=self.name, graph_hash=self.view.content_hash) for _ in queries]
        batch = self._embed(queries)
        firm, seeds = self._seeds(batch)  # 1. seeds
        act, touched = self._expand(seeds)  # 2. expansion
        pairs = self._candidates(batch, touched, firm, seeds, act)  # 3. candidates
        scores = self._scores(batch, pairs, self._pooled(batch, pairs), k)  # 4. rerank
        indptr = pairs.indptr
        return [
            self._top(pairs.edge[indptr[i] : indptr[i + 1]], scores[indptr[i] : indptr[i + 1]], k)
            for i in range(b)
        ]

    def _embed(self, queries: Sequence[RetrievalQuery]) -> _Batch:
        """The questions' vectors, and their hypothetical clauses' (counterfactuals)."""
        b = len(queries)
        texts = question_texts(queries)
        query_texts = texts.embedded
        vectors = self.embedder.encode(query_texts)
        # static+rerank: the questions' exact vectors too (static ones propose, exact ones decide)
        exact_vectors = self._exact.encode(query_texts) if self._exact is not None else None
        return _Batch(
            queries=queries,
            hypo=texts.clauses,
            hypo_rows=texts.clause_rows,
            main_vecs=vectors[:b],
            hypo_vecs=vectors[b:],
            main_exact=exact_vectors[:b] if exact_vectors is not None else None,
            hypo_exact=exact_vectors[b:] if exact_vectors is not None else None,
        )

    def _seeds(self, batch: _Batch) -> tuple[Any, Any]:
        """(firm, seeds) as (batch x nodes) CSR matrices, by the template's seed rules
        (``retrieval.template.seed_activation``) on node rows; the nearest nodes of the whole batch
        (question, and the hypothetical clause) come from one search each."""
        config, n = self.config, len(self.view.node_ids)
        sims, rows = self._nearest("node", batch.main_vecs, batch.main_exact, config.node_seeds)
        hypo_sims, hypo_rows = self._nearest("node", batch.hypo_vecs, batch.hypo_exact, config.node_seeds)
        hypo_of = batch.hypo_of().tolist()
        per_query = [
            seed_activation(
                config,
                self,
                query,
                batch.hypo[i],
                _found(sims[i], rows[i]),
                _found(hypo_sims[hypo_of[i]], hypo_rows[hypo_of[i]]) if hypo_of[i] >= 0 else (),
            )
            for i, query in enumerate(batch.queries)
        ]
        return _rows_matrix([s.firm for s in per_query], n), _rows_matrix([s.seeds for s in per_query], n)

    # -- the template's graph access (retrieval.template.SeedGraph, SpreadGraph) on node rows --------
    def node_key(self, node_id: str) -> int | None:
        """The node's row (sorted node ids), None when the graph has no such node."""
        return self._node_row.get(node_id)

    def stated(self, text: str | None) -> list[int]:
        """Rows of the events ``text`` states (``retrieval.stated``)."""
        return [self._node_row[node_id] for node_id in self._stated_events(text)]

    def alternatives(self, key: int) -> list[int]:
        """Rows of the other events of the row's ``modality:variable``."""
        return self._alternatives.get(key, [])

    def hop(self, frontier: Any) -> Any:
        """(batch x nodes) activation sent one edge on, both directions: a sparse product, so the cost
        follows the nodes reached, not the graph's size."""
        return (frontier @ self._spread).tocsr()

    def at_least(self, activation: Any, floor: float) -> Any:
        """The entries of a (batch x nodes) CSR activation at or above ``floor``."""
        from scipy import sparse

        keep = activation.data >= floor
        if keep.all():
            return activation
        row_of = np.repeat(np.arange(activation.shape[0]), np.diff(activation.indptr))
        indptr = np.zeros(activation.shape[0] + 1, dtype=np.int64)
        indptr[1:] = np.cumsum(np.bincount(row_of[keep], minlength=activation.shape[0]))
        return sparse.csr_matrix(
            (activation.data[keep], activation.indices[keep], indptr), shape=activation.shape
        )

    def add(self, left: Any, right: Any) -> Any:
        return left + right

    def _expand(self, seeds: Any) -> tuple[Any, Any]:
        """(activation, touched edges) by the template's spreading (``retrieval.template.spread``).
        Touched: (batch x edges) COO of the edges next to a reached node."""
        act, reached = spread(self.config, self, seeds)
        return act, (reached @ self._incidence).tocoo()

    def _candidates(self, batch: _Batch, touched: Any, firm: Any, seeds: Any, act: Any) -> _Pairs:
        """The (question, edge) candidate pairs: edges next to a reached node, plus the question's
        nearest edges (ANN + exact), grouped by question, with each pair's ranking terms."""
        from scipy import sparse

        config = self.config
        b, e = len(batch.queries), len(self.view.edge_ids)
        sims, rows = self._nearest("edge", batch.main_vecs, batch.main_exact, config.edge_seeds)
        hit_q, hit_e = np.nonzero((rows >= 0) & (sims >= config.min_similarity))
        pair_q = np.concatenate([touched.row.astype(np.int64), hit_q.astype(np.int64)])
        pair_e = np.concatenate([touched.col.astype(np.int64), rows[hit_q, hit_e].astype(np.int64)])
        matrix = sparse.csr_matrix((np.ones(len(pair_q), dtype=np.int8), (pair_q, pair_e)), shape=(b, e))
        matrix.sum_duplicates()
        indptr = matrix.indptr
        pair_e = matrix.indices.astype(np.int64)
        pair_q = np.repeat(np.arange(b, dtype=np.int64), np.diff(indptr))
        # The activation at both ends, beyond the seeds.
        act.sum_duplicates()
        seeds.sum_duplicates()
        src, tgt = self._src[pair_e], self._tgt[pair_e]
        # Relevance counts the firm seeds (stated, observed), the template's rule (step 3): a node only
        # near the question in embedding space spreads activation but is no evidence.
        firm.sum_duplicates()
        concept = self._concept[src] | self._concept[tgt]
        spread_src, spread_tgt = spread_terms(
            np.asarray(act[pair_q, src]).ravel(),
            np.asarray(seeds[pair_q, src]).ravel(),
            np.asarray(act[pair_q, tgt]).ravel(),
            np.asarray(seeds[pair_q, tgt]).ravel(),
            concept,
        )
        return _Pairs(
            query=pair_q,
            edge=pair_e,
            indptr=indptr,
            seed_pairs={
                (int(q), int(rows[q, j])) for q, j in zip(hit_q.tolist(), hit_e.tolist(), strict=True)
            },
            seed_src=np.asarray(firm[pair_q, src]).ravel(),
            seed_tgt=np.asarray(firm[pair_q, tgt]).ravel(),
            spread_src=spread_src,
            spread_tgt=spread_tgt,
            concept=concept,
            strength=self._strength[pair_e],
        )

    def _scores_of(
        self, batch: _Batch, pairs: _Pairs, positions: np.ndarray, exact: bool = True
    ) -> np.ndarray:
        """Scores of some candidate pairs (similarities computed for those pairs only): with the
        index's vectors, or on static+rerank (``exact``) with the exact model's vectors of those
        edges (the static ones when ``exact`` is False: the pool's proxy)."""
        table: np.ndarray | None = None
        columns = pairs.edge[positions]
        q_main, q_hypo = batch.main_vecs, batch.hypo_vecs
        if self._exact is not None and exact:
            assert batch.main_exact is not None and batch.hypo_exact is not None
            unique = np.unique(columns)
            table = self._exact_rows("edge", unique)
            columns = np.searchsorted(unique, columns)
            q_main, q_hypo = batch.main_exact, batch.hypo_exact
        sims = self._pair_similarities(pairs.query[positions], columns, q_main, table)
        hypo_of = batch.hypo_of()[pairs.query[positions]]
        in_hypo = hypo_of >= 0
        if in_hypo.any():
            hypo_sims = self._pair_similarities(hypo_of[in_hypo], columns[in_hypo], q_hypo, table)
            sims[in_hypo] = np.maximum(sims[in_hypo], hypo_sims)
        zero_concepts(pairs.concept[positions], sims)
        return pair_scores(
            self.config,
            pairs.seed_src[positions],
            pairs.seed_tgt[positions],
            pairs.spread_src[positions],
            pairs.spread_tgt[positions],
            sims,
            pairs.strength[positions],
            self._max_strength,
        )

    def _pooled(self, batch: _Batch, pairs: _Pairs) -> np.ndarray:
        """Which candidate pairs go on to scoring: all, or on static+rerank per question the ``pool``
        candidates of best static score (ties by edge column) and the exact edge seeds."""
        pooled = np.ones(len(pairs.query), dtype=bool)
        if self._exact is None:
            return pooled
        proxy = self._scores_of(batch, pairs, np.arange(len(pairs.query)), exact=False)
        seeded = np.zeros(len(pairs.query), dtype=bool)
        for i in range(len(batch.queries)):
            segment = np.arange(pairs.indptr[i], pairs.indptr[i + 1])
            if segment.size <= self.pool:
                continue
            keep = segment[np.lexsort((pairs.edge[segment], -proxy[segment]))[: self.pool]]
            seeded[segment] = [
                (i, int(column)) in pairs.seed_pairs for column in pairs.edge[segment].tolist()
            ]
            pooled[segment] = False
            pooled[keep] = True
        return pooled | seeded

    def _scores(self, batch: _Batch, pairs: _Pairs, pooled: np.ndarray, k: int) -> np.ndarray:
        """Every pooled candidate's score that can matter for the top ``k``; -inf for the others."""
        scores = np.full(len(pairs.query), -np.inf)
        if self.config.similarity_weight < 0:
            positions = np.flatnonzero(pooled)
            scores[positions] = self._scores_of(batch, pairs, positions)
            return scores
        # The score grows with the similarity, which is at most 1: a candidate whose score at
        # similarity 1 stays below the k-th best exact score of the most promising candidates can
        # never reach the top k, so its similarity is not computed. Exact, not approximate.
        upper = pair_scores(
            self.config,
            pairs.seed_src,
            pairs.seed_tgt,
            pairs.spread_src,
            pairs.spread_tgt,
            np.where(pairs.concept, 0.0, 1.0),
            pairs.strength,
            self._max_strength,
        )
        needed = np.zeros(len(pairs.query), dtype=bool)
        probes = PROBE_FACTOR * max(k, 1)
        for i in range(len(batch.queries)):
            segment = np.arange(pairs.indptr[i], pairs.indptr[i + 1])
            segment = segment[pooled[segment]]
            if segment.size <= probes:
                needed[segment] = True
                continue
            probe = segment[np.argsort(-upper[segment], kind="stable")[:probes]]
            scores[probe] = self._scores_of(batch, pairs, probe)
            kth = np.sort(scores[probe])[-k] if k > 0 else np.inf
            needed[segment[(upper[segment] >= kth) & ~np.isfinite(scores[segment])]] = True
        positions = np.flatnonzero(needed)
        scores[positions] = self._scores_of(batch, pairs, positions)
        return scores

    def _pair_similarities(
        self, pair_q: np.ndarray, pair_e: np.ndarray, vecs: np.ndarray, table: np.ndarray | None = None
    ) -> np.ndarray:
        """Exact cosine (float64 inner product, rounded) of each (query row, edge) pair; pairs come
        grouped by query. Each value is a per-row reduction of one edge vector with one query vector,
        so it does not depend on the other pairs (or on the batch). ``table``: the edge vectors to use
        (rows indexed by ``pair_e``), the index's by default."""
        out = np.empty(len(pair_q), dtype=np.float64)
        if len(pair_q) == 0:
            return out
        edge_vectors = self.index.edge_vectors if table is None else table
        starts = np.flatnonzero(np.r_[True, pair_q[1:] != pair_q[:-1]])
        stops = np.r_[starts[1:], len(pair_q)]
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            query = np.asarray(vecs[pair_q[start]], dtype=np.float64)
            for chunk in range(start, stop, PAIR_CHUNK):
                end = min(chunk + PAIR_CHUNK, stop)
                out[chunk:end] = np.einsum(
                    "md,d->m", edge_vectors[pair_e[chunk:end]], query, dtype=np.float64
                )
        return np.round(out, SIM_DECIMALS)

    def _top(self, columns: np.ndarray, scores: np.ndarray, k: int) -> RetrievalResult:
        """Best ``k`` candidates (edge columns with their scores), ties by edge id (= column order, the
        ids are sorted)."""
        order = top_candidates(columns, scores, k)
        if order.size == 0:
            return RetrievalResult(retriever=self.name, graph_hash=self.view.content_hash)
        ranked = (
            self._fact(column, float(score))
            for column, score in zip(columns[order].tolist(), scores[order].tolist(), strict=True)
        )
        facts = within_budget(ranked, self.config.budget_tokens)
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        return self.retrieve_many([query], k)[0]


def _found(sims: np.ndarray, rows: np.ndarray) -> list[tuple[int, float]]:
    """A search result row as (node row, similarity) pairs, without the padding (row -1)."""
    return [(row, sim) for sim, row in zip(sims.tolist(), rows.tolist(), strict=True) if row >= 0]


def _rows_matrix(rows: list[dict[int, float]], width: int):
    """A (len(rows), width) CSR matrix from one {column: value} map per row, columns sorted."""
    from scipy import sparse

    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(row) for row in rows])
    columns = np.array([c for row in rows for c in sorted(row)], dtype=np.int64)
    values = np.array([row[c] for row in rows for c in sorted(row)], dtype=np.float64)
    return sparse.csr_matrix((values, columns, indptr), shape=(len(rows), width))
