"""File-level helpers behind ``karma retrieve``: a query from a QA file, recall on a synthetic world."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graph.model import CausalGraph
from karma.core.errors import InputError
from retrieval.base import RetrievalQuery
from retrieval.evaluate import DEFAULT_KS, RecallReport, load_question_truth, retrieval_recall
from retrieval.query import build_query, graph_thresholds

TRUTH_FILE = "question_truth.jsonl"
"""What ``karma synth`` writes next to the QA files: per question, the true causes and effect."""


def query_from_files(
    qa_file: str | Path,
    transition_index: int,
    question_index: int,
    features_file: str | Path | None,
    graph: CausalGraph,
) -> RetrievalQuery:
    """The query for one question of a QA file, with the observed events from its feature file.

    ``transition_index`` is the transition's position in the file; ``question_index`` the question's
    position in the transition (as in question ids ``<video>/t<NNN>/q<M>``).
    """
    from karma.data import load_features_file, load_qa_file

    qa = load_qa_file(qa_file)
    transition = next((t for t in qa.transitions if t.index == transition_index), None)
    if transition is None:
        valid = ", ".join(str(t.index) for t in qa.transitions) or "none"
        raise InputError(f"{qa_file}: no valid transition {transition_index} (valid: {valid})")
    question = next((q for q in transition.questions if q.index == question_index), None)
    if question is None:
        valid = ", ".join(str(q.index) for q in transition.questions) or "none"
        raise InputError(
            f"{qa_file}: transition {transition_index} has no valid question {question_index} (valid: {valid})"
        )
    features = None
    if features_file is not None:
        loaded = load_features_file(features_file)
        if loaded.features is None:
            reasons = "; ".join(p.reason for p in loaded.problems) or "unreadable"
            raise InputError(f"{features_file}: {reasons}")
        features = loaded.features
    return build_query(transition, question, features, graph_thresholds(graph.build_config))


def world_recall(
    world_dir: str | Path,
    graph: CausalGraph | str | Path,
    retrievers: Sequence[str] = ("hybrid", "keyword", "paths"),
    ks: Sequence[int] = DEFAULT_KS,
    truth_file: str | Path | None = None,
    **config: object,
) -> RecallReport:
    """Recall@k of each named retriever on a ``karma synth`` world (its QA, features and truth).

    ``graph`` is a CausalGraph or a graph folder (then the hybrid index is persisted there). Settings in
    ``config`` go to every retriever that accepts them (``model``/``embedder``/``index_dir`` to hybrid).
    """
    from karma.data import load_dataset
    from retrieval.graph_view import GraphView, as_causal_graph
    from retrieval.registry import get_retriever

    world = Path(world_dir)
    truth_path = Path(truth_file) if truth_file is not None else world / TRUTH_FILE
    if not truth_path.is_file():
        raise FileNotFoundError(f"no {TRUTH_FILE} in {world} (recall needs a karma synth world)")
    truth = load_question_truth(truth_path)
    dataset = load_dataset(world, lenient=True)
    causal_graph = as_causal_graph(graph)
    view = GraphView.of(causal_graph)
    built = {}
    for name in retrievers:
        settings = dict(config) if name == "hybrid" else {}
        built[name] = get_retriever(name, view, **settings)
    return retrieval_recall(
        built,
        dataset.transitions,
        dataset.features,
        truth,
        thresholds=graph_thresholds(causal_graph.build_config),
        ks=ks,
        graph_edges=[(edge.source, edge.target) for edge in causal_graph.edges.values()],
    )
