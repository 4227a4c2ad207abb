"""Report sections about how answers were obtained: the parse-status mix per arm, the answer mode's
acc / acc_norm, and every arm against the graph reader (the facts-only ceiling)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from karma.eval.records import SampleRecord

STATUS_ORDER: tuple[str, ...] = ("ok", "fallback", "content", "scored", "none")
"""Parse statuses in report order (see ``pipelines.parsing``)."""


def answer_stats(records: Sequence[SampleRecord]) -> dict[str, Any]:
    """Status counts and, for scored answer modes, the accuracy of each pick (acc, acc_norm and, when
    recorded, acc_mutual_info) whichever of them answered."""
    statuses = Counter(r.parse_status for r in records)
    out: dict[str, Any] = {"parse_statuses": {s: statuses.get(s, 0) for s in STATUS_ORDER if statuses.get(s)}}
    scored = [r for r in records if r.scoring]
    if scored:
        out["answer_mode"] = scored[0].scoring.get("answer_mode")  # type: ignore[union-attr]
        out["accuracy_acc"] = sum(1 for r in scored if r.scoring.get("pick_acc") == r.answer) / len(scored)  # type: ignore[union-attr]
        out["accuracy_acc_norm"] = sum(1 for r in scored if r.scoring.get("pick_acc_norm") == r.answer) / len(
            scored
        )  # type: ignore[union-attr]
        with_mi = [r for r in scored if r.scoring.get("pick_mutual_info")]  # type: ignore[union-attr]
        if len(with_mi) == len(scored):
            out["accuracy_mutual_info"] = sum(
                1 for r in with_mi if r.scoring.get("pick_mutual_info") == r.answer
            ) / len(scored)  # type: ignore[union-attr]
        out["score_pick"] = scored[0].scoring.get("pick") or "acc_norm"  # type: ignore[union-attr]
    return out


def status_table(results: dict[str, Any]) -> list[str]:
    """Per arm: how many answers each parse status decided (format-following is not reasoning)."""
    arms = results.get("arms", {})
    if not arms:
        return []
    lines = [
        "| arm | " + " | ".join(STATUS_ORDER) + " | scored acc / acc_norm / mutual_info (answering) |",
        "|" + "---|" * (len(STATUS_ORDER) + 2),
    ]
    for arm, stats in arms.items():
        overall = stats.get("overall", {})
        mix = overall.get("parse_statuses", {})
        n = overall.get("n") or 1
        cells = [
            f"{mix.get(s, 0)} ({100 * mix.get(s, 0) / n:.0f}%)" if mix.get(s) else "0" for s in STATUS_ORDER
        ]
        scored = "–"
        if "accuracy_acc" in overall:
            mi = overall.get("accuracy_mutual_info")
            scored = (
                f"{100 * overall['accuracy_acc']:.1f} / {100 * overall['accuracy_acc_norm']:.1f} / "
                + (f"{100 * mi:.1f}" if mi is not None else "–")
                + f" ({overall.get('score_pick', 'acc_norm')})"
            )
        lines.append(f"| {arm} | " + " | ".join(cells) + f" | {scored} |")
    return lines


def ceiling_lines(results: dict[str, Any]) -> list[str]:
    """Every arm's accuracy next to the graph reader's, the ceiling of what the facts say."""
    reader = results.get("baselines", {}).get("overall", {}).get("graph_reader")
    if not reader:
        return []
    lines = [
        f"- graph reader (facts only, no LLM): {100 * reader['accuracy']:.1f}% "
        f"({reader.get('no_answer', 0)} of {reader['n']} questions with no option recognised or no fact about one)"
    ]
    for arm, stats in results.get("arms", {}).items():
        acc = stats.get("overall", {}).get("accuracy")
        if acc is not None:
            gap = 100 * (acc - reader["accuracy"])
            lines.append(f"- arm {arm}: {100 * acc:.1f}% ({gap:+.1f} points from the reader)")
    return lines
