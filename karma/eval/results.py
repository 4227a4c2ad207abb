"""Aggregate a run's per-sample log into ``results.json``.

``results.json`` is a pure function of the answers (and the bootstrap seed): rerunning a finished
run, or rerunning it from the cache into a new directory, gives a byte-identical file. Timing and
cache statistics therefore go to ``timing.json`` instead.

The statistics come from the one aggregation core every task shares (:mod:`karma.run.aggregate`);
this module maps Karma-MV's records onto it (clusters are videos, the split is the question type, the
arms are graph on and off) and adds what only Karma-MV reports: the parse-status mix and answer-mode
accuracies, the no-model baselines with the graph reader, and the graph's paired effect under the
names ``on`` / ``off``.

Scoring rules (the core's): an unparsed answer (parse_status ``none``) counts as wrong and as a parse
failure; it is never read as a letter. A backend error (no answer came back) is no answer: counted in
``backend_errors``, left out of ``n``, the accuracy, the parse failures and the pairs (a rerun
retries it). The graph effect is measured on the questions both arms answered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karma.core.records import QuestionType
from karma.eval.answer_report import answer_stats
from karma.eval.records import ARMS, BaselineRecord, SampleRecord
from karma.run.aggregate import (
    OVERALL,
    Outcome,
    Splits,
    arms_payload,
    bootstrap_info,
    group_by,
    paired_block,
    pairs_of,
)
from karma.run.stats import cluster_bootstrap_accuracy

__all__ = ["BASELINE_NAMES", "OVERALL", "TYPE_ORDER", "aggregate", "outcome", "timing"]

TYPE_ORDER: tuple[str, ...] = tuple(t.value for t in QuestionType)
BASELINE_NAMES: tuple[str, ...] = (
    "random",
    "most_frequent_letter",
    "longest_option",
    "word_overlap",
    "graph_reader",
)
"""Reference baselines in every report (random is the exact 25% expectation). ``graph_reader`` answers
from the retrieved facts alone (``pipelines.graph_reader``): the ceiling of the LLM arms."""


def _ordered_types(types: Iterable[str]) -> list[str]:
    present = set(types)
    known = [t for t in TYPE_ORDER if t in present]
    return known + sorted(present - set(known))


SPLITS = Splits(keys={"by_type": lambda o: o.groups["type"]}, order=_ordered_types)
"""Karma-MV reports per question type, in the benchmark's order."""


GROUNDING_SPLITS = Splits(
    keys={"by_type": lambda o: o.groups["type"], "by_grounding": lambda o: o.groups.get("grounding")},
    order=_ordered_types,
)
"""With ``karma qa make`` data: also per grounding (observed change or graph rule; karma.data.grounding)."""


def outcome(record: SampleRecord, groundings: Mapping[str, str] | None = None) -> Outcome:
    """A Karma-MV answer in the core's shape (the video is the cluster, the type the split; with
    ``groundings``, the question's grounding a second split)."""
    groups = {"type": record.question_type}
    if groundings:
        groups["grounding"] = groundings.get(record.question_id, "unrecorded")
    return Outcome(
        item=record.question_id,
        arm=record.arm,
        cluster=record.video_id,
        correct=record.correct,
        parse_status=record.parse_status,
        error=record.error,
        groups=groups,
        record=record,
    )


def _answer_extras(records: list[SampleRecord]) -> dict[str, Any]:
    """Karma-MV's own per-arm statistics of the answered records: fallbacks, status mix, answer mode."""
    return {
        "parse_fallbacks": sum(1 for r in records if r.parse_status == "fallback"),
        **answer_stats(records),
    }


def _baseline_stats(records: Sequence[BaselineRecord], resamples: int, seed: int) -> dict[str, Any]:
    stats: dict[str, Any] = {}
    videos = [r.video_id for r in records]
    for name in BASELINE_NAMES:
        if name == "random":
            stats[name] = {"accuracy": 0.25, "ci_low": None, "ci_high": None, "n": len(records)}
            continue
        if not records or any(name not in r.picks for r in records):
            continue
        interval = cluster_bootstrap_accuracy(
            [r.credit(name) for r in records], videos, resamples=resamples, seed=seed
        )
        stats[name] = {
            "accuracy": interval.estimate,
            "ci_low": interval.low,
            "ci_high": interval.high,
            "n": len(records),
            "no_answer": sum(1 for r in records if not r.picks.get(name)),
        }
    return stats


def aggregate(
    samples: Sequence[SampleRecord],
    baselines: Sequence[BaselineRecord],
    *,
    resamples: int = 2000,
    seed: int = 0,
    groundings: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The results payload (see the module doc). Records are sorted first, so file order never matters.
    ``groundings`` (question id -> grounding, from ``karma qa make``) adds a ``by_grounding`` split."""
    samples = sorted(samples, key=lambda r: (r.question_id, r.arm))
    baselines = sorted(baselines, key=lambda r: r.question_id)
    outcomes = [outcome(r, groundings) for r in samples]
    splits = GROUNDING_SPLITS if groundings else SPLITS
    payload: dict[str, Any] = {
        "n_questions": len({r.question_id for r in samples}),
        "n_videos": len({r.video_id for r in samples}),
        "arms": arms_payload(
            outcomes,
            ARMS,
            splits,
            resamples=resamples,
            seed=seed,
            cluster_key="n_videos",
            extra=_answer_extras,
        ),
        "bootstrap": bootstrap_info(resamples, seed, "video"),
    }
    pairs = pairs_of(outcomes, "on", "off")
    if pairs:
        payload["paired"] = paired_block(pairs, splits, resamples=resamples, seed=seed, labels=("on", "off"))
    # The baselines need no backend: they are scored on every question of the run.
    asked = {r.question_id for r in samples}
    evaluated = [b for b in baselines if b.question_id in asked]
    payload["baselines"] = {
        OVERALL: _baseline_stats(evaluated, resamples, seed),
        "by_type": {
            t: _baseline_stats(rs, resamples, seed)
            for t, rs in group_by(evaluated, lambda r: r.question_type, _ordered_types).items()
        },
    }
    return payload


def timing(samples: Sequence[SampleRecord]) -> dict[str, Any]:
    """Latency, token and cache statistics (vary run to run; kept out of results.json)."""
    out: dict[str, Any] = {}
    for arm in ARMS:
        records = [r for r in samples if r.arm == arm]
        if not records:
            continue
        fresh = [r for r in records if not r.cached]
        latencies = sorted(r.latency_s for r in fresh)
        prompt_tokens = [r.prompt_tokens for r in records if r.prompt_tokens is not None]
        out[arm] = {
            "n": len(records),
            "cache_hits": len(records) - len(fresh),
            "mean_latency_s": (sum(latencies) / len(latencies)) if latencies else None,
            "p50_latency_s": latencies[len(latencies) // 2] if latencies else None,
            "mean_prompt_tokens": (sum(prompt_tokens) / len(prompt_tokens)) if prompt_tokens else None,
        }
    return out
