"""``neo4j-hybrid``: the hybrid retriever's algorithm run where the graph lives, in Neo4j.

Nothing of the graph's edges or vectors is loaded into memory (only node ids, titles and kinds, for
the stated events, a variable's alternatives and the concept rule of ``retrieval.hybrid``). Per question, in parameterised Cypher (one read
transaction):

1. Split guard (``strict_split``): the question's video must be in the pushed graph's
   ``exclude_videos`` (checked in the query against the provenance node).
2. Seeds: the observed events (by node id), the events the question states (``retrieval.stated``;
   their variable's other directions take no vector seed) plus the nearest nodes from the native vector index
   ``karma_node_embedding`` (candidates rescored exactly in Cypher: a float64 inner product of the
   stored float32 vectors, rounded as numpy rounds), for the question and a counterfactual's
   hypothetical clause.
3. Expansion: activation spreads ``hops`` times over the relationships in both directions, one
   Cypher query per hop, each edge carrying ``strength x decay`` computed from its relation and weight
   with the in-memory retriever's formula.
4. Candidates: every relationship next to a reached node, plus the question's nearest relationships
   from the per-type relationship vector indexes; for each the database returns the exact
   similarities to the question (and the hypothetical clause) and its ends.
5. Rank: the candidates are scored by ``retrieval.template.pair_scores`` and cut to ``k`` with ties by
   edge id; the facts' text and statistics are read back for the top ``k`` only.

Steps 2, 3 and 5 run the template the in-memory retriever runs (``retrieval.template``: seed rules,
spreading, relevance terms, score, cut, budget), so the two cannot drift; this module supplies the
graph access (``_CypherGraph``: node ids, dict activations, one query per hop) and the queries.

Vectors come from ``karma graph push GRAPH --embeddings`` (the same cached index the in-memory hybrid
uses), and question vectors from the same ``Embedder.encode``, so on the same graph both retrievers
return the same facts in the same order (tests/graph/neo4j_server/test_neo4j_hybrid.py). String order
is Python's (code points); ids are compared in the client where the order decides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graph.model import CausalGraph, CkgEdge
from graph.neo4j.errors import KarmaNeo4jError, Neo4jGraphMismatchError
from graph.neo4j.schema import EDGE_PROPERTIES, GRAPH_LABEL, NODE_LABEL, RELATION_TYPES, edge_from_props
from graph.neo4j.vectors import GRAPH_NAME, NODE_VECTOR_INDEX, relationship_vector_index
from retrieval.ann import SIM_DECIMALS
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.embed import Embedder, embed_device
from retrieval.facts import make_fact
from retrieval.leakage import SplitLeakageError
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

if TYPE_CHECKING:
    import neo4j

CANDIDATE_FACTOR = 4
"""Vector-index candidates asked per seed wanted (at least ``CANDIDATE_MIN``), rescored exactly."""
CANDIDATE_MIN = 50

_SCALE = float(10**SIM_DECIMALS)


def _dot(vector: str, param: str) -> str:
    """Cypher: the float64 inner product of a stored vector and a parameter, rounded like numpy
    (``rint(x * 10^d) / 10^d``, half to even)."""
    return (
        f"round(reduce(s = 0.0, i IN range(0, size(${param}) - 1) | s + {vector}[i] * ${param}[i]) "
        f"* {_SCALE!r}, 0, 'HALF_EVEN') / {_SCALE!r}"
    )


_STRENGTH = (
    "coalesce($prior[r.relation], 0.0) * ($floor + (1 - $floor) * "
    "(CASE WHEN r.weight > 0.0 THEN r.weight ELSE 0.0 END) / $max_weight)"
)

GUARD_QUERY = (
    f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) UNWIND $videos AS v "
    "RETURN v AS video, v IS NOT NULL AND v IN coalesce(g.exclude_videos, []) AS excluded"
)
NODE_SEED_QUERY = (
    "CALL db.index.vector.queryNodes($index, $candidates, $vec) YIELD node "
    "WITH node.id AS id, node.embedding AS emb "
    f"WITH id, {_dot('emb', 'vec')} AS sim "
    "ORDER BY sim DESC, id ASC LIMIT $n "
    "WITH id, sim WHERE sim >= $min_similarity RETURN id, sim"
)
NODE_SEED_EXACT_QUERY = (
    f"MATCH (node:{NODE_LABEL}) WHERE node.embedding IS NOT NULL "
    "WITH node, vector.similarity.cosine(node.embedding, $vec) AS c WHERE c IS NOT NULL "
    "ORDER BY c DESC LIMIT $candidates "
    "WITH node.id AS id, node.embedding AS emb "
    f"WITH id, {_dot('emb', 'vec')} AS sim "
    "ORDER BY sim DESC, id ASC LIMIT $n "
    "WITH id, sim WHERE sim >= $min_similarity RETURN id, sim"
)
SPREAD_QUERY = (
    "CALL { "
    f"UNWIND $frontier AS f MATCH (:{NODE_LABEL} {{id: f.id}})-[r]->(v:{NODE_LABEL}) WHERE type(r) IN $types "
    f"RETURN v.id AS id, f.act * (({_STRENGTH}) * $decay) AS a "
    "UNION ALL "
    f"UNWIND $frontier AS f MATCH (:{NODE_LABEL} {{id: f.id}})<-[r]-(v:{NODE_LABEL}) WHERE type(r) IN $types "
    f"RETURN v.id AS id, f.act * (({_STRENGTH}) * $decay) AS a "
    "} RETURN id, sum(a) AS a"
)
_EDGE_SEEDS_INDEX = (
    "UNWIND $rel_indexes AS idx "
    "CALL db.index.vector.queryRelationships(idx, $candidates, $vec) YIELD relationship "
    "WITH relationship AS r, relationship.embedding AS emb "
)
_EDGE_SEEDS_EXACT = (
    f"MATCH (:{NODE_LABEL})-[x]->(:{NODE_LABEL}) WHERE size($rel_indexes) > 0 AND type(x) IN $types "
    "AND x.embedding IS NOT NULL "
    "WITH x, vector.similarity.cosine(x.embedding, $vec) AS c WHERE c IS NOT NULL "
    "ORDER BY c DESC LIMIT $candidates "
    "WITH x AS r, x.embedding AS emb "
)


def candidate_query(exact: bool) -> str:
    """The candidate query; edge seeds from the vector indexes or, ``exact``, from a full scan."""
    return CANDIDATE_QUERY.replace("<EDGE_SEEDS>", _EDGE_SEEDS_EXACT if exact else _EDGE_SEEDS_INDEX)


CANDIDATE_QUERY = (
    "CALL { "
    f"UNWIND $reached AS nid MATCH (:{NODE_LABEL} {{id: nid}})-[r]-(:{NODE_LABEL}) WHERE type(r) IN $types "
    "RETURN r "
    "UNION "
    "<EDGE_SEEDS>"
    f"WITH r, {_dot('emb', 'vec')} AS sim "
    "ORDER BY sim DESC, r.id ASC LIMIT $edge_seeds "
    "WITH r, sim WHERE sim >= $min_similarity RETURN r "
    "} "
    "WITH r, startNode(r) AS a, endNode(r) AS b, r.embedding AS emb "
    "RETURN r.id AS id, a.id AS source, b.id AS target, r.relation AS relation, r.weight AS weight, "
    f"{_dot('emb', 'vec')} AS sim, "
    f"CASE WHEN $hvec IS NULL THEN null ELSE {_dot('emb', 'hvec')} END AS hsim, "
    "elementId(r) AS eid"
)
FACT_QUERY = (
    "UNWIND $eids AS eid MATCH (a)-[r]->(b) WHERE elementId(r) = eid "
    f"RETURN eid, type(r) AS type, r {{{', '.join('.' + p for p in ('id', *EDGE_PROPERTIES))}}} AS r, "
    "a.id AS source, a.title AS source_title, b.id AS target, b.title AS target_title"
)


class Neo4jRetrievalError(KarmaNeo4jError):
    """The database cannot answer (no pushed graph, no embeddings, another graph or model): one line,
    exit code 1, naming what to push."""


class Neo4jGraphMismatch(Neo4jRetrievalError, Neo4jGraphMismatchError):
    """The database holds another graph than the one this retriever was asked to read."""


class _Titles:
    """The ``title`` lookup ``make_fact`` needs, for the few nodes of the returned facts."""

    def __init__(self, titles: dict[str, str]) -> None:
        self._titles = titles

    def title(self, node_id: str) -> str:
        return self._titles.get(node_id, node_id)


class Neo4jHybridRetriever(Retriever):
    """The hybrid algorithm in Cypher over the pushed graph and its vector indexes."""

    name = "neo4j-hybrid"
    config_model = HybridConfig
    embeds = True
    guards_split = True  # the split is checked inside its Cypher query
    needs_graph = False  # None: connect with the NEO4J_* environment

    @classmethod
    def option_names(cls) -> list[str]:
        """HybridConfig's fields and ``search`` (``index`` or ``exact``)."""
        return [*super().option_names(), "search"]

    @classmethod
    def build(cls, source: Any, config: Mapping[str, Any]) -> Neo4jHybridRetriever:
        """See :func:`make_neo4j_hybrid`."""
        return make_neo4j_hybrid(source, dict(config))

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str = "neo4j",
        embedder: Embedder | None = None,
        config: HybridConfig | None = None,
        strict_split: bool = False,
        expected_hash: str | None = None,
        owns_driver: bool = False,
        search: str = "index",
    ) -> None:
        if search not in ("index", "exact"):
            raise ValueError(f"search must be 'index' or 'exact', got {search!r}")
        self.search = search
        """``index``: seeds from the native vector indexes (approximate, like the in-memory HNSW);
        ``exact``: from a full scan (cosine prefilter, exact rescoring), like the in-memory exact scan."""
        self._seed_query = NODE_SEED_EXACT_QUERY if search == "exact" else NODE_SEED_QUERY
        self._candidate_query = candidate_query(search == "exact")
        self.driver = driver
        self.database = database
        self.embedder = embedder or Embedder(device=embed_device())
        self.config = config or HybridConfig()
        self.strict_split = strict_split
        self._owns_driver = owns_driver
        self.view = None  # nothing of the graph is held in memory
        self._types = sorted(RELATION_TYPES.values())
        provenance = self._provenance(expected_hash)
        self._rel_indexes = [
            relationship_vector_index(t) for t in provenance.get("embedding_rel_types") or []
        ]
        self.thresholds = graph_thresholds(json.loads(provenance.get("build_config") or "{}"))
        self._load_nodes()
        self._load_max_weights()

    def _provenance(self, expected_hash: str | None) -> dict[str, Any]:
        """The pushed graph's provenance node, checked against the expected graph and the embedder."""
        records, _, _ = self.driver.execute_query(
            f"MATCH (g:{GRAPH_LABEL} {{name: $name}}) RETURN g {{.*}} AS g",
            name=GRAPH_NAME,
            database_=self.database,
        )
        if not records:
            raise Neo4jRetrievalError(
                "no karma graph in this Neo4j database: karma graph push GRAPH_DIR --embeddings"
            )
        provenance = records[0]["g"]
        self.content_hash: str = provenance["hash"]
        if expected_hash is not None and expected_hash != self.content_hash:
            raise Neo4jGraphMismatch(
                f"Neo4j holds graph {self.content_hash}, not the graph this command reads ({expected_hash}): "
                "push that graph with karma graph push GRAPH_DIR --embeddings",
                held=self.content_hash,
                wanted=expected_hash,
            )
        if provenance.get("embedding_hash") != self.content_hash:
            raise Neo4jRetrievalError(
                f"graph {self.content_hash} in Neo4j has no embeddings pushed for it: "
                "karma graph push GRAPH_DIR --embeddings"
            )
        if provenance.get("embedding_model") != self.embedder.model_id:
            raise Neo4jRetrievalError(
                f"the vectors in Neo4j come from model {provenance.get('embedding_model')!r}, the question "
                f"embedder is {self.embedder.model_id!r}: use the same model or push again with --embeddings"
            )
        return provenance

    def _load_nodes(self) -> None:
        """Node ids, titles and kinds (no vectors, no edges): what the in-memory retriever's stated
        events, a variable's alternatives and the concept rule read (retrieval.hybrid, steps 1 and 4)."""
        records, _, _ = self.driver.execute_query(
            f"MATCH (n:{NODE_LABEL}) RETURN n.id AS id, n.title AS title, n.kind AS kind",
            database_=self.database,
        )
        from retrieval.stated import StatedEvents

        titles = {r["id"]: r["title"] if r["title"] is not None else r["id"] for r in records}
        self._concepts = {r["id"] for r in records if r["kind"] == "concept"}
        self._titles = titles
        self._stated = StatedEvents(titles)
        variables: dict[str, list[str]] = {}
        for node_id in sorted(titles):
            if node_id not in self._concepts and node_id.count(":") >= 2:
                variables.setdefault(":".join(node_id.split(":")[:2]), []).append(node_id)
        self._alternatives = {
            node_id: [other for other in ids if other != node_id]
            for ids in variables.values()
            for node_id in ids
        }

    def _load_max_weights(self) -> None:
        """The largest edge weight and edge strength, which the scoring normalises by."""
        records, _, _ = self.driver.execute_query(
            f"MATCH (:{NODE_LABEL})-[r]->(:{NODE_LABEL}) WHERE type(r) IN $types "
            "RETURN r.relation AS relation, max(r.weight) AS weight",
            types=self._types,
            database_=self.database,
        )
        by_relation = {r["relation"]: float(r["weight"]) for r in records if r["weight"] is not None}
        self.max_weight = max([*by_relation.values(), 1e-9])
        # strength is monotone in the weight, so its maximum is at each relation's largest weight
        self.max_strength = max(
            [edge_strength(self.config, rel, w, self.max_weight) for rel, w in by_relation.items()],
            default=0.0,
        )

    def close(self) -> None:
        if self._owns_driver:
            self.driver.close()

    # -- one question --------------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        config = self.config
        return {
            "types": self._types,
            "prior": dict(config.relation_prior),
            "floor": float(config.weight_floor),
            "max_weight": self.max_weight,
            "decay": float(config.hop_decay),
        }

    def _candidates(self, n: int) -> int:
        return max(CANDIDATE_FACTOR * n, CANDIDATE_MIN)

    def _node_seeds(self, tx, vector: list[float]) -> list[tuple[str, float]]:
        if self.config.node_seeds <= 0:
            return []
        rows = tx.run(
            self._seed_query,
            index=NODE_VECTOR_INDEX,
            candidates=self._candidates(self.config.node_seeds),
            vec=vector,
            n=self.config.node_seeds,
            min_similarity=float(self.config.min_similarity),
        )
        return [(r["id"], float(r["sim"])) for r in rows]

    def _retrieve_one(
        self,
        tx,
        query: RetrievalQuery,
        main: list[float],
        hypo: list[float] | None,
        k: int,
        clause: str | None = None,
    ):
        graph = _CypherGraph(self, tx)
        near_question = self._node_seeds(tx, main)
        near_clause = self._node_seeds(tx, hypo) if hypo is not None else []
        start = seed_activation(self.config, graph, query, clause, near_question, near_clause)
        act, reached = spread(self.config, graph, start.seeds)
        records = self._candidate_records(tx, reached, main, hypo)
        if not records:
            return RetrievalResult(retriever=self.name, graph_hash=self.content_hash)
        ids = np.array([r["id"] for r in records])
        scores = self._scores(records, start.seeds, start.firm, act, hypo is not None)
        order = top_candidates(ids, scores, k)
        return self._facts(tx, [records[i]["eid"] for i in order], [float(scores[i]) for i in order])

    def _candidate_records(
        self, tx, reached: dict[str, float], main: list[float], hypo: list[float] | None
    ) -> list[Any]:
        """Step 3: the candidate edges with their exact similarities, from the database."""
        config = self.config
        return list(
            tx.run(
                self._candidate_query,
                reached=sorted(reached),  # the template's reached nodes (at or above min_activation)
                types=self._types,
                rel_indexes=self._rel_indexes if config.edge_seeds > 0 else [],
                candidates=self._candidates(config.edge_seeds),
                edge_seeds=config.edge_seeds,
                min_similarity=float(config.min_similarity),
                vec=main,
                hvec=hypo,
            )
        )

    def _scores(
        self,
        records: list[Any],
        seeds: dict[str, float],
        firm: dict[str, float],
        act: dict[str, float],
        has_hypo: bool,
    ) -> np.ndarray:
        """Step 4: the in-memory retriever's scoring function on the candidates."""
        config = self.config
        sims = np.array([float(r["sim"]) for r in records])
        if has_hypo:
            sims = np.maximum(sims, np.array([float(r["hsim"]) for r in records]))
        concept_pair = np.array(
            [r["source"] in self._concepts or r["target"] in self._concepts for r in records], dtype=bool
        )
        spread_src, spread_tgt = spread_terms(
            np.array([act.get(r["source"], 0.0) for r in records]),
            np.array([seeds.get(r["source"], 0.0) for r in records]),
            np.array([act.get(r["target"], 0.0) for r in records]),
            np.array([seeds.get(r["target"], 0.0) for r in records]),
            concept_pair,
        )
        # relevance counts the firm seeds (the template's rule)
        seed_src = np.array([firm.get(r["source"], 0.0) for r in records])
        seed_tgt = np.array([firm.get(r["target"], 0.0) for r in records])
        zero_concepts(concept_pair, sims)
        strength = np.array(
            [
                edge_strength(config, r["relation"], float(r["weight"] or 0.0), self.max_weight)
                for r in records
            ]
        )
        return pair_scores(
            config, seed_src, seed_tgt, spread_src, spread_tgt, sims, strength, self.max_strength
        )

    def _facts(self, tx, eids: list[str], scores: list[float]) -> RetrievalResult:
        rows = {r["eid"]: r for r in tx.run(FACT_QUERY, eids=eids)}

        def fact(eid: str, score: float) -> Fact:
            row = rows[eid]
            edge: CkgEdge = edge_from_props(dict(row["r"]), row["source"], row["target"], row["type"])
            titles = _Titles({row["source"]: row["source_title"], row["target"]: row["target_title"]})
            return make_fact(titles, edge, score)  # type: ignore[arg-type]

        ranked = (fact(eid, score) for eid, score in zip(eids, scores, strict=True))
        facts = within_budget(ranked, self.config.budget_tokens)
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.content_hash)

    # -- the interface ---------------------------------------------------------------------------------
    def _guard(self, tx, queries: Sequence[RetrievalQuery]) -> None:
        if not self.strict_split:
            return
        rows = tx.run(GUARD_QUERY, name=GRAPH_NAME, videos=[q.video_id for q in queries])
        for query, row in zip(queries, rows, strict=True):
            if query.video_id is None:
                raise SplitLeakageError(
                    "strict split: the query names no video_id, so the split cannot be checked"
                )
            if not row["excluded"]:
                raise SplitLeakageError(
                    f"strict split: video {query.video_id!r} was not excluded when graph {self.content_hash} "
                    "was built; build the graph with --exclude-videos (or folds) for the videos you evaluate"
                )

    def retrieve_many(self, queries: Sequence[RetrievalQuery], k: int = 10) -> list[RetrievalResult]:
        if not queries:
            return []
        texts = question_texts(queries)
        hypo = texts.clauses
        vectors = self.embedder.encode(texts.embedded)
        hypo_vec: dict[int, list[float]] = {
            i: vectors[len(queries) + j].astype(np.float64).tolist() for j, i in enumerate(texts.clause_rows)
        }

        def work(tx) -> list[RetrievalResult]:
            self._guard(tx, queries)
            return [
                self._retrieve_one(tx, q, vectors[i].astype(np.float64).tolist(), hypo_vec.get(i), k, hypo[i])
                for i, q in enumerate(queries)
            ]

        with self.driver.session(database=self.database) as session:
            return session.execute_read(work)

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        return self.retrieve_many([query], k)[0]


class _CypherGraph:
    """The template's graph access (``retrieval.template.SeedGraph``, ``SpreadGraph``) in one read
    transaction: node keys are node ids, activation is a node id -> float dict, a hop is one Cypher
    query (parameters only)."""

    def __init__(self, retriever: Neo4jHybridRetriever, tx: Any) -> None:
        self.retriever = retriever
        self.tx = tx
        self.thresholds = retriever.thresholds

    def node_key(self, node_id: str) -> str | None:
        return node_id if node_id in self.retriever._titles else None

    def stated(self, text: str | None) -> list[str]:
        return self.retriever._stated(text)

    def alternatives(self, key: str) -> list[str]:
        return self.retriever._alternatives.get(key, [])

    def hop(self, frontier: dict[str, float]) -> dict[str, float]:
        if not frontier:
            return {}
        rows = self.tx.run(
            SPREAD_QUERY,
            frontier=[{"id": i, "act": a} for i, a in sorted(frontier.items())],
            **self.retriever._params(),
        )
        return {r["id"]: float(r["a"]) for r in rows}

    def at_least(self, activation: dict[str, float], floor: float) -> dict[str, float]:
        return {i: a for i, a in sorted(activation.items()) if a >= floor}

    def add(self, left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
        out = dict(left)
        for key, value in right.items():
            out[key] = out[key] + value if key in out else value
        return out


def make_neo4j_hybrid(source: object, config: dict[str, object]) -> Neo4jHybridRetriever:
    """``get_retriever("neo4j-hybrid", source, **config)``: ``source`` is a Neo4jStore (its driver is
    used), None (connect with ``settings`` or the NEO4J_* environment), or the graph (folder,
    CausalGraph, GraphView) the database must hold. Config: HybridConfig fields, ``embedder`` or
    ``model`` and ``device`` (``retrieval.embed.embed_device``), ``settings`` (a Neo4jSettings),
    ``driver``, ``strict_split``, ``search`` (``index``: the native vector indexes, approximate;
    ``exact``: a full scan, as the in-memory exact scan)."""
    from graph.neo4j.connection import Neo4jSettings, open_driver
    from retrieval.graph_view import GraphView

    strict_split = bool(config.pop("strict_split", False))
    embedder = config.pop("embedder", None)
    model = config.pop("model", None)
    device = config.pop("device", None)
    settings = config.pop("settings", None)
    driver = config.pop("driver", None)
    search = str(config.pop("search", "index"))
    for unused in ("index_dir", "index_config"):
        config.pop(unused, None)
    if embedder is None:
        embedder = Embedder(model, device=embed_device(device))  # type: ignore[arg-type]
    elif model is not None or device is not None:
        raise TypeError("pass either embedder or model, not both")
    expected = None
    if isinstance(source, GraphView):
        expected = source.content_hash
    elif isinstance(source, CausalGraph):
        expected = source.content_hash()
    elif isinstance(source, str | Path):
        expected = GraphView.of(source).content_hash
    database = getattr(source, "database", None)
    if driver is None and hasattr(source, "driver"):
        driver = source.driver  # a Neo4jStore
    owns = False
    if driver is None:
        settings = settings or Neo4jSettings.resolve()
        driver, owns = open_driver(settings), True  # type: ignore[union-attr]
    if database is None:
        database = settings.database if settings is not None else "neo4j"  # type: ignore[union-attr]
    return Neo4jHybridRetriever(
        driver,  # type: ignore[arg-type]
        database=str(database),
        embedder=embedder,  # type: ignore[arg-type]
        config=HybridConfig(**config),  # type: ignore[arg-type]
        strict_split=strict_split,
        expected_hash=expected,
        owns_driver=owns,
        search=search,
    )


def push_embeddings(
    driver: neo4j.Driver, graph: CausalGraph, embedder: Embedder, database: str = "neo4j", progress=None
):
    """Vectors of ``graph`` (from the cached index the in-memory hybrid uses; built and cached on first
    use) written to the already pushed graph, with the vector indexes. Returns a VectorPushReport."""
    from graph.neo4j.vectors import push_vectors
    from retrieval.graph_view import GraphView
    from retrieval.index import cached_index

    view = GraphView.of(graph)
    index = cached_index(view, embedder)
    edges = [(edge_id, graph.edges[edge_id].relation) for edge_id in view.edge_ids]
    return push_vectors(
        driver,
        view.content_hash,
        embedder.model_id,
        view.node_ids,
        np.asarray(index.node_vectors),
        edges,
        np.asarray(index.edge_vectors),
        database=database,
        progress=progress,
    )
