"""Markdown sections of ``karma report`` for a task run (accuracy per category and subcategory,
chance baselines of mean 1/k, parse failures, paired arms with McNemar)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_text
from karma.tasks.results import OVERALL


def pct(value: float | None, digits: int = 2) -> str:
    """Percent with ``digits`` decimals (the papers print two); ``–`` for None/NaN."""
    if value is None or value != value:
        return "–"
    return f"{100 * value:.{digits}f}"


def _interval(stats: dict[str, Any]) -> str:
    return f"{pct(stats['accuracy'])} [{pct(stats['ci_low'])}, {pct(stats['ci_high'])}]"


def accuracy_rows(results: dict[str, Any], level: str) -> list[str]:
    """One table: rows = groups of ``level`` (by_category / by_subcategory), columns = arms."""
    arms = list(results.get("arms", {}))
    groups: list[str] = []
    for arm in arms:
        groups += [g for g in results["arms"][arm].get(level, {}) if g not in groups]
    if not groups:
        return []
    header = (
        "| " + level.removeprefix("by_") + " | " + " | ".join(f"{a} acc. [95% CI] (correct/n)" for a in arms)
    )
    lines = [header + " | chance (mean 1/k) |", "|---" * (len(arms) + 2) + "|"]
    for group in groups:
        cells, chance = [], None
        for arm in arms:
            stats = results["arms"][arm].get(level, {}).get(group)
            if stats is None:
                cells.append("–")
                continue
            chance = stats["chance"]
            cells.append(f"{_interval(stats)} ({stats['correct']}/{stats['n']})")
        lines.append(f"| {group} | " + " | ".join(cells) + f" | {pct(chance)} |")
    return lines


def overall_rows(results: dict[str, Any]) -> list[str]:
    lines = [
        "| arm | accuracy [95% CI] | correct/n | chance (mean 1/k) | parse failures | backend errors |",
        "|---|---|---|---|---|---|",
    ]
    for arm, stats in results.get("arms", {}).items():
        s = stats[OVERALL]
        lines.append(
            f"| {arm} | {_interval(s)} | {s['correct']}/{s['n']} | {pct(s['chance'])} | "
            f"{s['parse_failures']} ({pct(s['parse_failure_rate'], 1)}%) | {s['backend_errors']} |"
        )
    return lines


def paired_rows(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, block in results.get("paired", {}).items():
        lines += [
            f"**{block['first']} minus {block['second']}** (same items; exact McNemar on discordant pairs)",
            "",
            "| group | n pairs | delta [95% CI] | only first right | only second right | McNemar p |",
            "|---|---|---|---|---|---|",
        ]
        rows = [(OVERALL, block[OVERALL]), *block.get("by_category", {}).items()]
        for group, s in rows:
            lines.append(
                f"| {group} | {s['n_pairs']} | {100 * s['delta']:+.2f} [{100 * s['ci_low']:+.2f}, "
                f"{100 * s['ci_high']:+.2f}] | {s['first_only_correct']} | {s['second_only_correct']} | "
                f"{s['mcnemar_p']:.3g} |"
            )
        lines.append("")
        del name
    return lines


def task_report_lines(label: str, config: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """The report section of one task run."""
    task = config.get("task", {})
    hashes = config.get("hashes", {})
    lines = [f"## {label}: {task.get('title', task.get('task'))}", ""]
    versions = ", ".join(
        f"{k.split('.', 1)[1]} {v}" for k, v in sorted(hashes.items()) if k.startswith("template_version.")
    )
    lines.append(f"- data hash `{hashes.get('data')}`, model `{hashes.get('model')}`, templates: {versions}")
    lines.append(
        f"- items: {results['n_items']} in {results['n_clusters']} clusters ({task.get('cluster_unit')}); "
        "intervals resample clusters"
    )
    if not task.get("paper_comparable", True):
        lines.append("- **not comparable to the paper** (see docs/tasks.md for why)")
    lines += ["", "### Accuracy (%)", "", *overall_rows(results), ""]
    extra = {k for arm in results.get("arms", {}).values() for k in arm} - {
        OVERALL,
        "by_category",
        "by_subcategory",
    }
    levels = [("by_category", "Per category"), ("by_subcategory", "Per subcategory")]
    levels += [(k, "Per " + k.removeprefix("by_")) for k in sorted(extra)]
    for level, title in levels:
        table = accuracy_rows(results, level)
        if table:
            lines += [f"### {title}", "", *table, ""]
    if results.get("paired"):
        lines += ["### Paired arms", "", *paired_rows(results)]
    return lines


def write_task_report(run_dirs: list[Path], out_dir: Path | None = None) -> Path:
    """``report.md`` for one or several task runs (default: RUN_DIR/report, or ./karma-report)."""
    import json

    out = (
        Path(out_dir) if out_dir else (run_dirs[0] / "report" if len(run_dirs) == 1 else Path("karma-report"))
    )
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# karma task report",
        "",
        "Accuracy in percent (two decimals, as the papers print them) with 95% bootstrap intervals that "
        "resample the task's clusters, over the answered items; unparsed answers count as wrong and are "
        "shown as parse failures; a backend error is no answer and is counted apart (backend errors). "
        "Chance is the mean of 1/k over the answered items (k = number of options). Paired arms are "
        "compared on the items both answered with the exact McNemar test.",
        "",
    ]
    from karma.tasks.analysis_run import analysis_report_lines, is_analysis_run
    from karma.tasks.harmonyset_oe import oe_report_lines, oe_results

    for run_dir in run_dirs:
        config = json.loads((run_dir / "config.json").read_text())
        if config.get("task", {}).get("kind") == "open":
            lines += oe_report_lines(run_dir.name, config, oe_results(run_dir))
            continue
        results = json.loads((run_dir / "results.json").read_text())
        section = analysis_report_lines if is_analysis_run(config) else task_report_lines
        lines += section(run_dir.name, config, results)
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
