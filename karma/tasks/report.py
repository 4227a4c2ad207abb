"""Markdown sections of ``karma report`` for a task run (accuracy per category and subcategory,
chance baselines of mean 1/k, parse failures, paired arms with McNemar)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_text
from karma.tasks.results import OVERALL

MIN_CLUSTERS_FOR_INTERVALS = 10
"""Below this many clusters the report warns (and the plot is stamped) that the intervals are too coarse."""


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


def _categories(results: dict[str, Any]) -> list[str]:
    groups: list[str] = []
    for stats in results.get("arms", {}).values():
        groups += [g for g in stats.get("by_category", {}) if g not in groups]
    return groups


def task_plot_figure(label: str, config: dict[str, Any], results: dict[str, Any]) -> Any:
    """Accuracy per category and overall, one bar per arm with its clustered interval, the chance
    (mean 1/k) of each group as a dashed segment, n and clusters in the title, parse failures in the
    legend (the rules of karma.run.plots)."""
    from karma.run.plots import ARM_COLOURS, Estimate, Series, accuracy_figure, wrap

    task = config.get("task", {})
    unit = task.get("cluster_unit") or "cluster"
    arms = results.get("arms", {})
    groups = [*_categories(results), OVERALL]

    def block(stats: dict[str, Any], group: str) -> dict[str, Any] | None:
        return stats[OVERALL] if group == OVERALL else stats.get("by_category", {}).get(group)

    series = []
    for i, (arm, stats) in enumerate(arms.items()):
        s = stats[OVERALL]
        legend = f"{arm} · parse failures {s['parse_failures']}"
        legend += f" ({pct(s['parse_failure_rate'], 1)} %)" if s.get("n") else ""
        legend += f" · {s['backend_errors']} backend errors" if s.get("backend_errors") else ""
        colour = ARM_COLOURS[i % len(ARM_COLOURS)]
        series.append(Series(legend, colour, [Estimate.of(block(stats, g)) for g in groups]))
    chance = [
        next(
            (b["chance"] for st in arms.values() if (b := block(st, g)) and b.get("chance") is not None), None
        )
        for g in groups
    ]
    ticks = []
    for group in groups:
        ns = sorted({b["n"] for st in arms.values() if (b := block(st, group))})
        ticks.append(f"{wrap(group)}\nn = {' / '.join(map(str, ns)) or 0}")
    few = results["n_clusters"] < MIN_CLUSTERS_FOR_INTERVALS
    return accuracy_figure(
        ticks,
        series,
        title=f"{label}: {task.get('title', task.get('task', results.get('task', '')))}",
        counts=f"n = {results['n_items']} items · {results['n_clusters']} clusters ({unit})",
        chance=chance,
        warning=f"few clusters ({unit}): intervals too coarse" if few else None,
        ylabel=f"accuracy (%), 95% CI by {unit}",
    )


def task_report_lines(
    label: str, config: dict[str, Any], results: dict[str, Any], plot: str | None = None
) -> list[str]:
    """The report section of one task run (``plot``: the PNG's file name, shown after the overall table)."""
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
    if results["n_clusters"] < MIN_CLUSTERS_FOR_INTERVALS:
        lines.append(
            f"- **few clusters**: the intervals resample whole clusters, so with {results['n_clusters']} "
            f"they are too coarse to trust (use at least {MIN_CLUSTERS_FOR_INTERVALS})"
        )
    if not task.get("paper_comparable", True):
        lines.append("- **not comparable to the paper** (see docs/tasks.md for why)")
    lines += ["", "### Accuracy (%)", "", *overall_rows(results), ""]
    if plot:
        lines += [f"![accuracy per category and arm]({plot})", ""]
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


def task_run_section(run_dir: Path, index: int, out: Path) -> list[str]:
    """The report section of one task run (MCQ, open-ended or analysis; its PNG written to ``out``,
    named by ``index``): one function so a report over runs of several tasks shows the same section."""
    import json

    from karma.run.plots import save
    from karma.tasks.analysis_run import analysis_report_lines, is_analysis_run
    from karma.tasks.harmonyset_oe import oe_report_lines, oe_results

    config = json.loads((run_dir / "config.json").read_text())
    if config.get("task", {}).get("kind") == "open":
        return oe_report_lines(run_dir.name, config, oe_results(run_dir))
    results = json.loads((run_dir / "results.json").read_text())
    if is_analysis_run(config):
        return analysis_report_lines(run_dir.name, config, results)
    png = save(
        task_plot_figure(run_dir.name, config, results), out / f"{index:02d}_{run_dir.name}_accuracy.png"
    )
    return task_report_lines(run_dir.name, config, results, plot=png.name)


def write_task_report(run_dirs: list[Path], out_dir: Path | None = None) -> Path:
    """``report.md`` for one or several task runs (default: RUN_DIR/report, or ./karma-report)."""
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
    for index, run_dir in enumerate(run_dirs):
        lines += task_run_section(run_dir, index, out)
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
