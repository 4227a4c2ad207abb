"""``karma report``: a markdown report with tables and PNG plots for one or several run directories.

For each run: accuracy per question type and arm with 95% video-clustered bootstrap intervals, the
parse-failure rate, the graph's paired effect per type (difference, interval, exact McNemar p), and
the reference baselines. With several runs, a side-by-side table compares them. Plots are drawn with
matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_path, atomic_write_text
from karma.eval.answer_report import ceiling_lines, status_table
from karma.eval.results import BASELINE_NAMES, OVERALL, TYPE_ORDER
from karma.eval.rundir import RunDir

ARM_LABEL = {"on": "graph on", "off": "graph off"}
BASELINE_LABEL = {
    "random": "random (25%)",
    "most_frequent_letter": "most frequent letter",
    "longest_option": "longest option",
    "word_overlap": "word overlap",
    "graph_reader": "graph reader (facts only, no LLM)",
}

MIN_VIDEOS_FOR_INTERVALS = 10
"""Below this many videos the report warns that video-clustered bootstrap intervals are too coarse."""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _interval(stats: dict[str, Any]) -> str:
    if stats.get("ci_low") is None:
        return _pct(stats.get("accuracy"))
    return f"{_pct(stats['accuracy'])} [{_pct(stats['ci_low'])}, {_pct(stats['ci_high'])}]"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f}"


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 1e-4 else f"{value:.1e}"


def run_label(run: RunDir, config: dict[str, Any]) -> str:
    identity = config.get("identity", {})
    return f"{run.path.name} ({identity.get('pipeline')}/{identity.get('backend')}, {identity.get('retriever')}, {config.get('graph_mode')})"


def _type_order(names: Any) -> list[str]:
    """Question types in the benchmark's order (results.json stores keys sorted alphabetically)."""
    present = list(names)
    return [t for t in TYPE_ORDER if t in present] + sorted(t for t in present if t not in TYPE_ORDER)


def _types(results: dict[str, Any]) -> list[str]:
    return _type_order({t for arm in results.get("arms", {}).values() for t in arm["by_type"]})


def _arms(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    arms = results.get("arms", {})
    return [(arm, arms[arm]) for arm in ("on", "off") if arm in arms]


def _paired_rows(paired: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    by_type = paired["by_type"]
    return [*((t, by_type[t]) for t in _type_order(by_type)), (OVERALL, paired[OVERALL])]


def accuracy_table(results: dict[str, Any]) -> list[str]:
    types = _types(results)
    header = "| arm | " + " | ".join([*types, OVERALL]) + " | parse failures | backend errors |"
    lines = [header, "|" + "---|" * (len(types) + 4)]
    for arm, stats in _arms(results):
        cells = [
            _interval(stats["by_type"][t]) + f" (n={stats['by_type'][t]['n']})"
            if t in stats["by_type"]
            else "–"
            for t in types
        ]
        overall = stats[OVERALL]
        cells.append(_interval(overall) + f" (n={overall['n']})")
        lines.append(
            f"| {ARM_LABEL.get(arm, arm)} | "
            + " | ".join(cells)
            + f" | {_pct(overall['parse_failure_rate'])}% ({overall['parse_failures']})"
            + f" | {overall.get('backend_errors', 0)} |"
        )
    return lines


def paired_table(results: dict[str, Any]) -> list[str]:
    paired = results.get("paired")
    if not paired:
        return ["Only one arm was run: no paired graph effect."]
    lines = [
        "| type | pairs | on | off | delta (points) [95% CI] | on-only right | off-only right | McNemar p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, s in _paired_rows(paired):
        lines.append(
            f"| {name} | {s['n_pairs']} | {_pct(s['accuracy_on'])} | {_pct(s['accuracy_off'])} | "
            f"{_signed(s['delta'])} [{_signed(s['ci_low'])}, {_signed(s['ci_high'])}] | "
            f"{s['on_only_correct']} | {s['off_only_correct']} | {_p(s['mcnemar_p'])} |"
        )
    return lines


def grounding_table(results: dict[str, Any]) -> list[str]:
    """Accuracy per arm and the paired effect per grounding (``karma qa make`` data); [] without."""
    arms = _arms(results)
    groundings = sorted({g for _, stats in arms for g in stats.get("by_grounding", {})})
    if not groundings:
        return []
    lines = [
        "| grounding | "
        + " | ".join(ARM_LABEL.get(arm, arm) for arm, _ in arms)
        + " | pairs | delta (points) [95% CI] | McNemar p |",
        "|" + "---|" * (len(arms) + 4),
    ]
    paired = results.get("paired", {}).get("by_grounding", {})
    for name in groundings:
        cells = [
            _interval(stats["by_grounding"][name]) + f" (n={stats['by_grounding'][name]['n']})"
            if name in stats.get("by_grounding", {})
            else "–"
            for _, stats in arms
        ]
        s = paired.get(name)
        effect = (
            [
                str(s["n_pairs"]),
                f"{_signed(s['delta'])} [{_signed(s['ci_low'])}, {_signed(s['ci_high'])}]",
                _p(s["mcnemar_p"]),
            ]
            if s
            else ["0", "–", "–"]
        )
        lines.append(f"| {name} | " + " | ".join([*cells, *effect]) + " |")
    return lines


def baseline_table(results: dict[str, Any]) -> list[str]:
    baselines = results.get("baselines", {})
    by_type = baselines.get("by_type", {})
    types = _type_order(by_type)
    lines = ["| baseline | " + " | ".join([*types, OVERALL]) + " |", "|" + "---|" * (len(types) + 2)]
    for name in BASELINE_NAMES:
        if name not in baselines.get(OVERALL, {}):
            continue
        cells = [_interval(by_type[t][name]) if name in by_type.get(t, {}) else "–" for t in types]
        cells.append(_interval(baselines[OVERALL][name]))
        lines.append(f"| {BASELINE_LABEL[name]} | " + " | ".join(cells) + " |")
    return lines


def plot_accuracy(results: dict[str, Any], path: Path, title: str) -> Path:
    """Grouped bars: accuracy per type and arm with interval whiskers, random chance as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = dict(_arms(results))
    groups = [*_types(results), OVERALL]
    fig, ax = plt.subplots(figsize=(1.6 * len(groups) + 2, 3.8))
    width = 0.8 / max(1, len(arms))
    for i, (arm, stats) in enumerate(arms.items()):
        xs, ys, lo, hi = [], [], [], []
        for j, group in enumerate(groups):
            s = stats[OVERALL] if group == OVERALL else stats["by_type"].get(group)
            if s is None or s["accuracy"] is None:  # no answered question (every request failed)
                continue
            xs.append(j + (i - (len(arms) - 1) / 2) * width)
            ys.append(s["accuracy"])
            lo.append(s["accuracy"] - s["ci_low"])
            hi.append(s["ci_high"] - s["accuracy"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=ARM_LABEL.get(arm, arm))
    scorer = results.get("baselines", {})
    points = [
        (
            j,
            (scorer.get(OVERALL, {}) if g == OVERALL else scorer.get("by_type", {}).get(g, {})).get(
                "graph_reader"
            ),
        )
        for j, g in enumerate(groups)
    ]
    points = [(j, p["accuracy"]) for j, p in points if p]
    if points:
        ax.scatter(
            *zip(*points, strict=True), marker="D", color="black", zorder=3, label="graph reader (no LLM)"
        )
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1, label="random")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (95% CI, by video)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path


def plot_delta(results: dict[str, Any], path: Path, title: str) -> Path | None:
    """Bars of the paired graph effect (on - off) per type with interval whiskers."""
    paired = results.get("paired")
    if not paired:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _paired_rows(paired)
    names = [name for name, _ in rows]
    deltas = [100 * s["delta"] for _, s in rows]
    lo = [100 * (s["delta"] - s["ci_low"]) for _, s in rows]
    hi = [100 * (s["ci_high"] - s["delta"]) for _, s in rows]
    colors = ["tab:green" if d > 0 else "tab:red" if d < 0 else "tab:grey" for d in deltas]
    fig, ax = plt.subplots(figsize=(1.6 * len(rows) + 2, 3.4))
    ax.bar(range(len(rows)), deltas, yerr=[lo, hi], capsize=3, color=colors)
    for x, (_, s) in enumerate(rows):
        ax.annotate(
            f"p={_p(s['mcnemar_p'])}",
            (x, 0),
            textcoords="offset points",
            xytext=(0, -12),
            ha="center",
            fontsize=7,
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)), names)
    ax.set_ylabel("graph effect, points (on - off)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path


def plot_comparison(runs: list[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """Overall accuracy per run and arm, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2.2 * len(runs) + 2, 3.6))
    arms = ["on", "off"]
    width = 0.38
    for i, arm in enumerate(arms):
        xs, ys, lo, hi = [], [], [], []
        for j, (_, results) in enumerate(runs):
            s = results.get("arms", {}).get(arm, {}).get(OVERALL)
            if s is None or s["accuracy"] is None:
                continue
            xs.append(j + (i - 0.5) * width)
            ys.append(s["accuracy"])
            lo.append(s["accuracy"] - s["ci_low"])
            hi.append(s["ci_high"] - s["accuracy"])
        if xs:
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=ARM_LABEL[arm])
    ax.axhline(0.25, color="grey", linestyle="--", linewidth=1, label="random")
    ax.set_xticks(range(len(runs)), [name for name, _ in runs], rotation=15, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("overall accuracy (95% CI)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path


def comparison_table(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    lines = [
        "| run | questions | graph on | graph off | delta [95% CI] | McNemar p | parse failures (on/off) | graph reader |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, results in runs:
        arms = results.get("arms", {})
        on, off = arms.get("on", {}).get(OVERALL), arms.get("off", {}).get(OVERALL)
        paired = results.get("paired", {}).get(OVERALL)
        delta = (
            f"{_signed(paired['delta'])} [{_signed(paired['ci_low'])}, {_signed(paired['ci_high'])}]"
            if paired
            else "–"
        )
        p = _p(paired["mcnemar_p"]) if paired else "–"
        fails = "/".join(_pct(a["parse_failure_rate"]) + "%" if a else "–" for a in (on, off))
        errors = sum(a.get("backend_errors", 0) for a in (on, off) if a)
        fails += f", {errors} backend errors" if errors else ""
        scorer = results.get("baselines", {}).get(OVERALL, {}).get("graph_reader")
        lines.append(
            f"| {name} | {results.get('n_questions')} | {_interval(on) if on else '–'} | {_interval(off) if off else '–'} | "
            f"{delta} | {p} | {fails} | {_interval(scorer) if scorer else '–'} |"
        )
    return lines


def write_report(run_dirs: list[str | Path], out_dir: str | Path | None = None) -> Path:
    """Write ``report.md`` and its PNGs; returns the markdown path.

    Default output: ``RUN_DIR/report`` for one run, ``./karma-report`` for several.
    """
    runs = [RunDir(p) for p in run_dirs]
    if not runs:
        raise ValueError("give at least one run directory")
    out = Path(out_dir) if out_dir else (runs[0].path / "report" if len(runs) == 1 else Path("karma-report"))
    out.mkdir(parents=True, exist_ok=True)
    loaded: list[tuple[str, dict[str, Any]]] = []
    lines = ["# karma evaluation report", ""]
    lines.append(
        "Accuracy in percent with 95% bootstrap intervals resampled by video, over the answered "
        "questions: an unparsed answer counts as wrong (parse failures); a backend error is no answer "
        "and is counted apart (backend errors). The graph effect is the paired difference on the "
        "questions both arms answered (graph on minus off) with the exact McNemar test on discordant pairs."
    )
    lines.append("")
    if len(runs) > 1:
        lines += ["## Comparison", "", "<!-- comparison -->", ""]
    for index, run in enumerate(runs):
        config = run.read_config()
        results = run.results()
        name = run.path.name if len({r.path.name for r in runs}) == len(runs) else f"{index}-{run.path.name}"
        loaded.append((name, results))
        identity = config.get("identity", {})
        graphs = config.get("graphs", {})
        lines += [f"## {run_label(run, config)}", ""]
        lines.append(
            f"- data hash `{config['hashes']['data']}`, model `{config['hashes']['model']}`, template "
            f"v{config['hashes']['template_version']} (`{config['hashes']['template'][:12]}`)"
        )
        mode = config.get("graph_mode")
        if mode == "folds":
            lines.append(
                f"- graph: {identity.get('folds')} folds by video (each video answered from a graph built without its fold)"
            )
        elif mode == "whole_corpus":
            lines.append(
                "- graph: **whole corpus** (the published setting: statistics include the evaluated video)"
            )
        else:
            lines.append(f"- graph: given file `{identity.get('graph_path')}`")
        lines.append(
            "- graphs used: "
            + ", ".join(f"{k} `{v['hash']}` ({v['edges']} edges)" for k, v in sorted(graphs.items()))
        )
        lines.append(f"- questions: {results['n_questions']} from {results['n_videos']} videos")
        from karma.eval.hygiene import report_lines as hygiene_lines

        lines += hygiene_lines(run.path)
        if results["n_videos"] < MIN_VIDEOS_FOR_INTERVALS:
            lines.append(
                f"- **few videos**: the intervals resample whole videos, so with {results['n_videos']} "
                f"they are too coarse to trust (use at least {MIN_VIDEOS_FOR_INTERVALS}; widen `--limit` "
                "or `--videos`)"
            )
        lines += ["", "### Accuracy", "", *accuracy_table(results), ""]
        prefix = f"{index:02d}_{run.path.name}"
        acc_png = plot_accuracy(results, out / f"{prefix}_accuracy.png", run_label(run, config))
        lines += [f"![accuracy per type]({acc_png.name})", ""]
        lines += ["### Graph effect (paired)", "", *paired_table(results), ""]
        delta_png = plot_delta(results, out / f"{prefix}_delta.png", run_label(run, config))
        if delta_png:
            lines += [f"![graph effect per type]({delta_png.name})", ""]
        grounded = grounding_table(results)
        if grounded:
            lines += ["### Per grounding (`question_grounding.jsonl` of `karma qa make`)", "", *grounded, ""]
        lines += ["### Reference baselines (no model)", "", *baseline_table(results), ""]
        lines += ["### How answers were read", "", *status_table(results), "", *ceiling_lines(results), ""]
    if len(runs) > 1:
        comparison = comparison_table(loaded)
        png = plot_comparison(loaded, out / "comparison.png")
        at = lines.index("<!-- comparison -->")
        lines[at : at + 1] = [*comparison, "", f"![comparison]({png.name})"]
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
