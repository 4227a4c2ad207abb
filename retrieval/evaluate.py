"""Recall@k of the ground-truth causes of each question's musical change, for any retriever.

A synthetic world (``karma synth``) writes ``question_truth.jsonl``: per question the world's true
cause events and the musical effect event. A cause counts as recalled at k when one of the top-k facts
is an edge from that cause event to that effect event. recall@k of a question = recalled causes /
true causes; the report averages over questions (all, and per question type). The ceiling is the same
number for a retriever that returned every edge of the graph: causes the graph does not hold at all
cannot be retrieved by anyone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from karma.core.errors import InputError
from karma.core.records import Question, Transition, VideoFeatures
from retrieval.base import Fact, Retriever
from retrieval.query import build_query

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)


class QuestionTruth(BaseModel):
    """One line of ``question_truth.jsonl``."""

    question_id: str
    """``<video>/t<NNN>/q<M>``."""
    video_id: str
    """The question's video."""
    transition_index: int
    """Transition position in the video's QA file."""
    question_index: int
    """Question position in the transition."""
    type: str
    """Question type."""
    cause_events: list[str] = Field(default_factory=list)
    """The world's true causes (event ids) of the musical change asked about."""
    effect_event: str | None = None
    """The musical change (event id)."""
    answer: str | None = None
    """The correct option letter (read here only to be ignored; never given to a retriever)."""


def load_question_truth(path: str | Path) -> dict[tuple[str, int, int], QuestionTruth]:
    """(video id, transition index, question index) -> truth, from a ``question_truth.jsonl`` file."""
    truths: dict[tuple[str, int, int], QuestionTruth] = {}
    file = Path(path)
    with file.open() as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                truth = QuestionTruth.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValueError) as exc:
                raise InputError(f"{file}: line {line_number}: not a question truth record: {exc}") from exc
            truths[(truth.video_id, truth.transition_index, truth.question_index)] = truth
    return truths


def rule_hit_at_k(facts: Sequence[Fact], causes: Iterable[str], effect: str | None, k: int) -> float | None:
    """1.0 when one of the first ``k`` facts is the question's own rule (a true cause -> the effect the
    question asks about, in any form the builder states it: ``graph.ckg.forms.same_rule_form``, so
    ``contrast:up -> mode:major_to_minor`` counts for a truth ``contrast:up -> mode:is:minor``), else
    0.0; None without causes. At k=1: the top fact is the question's rule."""
    from graph.ckg.forms import same_rule_form

    causes = list(causes)
    if not causes or effect is None:
        return None
    for fact in facts[:k]:
        if same_rule_form(fact.target, effect) and any(same_rule_form(fact.source, c) for c in causes):
            return 1.0
    return 0.0


def recall_at_k(facts: Sequence[Fact], causes: Iterable[str], effect: str | None, k: int) -> float | None:
    """Share of the true (cause -> effect) edges among the first ``k`` facts; None without causes."""
    wanted = {(cause, effect) for cause in causes}
    if not wanted or effect is None:
        return None
    found = {(fact.source, fact.target) for fact in facts[:k]} & wanted
    return len(found) / len(wanted)


class RecallRow(BaseModel):
    """Mean recall@k of one retriever over one group of questions."""

    retriever: str
    """Retriever name (``ceiling`` for the every-edge bound)."""
    question_type: str
    """Question type, or ``all``."""
    k: int
    """Cut-off."""
    recall: float
    """Mean recall@k over the questions with causes."""
    rule_hit: float | None = None
    """Share of those questions whose own rule is among the top k (``rule_hit_at_k``)."""
    questions: int
    """Questions averaged."""


class RecallReport(BaseModel):
    """Recall@k of every retriever, all questions and per type."""

    rows: list[RecallRow] = Field(default_factory=list)
    """One row per (retriever, type, k)."""
    questions_scored: int = 0
    """Questions that had a truth record with causes."""
    questions_skipped: int = 0
    """Questions without a truth record or without causes."""

    def recall(self, retriever: str, k: int, question_type: str = "all") -> float:
        for row in self.rows:
            if (row.retriever, row.k, row.question_type) == (retriever, k, question_type):
                return row.recall
        raise KeyError(f"no recall for {retriever} at k={k} ({question_type})")

    def to_text(self) -> str:
        """A fixed-width table: one line per retriever and type, one column per k."""
        ks = sorted({row.k for row in self.rows})
        names = list(dict.fromkeys(row.retriever for row in self.rows))
        types = list(dict.fromkeys(row.question_type for row in self.rows))
        header = (
            f"{'retriever':<10} {'type':<15} {'n':>6} "
            + " ".join(f"{'R@' + str(k):>7}" for k in ks)
            + f" {'rule@1':>7}"
        )
        lines = [header, "-" * len(header)]
        for name in names:
            for qtype in types:
                cells = {
                    row.k: row for row in self.rows if row.retriever == name and row.question_type == qtype
                }
                if not cells:
                    continue
                n = next(iter(cells.values())).questions
                values = " ".join(f"{cells[k].recall:>7.3f}" if k in cells else f"{'-':>7}" for k in ks)
                first = cells.get(1)
                rule = (
                    f"{first.rule_hit:>7.3f}"
                    if first is not None and first.rule_hit is not None
                    else f"{'-':>7}"
                )
                lines.append(f"{name:<10} {qtype:<15} {n:>6} {values} {rule}")
        lines.append(
            f"questions scored: {self.questions_scored}, skipped (no truth or no cause): {self.questions_skipped}"
        )
        return "\n".join(lines)


def retrieval_recall(
    retrievers: Mapping[str, Retriever],
    transitions: Sequence[Transition],
    features: Mapping[str, VideoFeatures],
    truth: Mapping[tuple[str, int, int], QuestionTruth],
    thresholds: Mapping[str, float] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    graph_edges: Iterable[tuple[str, str]] | None = None,
) -> RecallReport:
    """Recall@k of each retriever on every question that has a truth record with causes.

    Queries are made by ``build_query`` (the same leakage-safe input the pipelines use) with the graph's
    thresholds. ``graph_edges`` (cause, effect pairs of the graph) adds the ``ceiling`` row.
    """
    pairs: list[tuple[Transition, Question, QuestionTruth]] = []
    skipped = 0
    for transition in transitions:
        for question in transition.questions:
            record = truth.get((transition.video_id, transition.index, question.index))
            if record is None or not record.cause_events or record.effect_event is None:
                skipped += 1
                continue
            pairs.append((transition, question, record))
    queries = [build_query(t, q, features.get(t.video_id), thresholds) for t, q, _ in pairs]
    k_max = max(ks)
    per_retriever: dict[str, list[list[float]]] = {}
    rule_hits: dict[str, list[list[float]]] = {}
    for name, retriever in retrievers.items():
        results = retriever.retrieve_many(queries, k=k_max)
        per_retriever[name] = [
            [recall_at_k(result.facts, rec.cause_events, rec.effect_event, k) or 0.0 for k in ks]
            for result, (_, _, rec) in zip(results, pairs, strict=True)
        ]
        rule_hits[name] = [
            [rule_hit_at_k(result.facts, rec.cause_events, rec.effect_event, k) or 0.0 for k in ks]
            for result, (_, _, rec) in zip(results, pairs, strict=True)
        ]
    if graph_edges is not None:
        edge_set = set(graph_edges)
        per_retriever["ceiling"] = [
            [sum((c, rec.effect_event) in edge_set for c in rec.cause_events) / len(rec.cause_events)]
            * len(ks)
            for _, _, rec in pairs
        ]
    report = RecallReport(questions_scored=len(pairs), questions_skipped=skipped)
    types = sorted({rec.type for _, _, rec in pairs})
    for name, values in per_retriever.items():
        for qtype in ["all", *types]:
            rows = [v for v, (_, _, rec) in zip(values, pairs, strict=True) if qtype in ("all", rec.type)]
            hits = [
                v
                for v, (_, _, rec) in zip(rule_hits.get(name, []), pairs, strict=False)
                if qtype in ("all", rec.type)
            ]
            if not rows:
                continue
            for j, k in enumerate(ks):
                report.rows.append(
                    RecallRow(
                        retriever=name,
                        question_type=qtype,
                        k=k,
                        recall=round(sum(row[j] for row in rows) / len(rows), 4),
                        rule_hit=round(sum(row[j] for row in hits) / len(hits), 4) if hits else None,
                        questions=len(rows),
                    )
                )
    return report
