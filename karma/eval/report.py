"""``karma report``: a markdown report with tables and PNG plots for one or several run directories.

For each run: accuracy per question type and arm with 95% video-clustered bootstrap intervals, the
parse-failure rate, the graph's paired effect per type (difference, interval, exact McNemar p), and
the reference baselines. With several runs, a side-by-side table compares them. The plots (drawn by
:mod:`karma.run.plots`, whose rules keep them in line with the tables) show the same numbers in
percent, with n, videos and parse failures on the picture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError
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


def few_videos(results: dict[str, Any]) -> bool:
    """True when the report warns that the video-clustered intervals are too coarse."""
    return results.get("n_videos", 0) < MIN_VIDEOS_FOR_INTERVALS


def _arm_legend(arm: str, overall: dict[str, Any]) -> str:
    """The arm with its parse failures (and backend errors): the plot shows what the table does."""
    label = f"{ARM_LABEL.get(arm, arm)} · parse failures {overall['parse_failures']}"
    if overall.get("n"):
        label += f" ({_pct(overall['parse_failure_rate'])} %)"
    errors = overall.get("backend_errors", 0)
    return label + (f" · {errors} backend errors" if errors else "")


def _chance(results: dict[str, Any]) -> float:
    random = results.get("baselines", {}).get(OVERALL, {}).get("random")
    if random and random.get("accuracy") is not None:
        return float(random["accuracy"])
    return 1.0 / len(results.get("letters") or "abcd")


def _group_n(arms: dict[str, Any], group: str) -> str:
    ns = [
        (stats[OVERALL] if group == OVERALL else stats["by_type"].get(group, {})).get("n")
        for stats in arms.values()
    ]
    ns = [n for n in ns if n is not None]
    return "n = " + (str(ns[0]) if len(set(ns)) == 1 else " / ".join(map(str, ns)))


def accuracy_plot_figure(results: dict[str, Any], title: str) -> Any:
    """The accuracy figure of one run: per type and overall, each arm and the graph reader, with
    intervals, parse failures in the legend, n and videos in the title (karma.run.plots' rules)."""
    from karma.run.plots import FEW_STAMP, OFF, ON, READER, Estimate, Series, accuracy_figure, wrap

    arms = dict(_arms(results))
    types = _types(results)
    groups = [*types, OVERALL]
    series = [
        Series(
            _arm_legend(arm, stats[OVERALL]),
            ON if arm == "on" else OFF,
            [Estimate.of(stats[OVERALL] if g == OVERALL else stats["by_type"].get(g)) for g in groups],
        )
        for arm, stats in arms.items()
    ]
    scorer = results.get("baselines", {})
    reader = [
        Estimate.of(
            (scorer.get(OVERALL, {}) if g == OVERALL else scorer.get("by_type", {}).get(g, {})).get(
                "graph_reader"
            )
        )
        for g in groups
    ]
    if any(reader):
        series.append(Series(BASELINE_LABEL["graph_reader"], READER, reader, hatch="///"))
    errors = sum(stats[OVERALL].get("backend_errors", 0) for stats in arms.values())
    counts = f"n = {results['n_questions']} questions · {results['n_videos']} videos"
    counts += f" · {errors} backend errors (no answer)" if errors else ""
    return accuracy_figure(
        [f"{wrap(g)}\n{_group_n(arms, g)}" for g in groups],
        series,
        title=title,
        counts=counts,
        chance=_chance(results),
        warning=FEW_STAMP if few_videos(results) else None,
    )


def plot_accuracy(results: dict[str, Any], path: Path, title: str) -> Path:
    """The accuracy figure (:func:`accuracy_plot_figure`) as a PNG."""
    from karma.run.plots import save

    return save(accuracy_plot_figure(results, title), path)


def delta_plot_figure(results: dict[str, Any], title: str) -> Any:
    """The paired graph effect per type and overall, in percentage points; None with one arm."""
    from karma.run.plots import FEW_STAMP, Effect, effect_figure, wrap

    paired = results.get("paired")
    if not paired:
        return None
    rows = _paired_rows(paired)
    effects = [Effect(s["delta"], s["ci_low"], s["ci_high"], s["mcnemar_p"], s["n_pairs"]) for _, s in rows]
    return effect_figure(
        [wrap(name) for name, _ in rows],
        effects,
        title=title,
        counts=f"n = {paired[OVERALL]['n_pairs']} pairs (questions both arms answered) · {results['n_videos']} videos",
        warning=FEW_STAMP if few_videos(results) else None,
    )


def plot_delta(results: dict[str, Any], path: Path, title: str) -> Path | None:
    """The graph-effect figure (:func:`delta_plot_figure`) as a PNG; None with one arm."""
    from karma.run.plots import save

    fig = delta_plot_figure(results, title)
    return None if fig is None else save(fig, path)


def comparison_plot_figure(runs: list[tuple[str, dict[str, Any]]]) -> Any:
    """Overall accuracy per run: each arm and the graph reader, n, videos and parse failures per run."""
    from karma.run.plots import FEW_STAMP, OFF, ON, READER, Estimate, Series, accuracy_figure, wrap

    def overall(results: dict[str, Any], arm: str) -> dict[str, Any] | None:
        return results.get("arms", {}).get(arm, {}).get(OVERALL)

    series = [
        Series(
            f"{ARM_LABEL[arm]} (parse failures under each run)",
            colour,
            [Estimate.of(overall(r, arm)) for _, r in runs],
        )
        for arm, colour in (("on", ON), ("off", OFF))
        if any(overall(r, arm) for _, r in runs)
    ]
    reader = [Estimate.of(r.get("baselines", {}).get(OVERALL, {}).get("graph_reader")) for _, r in runs]
    if any(reader):
        series.append(Series(BASELINE_LABEL["graph_reader"], READER, reader, hatch="///"))
    groups = []
    for name, results in runs:
        fails = "/".join(
            _pct(a["parse_failure_rate"]) if a and a.get("n") else "–"
            for a in (overall(results, "on"), overall(results, "off"))
        )
        few = " (few videos)" if few_videos(results) else ""
        groups.append(
            f"{wrap(name, 22)}\nn = {results['n_questions']} · {results['n_videos']} videos{few}\nparse fail. {fails} %"
        )
    questions = sorted(r["n_questions"] for _, r in runs)
    videos = sorted(r["n_videos"] for _, r in runs)

    def span(values: list[int]) -> str:
        return str(values[0]) if values[0] == values[-1] else f"{values[0]}–{values[-1]}"

    return accuracy_figure(
        groups,
        series,
        title="overall accuracy per run",
        counts=f"n = {span(questions)} questions · {span(videos)} videos per run",
        chance=_chance(runs[0][1]) if runs else 0.25,
        warning=FEW_STAMP if any(few_videos(r) for _, r in runs) else None,
        ylabel="overall accuracy (%), 95% CI by video",
    )


def plot_comparison(runs: list[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """The comparison figure (:func:`comparison_plot_figure`) as a PNG."""
    from karma.run.plots import save

    return save(comparison_plot_figure(runs), path)


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


def run_section(run: RunDir, index: int, out: Path) -> list[str]:
    """The report section of one Karma-MV run (its PNGs written to ``out``, named by ``index``): kept
    apart from :func:`write_report` so a report over runs of several tasks shows the same section."""
    config = run.read_config()
    results = run.results()
    identity = config.get("identity", {})
    graphs = config.get("graphs", {})
    lines = [f"## {run_label(run, config)}", ""]
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
    from karma.run.hygiene import report_lines as hygiene_lines

    lines += hygiene_lines(run.path)
    if few_videos(results):
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
    return lines


def write_report(run_dirs: list[str | Path], out_dir: str | Path | None = None) -> Path:
    """Write ``report.md`` and its PNGs; returns the markdown path.

    Default output: ``RUN_DIR/report`` for one run, ``./karma-report`` for several.
    """
    runs = [RunDir(p) for p in run_dirs]
    if not runs:
        raise InputError("give at least one run directory")
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
    unique = len({r.path.name for r in runs}) == len(runs)
    for index, run in enumerate(runs):
        name = run.path.name if unique else f"{index}-{run.path.name}"
        loaded.append((name, run.results()))
        lines += run_section(run, index, out)
    if len(runs) > 1:
        comparison = comparison_table(loaded)
        png = plot_comparison(loaded, out / "comparison.png")
        at = lines.index("<!-- comparison -->")
        lines[at : at + 1] = [*comparison, "", f"![comparison]({png.name})"]
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
