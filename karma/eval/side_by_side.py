"""``karma report`` over runs of different tasks (a Karma-MV run beside a WildScore run, say).

Runs of one kind keep their own report (:func:`karma.eval.report.write_report` for Karma-MV,
:func:`karma.tasks.report.write_task_report` for tasks). When the runs mix kinds, the report opens
with what they share, side by side: each arm's overall accuracy with its 95% clustered interval,
correct/n, the clusters the interval resamples (videos for Karma-MV, the task's unit otherwise), the
chance level, parse failures and backend errors, in one table and one figure drawn by the rules of
:mod:`karma.run.plots`. It then names, per run, the metrics the other runs do not have (the graph
effect and the reference baselines of Karma-MV, a task's per-category tables), and shows them in
each run's own section, the same section its single-kind report shows.

Both result formats are read as the drivers write them today: a Karma-MV ``results.json`` counts
``n_questions`` / ``n_videos`` and keeps the chance level as its random baseline; a task run's counts
``n_items`` / ``n_clusters`` and keeps chance (mean 1/k) in every accuracy block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError

OVERALL = "overall"
"""The key of a whole-run accuracy block in both result formats."""
MIN_CLUSTERS = 10
"""Below this many clusters a run's intervals are too coarse to trust (the same bound as
``karma.eval.report.MIN_VIDEOS_FOR_INTERVALS`` and ``karma.tasks.report.MIN_CLUSTERS_FOR_INTERVALS``)."""
SHARED_METRICS = ("accuracy", "ci95", "n", "clusters", "chance", "parse_failures", "backend_errors")
"""The metrics of every run with accuracy, in both formats: the overall accuracy of each arm, its 95%
clustered interval, the answered count, the clusters resampled, chance, parse failures, backend errors."""
ARM_ORDER = {"on": 0, "off": 1}
"""Karma-MV's arms in the order its own report shows them (results.json keeps them sorted)."""
SHARED_COLUMNS = (
    "accuracy [95% CI]",
    "correct/n",
    "clusters",
    "chance",
    "parse failures",
    "backend errors",
)
"""What the side-by-side table shows for every run that has accuracy (the shared metrics)."""


@dataclass(frozen=True)
class RunView:
    """What one run contributes to the side-by-side part, in one vocabulary for both formats."""

    path: Path
    label: str
    """The run's name in the report (its folder name, numbered when two folders share a name)."""
    task: str
    """The task's registry name (``karma-mv`` for a Karma-MV run)."""
    kind: str
    """``karma-mv`` or ``task`` (which section renderer shows the run)."""
    unit: str
    """What the intervals resample (video, item, ...)."""
    n: int | None
    clusters: int | None
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Arm -> its overall accuracy block (empty for runs without accuracy: open-ended, analysis)."""
    chance: float | None = None
    metrics: tuple[str, ...] = ()
    """The metrics the run reports, named alike across formats (``accuracy``, ``graph_effect``, ...)."""

    @property
    def few(self) -> bool:
        """True when the run's intervals resample too few clusters to trust."""
        return self.clusters is not None and self.clusters < MIN_CLUSTERS


def _levels(arms: dict[str, Any]) -> list[str]:
    """The ``by_*`` breakdowns present in any arm, in first-seen order."""
    found: list[str] = []
    for stats in arms.values():
        found += [k for k in stats if k.startswith("by_") and stats[k] and k not in found]
    return found


def karma_mv_view(path: Path, label: str) -> RunView:
    """A Karma-MV run (``karma eval``) as seen by the side-by-side part."""
    from karma.eval.rundir import RunDir

    results = RunDir(path).results()
    arms = results.get("arms", {})
    arms = {arm: arms[arm] for arm in sorted(arms, key=lambda a: (ARM_ORDER.get(a, len(ARM_ORDER)), a))}
    metrics = list(SHARED_METRICS) if arms else []
    metrics += ["accuracy_" + level for level in _levels(arms)]
    baselines = results.get("baselines", {}).get(OVERALL, {})
    metrics += ["graph_effect"] if results.get("paired") else []
    metrics += ["baselines"] if baselines else []
    metrics += ["graph_reader"] if "graph_reader" in baselines else []
    metrics += ["parse_statuses"] if any(a[OVERALL].get("parse_statuses") for a in arms.values()) else []
    random = baselines.get("random") or {}
    chance = random.get("accuracy")
    if chance is None and arms:
        chance = 1.0 / len(results.get("letters") or "abcd")
    return RunView(
        path=path,
        label=label,
        task="karma-mv",
        kind="karma-mv",
        unit="video",
        n=results.get("n_questions"),
        clusters=results.get("n_videos"),
        arms={arm: stats[OVERALL] for arm, stats in arms.items()},
        chance=chance,
        metrics=tuple(metrics),
    )


def task_view(path: Path, label: str) -> RunView:
    """A task run (``karma eval --task``) as seen by the side-by-side part; open-ended and analysis
    runs have no accuracy and name their own metrics."""
    config = json.loads((path / "config.json").read_text())
    task = config.get("task", {})
    results_path = path / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    arms = results.get("arms", {}) if task.get("kind") == "mcq" else {}
    if not arms:
        return RunView(
            path=path,
            label=label,
            task=str(task.get("task")),
            kind="task",
            unit=str(task.get("cluster_unit") or "cluster"),
            n=results.get("n_items"),
            clusters=results.get("n_clusters"),
            metrics=tuple(task.get("metrics", ())),
        )
    metrics = list(SHARED_METRICS)
    metrics += ["accuracy_" + level for level in _levels(arms)]
    metrics += ["paired_arms"] if results.get("paired") else []
    overall = {arm: stats[OVERALL] for arm, stats in arms.items()}
    chance = next((s["chance"] for s in overall.values() if s.get("chance") is not None), None)
    return RunView(
        path=path,
        label=label,
        task=str(task.get("task", results.get("task"))),
        kind="task",
        unit=str(task.get("cluster_unit") or "cluster"),
        n=results.get("n_items"),
        clusters=results.get("n_clusters"),
        arms=overall,
        chance=chance,
        metrics=tuple(metrics),
    )


def shared_metrics(views: list[RunView]) -> list[str]:
    """The metrics every run reports, in the first run's order."""
    return [m for m in views[0].metrics if all(m in v.metrics for v in views[1:])] if views else []


def not_shared(views: list[RunView]) -> dict[str, list[str]]:
    """Per run label: the metrics it reports that at least one other run lacks."""
    shared = set(shared_metrics(views))
    return {v.label: [m for m in v.metrics if m not in shared] for v in views}


def _pct(value: float | None) -> str:
    return "–" if value is None or value != value else f"{100 * value:.2f}"


def _interval(stats: dict[str, Any]) -> str:
    if stats.get("accuracy") is None:
        return "–"
    if stats.get("ci_low") is None:
        return _pct(stats["accuracy"])
    return f"{_pct(stats['accuracy'])} [{_pct(stats['ci_low'])}, {_pct(stats['ci_high'])}]"


def _arm_name(arm: str) -> str:
    return "graph " + arm if arm in ARM_ORDER else arm


def side_by_side_table(views: list[RunView]) -> list[str]:
    """One row per run and arm: the shared metrics (:data:`SHARED_COLUMNS`)."""
    lines = [
        "| run | task | arm | " + " | ".join(SHARED_COLUMNS) + " |",
        "|" + "---|" * (len(SHARED_COLUMNS) + 3),
    ]
    for view in views:
        for arm, s in view.arms.items():
            clusters = f"{s.get('n_clusters', s.get('n_videos', view.clusters))} ({view.unit})"
            clusters += " **few**" if view.few else ""
            lines.append(
                f"| {view.label} | {view.task} | {_arm_name(arm)} | {_interval(s)} | {s.get('correct')}/{s.get('n')} | "
                f"{clusters} | {_pct(view.chance)} | {s.get('parse_failures')} "
                f"({_pct(s.get('parse_failure_rate'))}%) | {s.get('backend_errors', 0)} |"
            )
    return lines


def side_by_side_figure(views: list[RunView]) -> Any:
    """Overall accuracy per run, one bar per arm with its clustered interval, each run's chance as a
    dashed segment, n and clusters under each run, parse failures per arm under each run, and the
    few-clusters stamp when any run's intervals are too coarse (the rules of karma.run.plots)."""
    from karma.run.plots import ARM_COLOURS, OFF, ON, Estimate, Series, accuracy_figure, wrap

    shown = [v for v in views if v.arms]
    arms: list[str] = []
    for view in shown:
        arms += [a for a in view.arms if a not in arms]
    spare = iter(c for c in ARM_COLOURS if c not in (ON, OFF))
    colours = {arm: ON if arm == "on" else OFF if arm == "off" else next(spare, "#999999") for arm in arms}
    series = [
        Series(
            _arm_name(arm) + " (parse failures under each run)",
            colours[arm],
            [Estimate.of(v.arms.get(arm)) for v in shown],
        )
        for arm in arms
    ]
    groups = []
    for view in shown:
        fails = " / ".join(f"{arm} {_pct(s.get('parse_failure_rate'))}" for arm, s in view.arms.items())
        few = " (few)" if view.few else ""
        groups.append(
            f"{wrap(view.label, 22)}\n{view.task}\nn = {view.n} · {view.clusters} {view.unit}s{few}\n"
            f"parse fail. {fails} %"
        )
    counts = " | ".join(f"{v.label}: n = {v.n} · {v.clusters} {v.unit}s" for v in shown)
    return accuracy_figure(
        groups,
        series,
        title="overall accuracy per run, side by side (the metric these runs share)",
        counts=counts,
        chance=[v.chance for v in shown],
        warning="few clusters: intervals too coarse" if any(v.few for v in shown) else None,
        ylabel="overall accuracy (%), 95% CI by each run's cluster",
    )


def _views(run_dirs: list[Path]) -> list[RunView]:
    from karma.tasks.runner import is_task_run

    unique = len({p.name for p in run_dirs}) == len(run_dirs)
    views = []
    for index, path in enumerate(run_dirs):
        if not (path / "config.json").is_file():
            raise InputError(f"{path}: not a karma run directory (no config.json)")
        label = path.name if unique else f"{index}-{path.name}"
        views.append(task_view(path, label) if is_task_run(path) else karma_mv_view(path, label))
    return views


def write_side_by_side(run_dirs: list[Path], out_dir: Path | None = None) -> Path:
    """``report.md`` over runs of different tasks (default output ``./karma-report``): what they share
    side by side, what they do not, then each run's own section. Returns the markdown path."""
    from karma.eval.report import run_section
    from karma.eval.rundir import RunDir
    from karma.run.plots import save
    from karma.tasks.report import task_run_section

    run_dirs = [Path(p) for p in run_dirs]
    if not run_dirs:
        raise InputError("give at least one run directory")
    views = _views(run_dirs)
    out = Path(out_dir) if out_dir else Path("karma-report")
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# karma report",
        "",
        "Runs of different tasks, side by side where they share a metric. Accuracy in percent with 95% "
        "bootstrap intervals that resample each run's clusters (videos for Karma-MV, the task's unit "
        "otherwise), over the answered questions or items: an unparsed answer counts as wrong (parse "
        "failures); a backend error is no answer and is counted apart. Chance: Karma-MV's random "
        "baseline, a task's mean of 1/k over its answered items.",
        "",
        "## Side by side",
        "",
    ]
    shared = shared_metrics(views)
    lines.append("- shared by every run: " + (", ".join(f"`{m}`" for m in shared) or "nothing"))
    with_accuracy = [v for v in views if v.arms]
    if with_accuracy:
        lines += ["", *side_by_side_table(with_accuracy), ""]
        png = save(side_by_side_figure(with_accuracy), out / "side_by_side.png")
        lines += [f"![overall accuracy side by side]({png.name})", ""]
    without = [v.label for v in views if not v.arms]
    if without:
        lines.append("- no accuracy to set beside the others: " + ", ".join(without))
    lines += ["", "### Not shared (shown in each run's own section below)", ""]
    for label, metrics in not_shared(views).items():
        lines.append(f"- {label}: " + (", ".join(f"`{m}`" for m in metrics) or "nothing beyond the shared"))
    lines.append("")
    for index, view in enumerate(views):
        if view.kind == "karma-mv":
            lines += run_section(RunDir(view.path), index, out)
        else:
            lines += task_run_section(view.path, index, out)
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
