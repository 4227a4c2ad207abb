"""Aggregate a run's per-sample log into ``results.json``.

``results.json`` is a pure function of the answers (and the bootstrap seed): rerunning a finished
run, or rerunning it from the cache into a new directory, gives a byte-identical file. Timing and
cache statistics therefore go to ``timing.json`` instead.

Scoring rules: an unparsed answer (parse_status ``none``) or a backend error counts as wrong; it is
never read as a letter. Accuracy denominators include both. They are counted apart: ``parse_failures``
(the model answered, nothing could be read) and ``backend_errors`` (no answer came back).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from karma.eval.answer_report import answer_stats
from karma.eval.records import ARMS, BaselineRecord, SampleRecord
from karma.eval.stats import cluster_bootstrap_accuracy, cluster_bootstrap_paired_difference, mcnemar_exact
from karma.records import QuestionType

TYPE_ORDER: tuple[str, ...] = tuple(t.value for t in QuestionType)
OVERALL = "overall"
BASELINE_NAMES: tuple[str, ...] = (
    "random",
    "most_frequent_letter",
    "longest_option",
    "word_overlap",
    "graph_reader",
)
"""Reference baselines in every report (random is the exact 25% expectation). ``graph_reader`` answers
from the retrieved facts alone (``pipelines.backends.ckg_reader``): the ceiling of the LLM arms."""


def _ordered_types(types: Iterable[str]) -> list[str]:
    present = set(types)
    known = [t for t in TYPE_ORDER if t in present]
    return known + sorted(present - set(known))


def _arm_stats(records: Sequence[SampleRecord], resamples: int, seed: int) -> dict[str, Any]:
    interval = cluster_bootstrap_accuracy(
        [r.correct for r in records], [r.video_id for r in records], resamples=resamples, seed=seed
    )
    n = len(records)
    # A backend error is not the model's answer: counted apart from unparsed answers (both count as wrong).
    failures = sum(1 for r in records if r.parse_status == "none" and r.error is None)
    return {
        "n": n,
        "n_videos": len({r.video_id for r in records}),
        "correct": sum(1 for r in records if r.correct),
        "accuracy": interval.estimate,
        "ci_low": interval.low,
        "ci_high": interval.high,
        "parse_failures": failures,
        "parse_failure_rate": failures / n if n else 0.0,
        "parse_fallbacks": sum(1 for r in records if r.parse_status == "fallback"),
        "backend_errors": sum(1 for r in records if r.error is not None),
        **answer_stats(records),
    }


def _paired_stats(
    pairs: Sequence[tuple[SampleRecord, SampleRecord]], resamples: int, seed: int
) -> dict[str, Any]:
    on = [p[0].correct for p in pairs]
    off = [p[1].correct for p in pairs]
    videos = [p[0].video_id for p in pairs]
    diff = cluster_bootstrap_paired_difference(on, off, videos, resamples=resamples, seed=seed)
    test = mcnemar_exact(on, off)
    n = len(pairs)
    return {
        "n_pairs": n,
        "accuracy_on": sum(on) / n if n else float("nan"),
        "accuracy_off": sum(off) / n if n else float("nan"),
        "delta": diff.estimate,
        "ci_low": diff.low,
        "ci_high": diff.high,
        "on_only_correct": test.b,
        "off_only_correct": test.c,
        "mcnemar_p": test.p_value,
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


def _by_type(records: Sequence[Any], type_of) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        groups[type_of(record)].append(record)
    return {t: groups[t] for t in _ordered_types(groups)}


def aggregate(
    samples: Sequence[SampleRecord],
    baselines: Sequence[BaselineRecord],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The results payload (see the module doc). Records are sorted first, so file order never matters."""
    samples = sorted(samples, key=lambda r: (r.question_id, r.arm))
    baselines = sorted(baselines, key=lambda r: r.question_id)
    arms: dict[str, Any] = {}
    for arm in ARMS:
        records = [r for r in samples if r.arm == arm]
        if not records:
            continue
        arms[arm] = {
            OVERALL: _arm_stats(records, resamples, seed),
            "by_type": {
                t: _arm_stats(rs, resamples, seed)
                for t, rs in _by_type(records, lambda r: r.question_type).items()
            },
        }
    payload: dict[str, Any] = {
        "n_questions": len({r.question_id for r in samples}),
        "n_videos": len({r.video_id for r in samples}),
        "arms": arms,
        "bootstrap": {"resamples": resamples, "seed": seed, "level": 0.95, "unit": "video"},
    }
    by_key = {(r.question_id, r.arm): r for r in samples}
    pairs = [
        (by_key[(qid, "on")], by_key[(qid, "off")])
        for qid in sorted({r.question_id for r in samples})
        if (qid, "on") in by_key and (qid, "off") in by_key
    ]
    if pairs:
        payload["paired"] = {
            OVERALL: _paired_stats(pairs, resamples, seed),
            "by_type": {
                t: _paired_stats(ps, resamples, seed)
                for t, ps in _by_type(pairs, lambda p: p[0].question_type).items()
            },
        }
    answered = {r.question_id for r in samples}
    evaluated = [b for b in baselines if b.question_id in answered]
    payload["baselines"] = {
        OVERALL: _baseline_stats(evaluated, resamples, seed),
        "by_type": {
            t: _baseline_stats(rs, resamples, seed)
            for t, rs in _by_type(evaluated, lambda r: r.question_type).items()
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
