"""Where a scored graph on/off run gains or loses: paired accuracy per type, per pick (acc_norm, acc),
and split by whether the graph reader answers the same question right from the same facts.

Reads a run directory as it is (``samples.jsonl`` and ``baselines.jsonl``; a run still in progress is
fine: only questions answered in both arms count) and prints, per run, the paired table: graph on,
graph off, on-only / off-only right pairs and the exact McNemar p, overall and per question type; then
the same split by the graph reader's verdict ("reader right": the facts shown decide the answer, so a
model that reads them gets it; "reader wrong / no answer": the facts do not say it). With ``--truth``
(a synthetic world's ``question_truth.jsonl``), also split by the rank of the true fact in the graph-on
prompt: the first shown fact from one of the question's true causes to its effect, counted over the
distinct event pairs shown (a pair's twins share its place), or "not shown".

Run: ``.venv/bin/python benchmarks/ablation_breakdown.py RUN_DIR [RUN_DIR ...] [--pick acc_norm]
[--truth WORLD/question_truth.jsonl]``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def true_fact_rank(fact_ids: list[str], causes: list[str], effect: str) -> int | None:
    """1-based place of the first shown fact from one of ``causes`` to ``effect`` among the distinct
    event pairs of ``fact_ids`` (ids ``SOURCE->TARGET|RELATION``), or None when none is shown."""
    pairs: list[str] = []
    for fact_id in fact_ids:
        pair = fact_id.rsplit("|", 1)[0]
        if pair not in pairs:
            pairs.append(pair)
    wanted = {f"{cause}->{effect}" for cause in causes}
    return next((place for place, pair in enumerate(pairs, start=1) if pair in wanted), None)


def _truth(path: Path | None) -> dict[str, dict]:
    if path is None:
        return {}
    records = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {r["question_id"]: r for r in records}


def _rank_label(rank: int | None) -> str:
    if rank is None:
        return "not shown"
    return "1" if rank == 1 else "2-3" if rank <= 3 else "4+"


def _rows(run: Path, pick: str, truth: dict[str, dict] | None = None) -> list[dict]:
    by: dict[str, dict] = defaultdict(dict)
    for line in (run / "samples.jsonl").read_text().splitlines():
        record = json.loads(line)
        by[record["question_id"]][record["arm"]] = record  # the latest record of each pair wins
    reader = {}
    if (run / "baselines.jsonl").is_file():
        for line in (run / "baselines.jsonl").read_text().splitlines():
            record = json.loads(line)
            picks = record["picks"].get("graph_reader") or []
            reader[record["question_id"]] = len(picks) == 1 and picks[0] == record["answer"]
    rows = []
    for qid, arms in sorted(by.items()):
        if "on" not in arms or "off" not in arms or arms["on"].get("error") or arms["off"].get("error"):
            continue

        def right(record: dict) -> bool:
            scoring = record.get("scoring") or {}
            letter = scoring.get(f"pick_{pick}", record.get("parsed_letter"))
            return letter == record["answer"]

        rows.append(
            {
                "type": arms["on"]["question_type"],
                "video": arms["on"]["video_id"],
                "on": right(arms["on"]),
                "off": right(arms["off"]),
                "reader": reader.get(qid),
                "rank": _rank_label(
                    true_fact_rank(
                        arms["on"].get("fact_ids") or [],
                        truth[qid]["cause_events"],
                        truth[qid]["effect_event"],
                    )
                )
                if truth and qid in truth
                else None,
            }
        )
    return rows


def _line(label: str, rows: list[dict]) -> str:
    from karma.run.stats import mcnemar_exact

    if not rows:
        return f"| {label} | 0 | | | | |"
    n = len(rows)
    on = sum(r["on"] for r in rows)
    off = sum(r["off"] for r in rows)
    test = mcnemar_exact([r["on"] for r in rows], [r["off"] for r in rows])
    return (
        f"| {label} | {n} | {100 * on / n:.1f} | {100 * off / n:.1f} | {100 * (on - off) / n:+.1f} | "
        f"{test.b} / {test.c}, p {test.p_value:.3g} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--pick", default="acc_norm", choices=["acc_norm", "acc", "mutual_info"])
    parser.add_argument(
        "--truth", type=Path, help="the world's question_truth.jsonl: split by true-fact rank"
    )
    args = parser.parse_args()
    truth = _truth(args.truth)
    for run in args.runs:
        rows = _rows(run, args.pick, truth)
        print(
            f"\n{run.name} ({args.pick}): {len(rows)} paired questions from {len({r['video'] for r in rows})} videos"
        )
        print("| split | n | graph on | graph off | delta, pp | on-only / off-only, McNemar |")
        print("|---|---|---|---|---|---|")
        print(_line("overall", rows))
        for kind in ("evidential", "predictive", "counterfactual"):
            print(_line(kind, [r for r in rows if r["type"] == kind]))
        print(_line("graph reader right", [r for r in rows if r["reader"] is True]))
        print(_line("graph reader wrong / no answer", [r for r in rows if r["reader"] is False]))
        if truth:
            for label in ("1", "2-3", "4+", "not shown"):
                print(_line(f"true fact at rank {label}", [r for r in rows if r["rank"] == label]))


if __name__ == "__main__":
    main()
