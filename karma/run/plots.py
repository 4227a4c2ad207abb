"""The PNG plots of karma's reports, drawn so that the picture says what the tables say.

One module for every report figure (a Karma-MV run's accuracy and graph effect, the comparison of
several runs, a task run's accuracy per category and arm, runs of different tasks side by side:
``karma.eval.side_by_side``) because the rules that keep such a figure
honest are the same for all of them, and a reader compares the figures side by side:

* percent on every axis: accuracy in %, an effect in percentage points, never fractions;
* n and the clusters the intervals resample (videos) in the title, n per group under each group,
  parse failures in the legend, a red "few videos" stamp when the report warns that the intervals
  are too coarse;
* nothing cut by the frame or hidden by the legend: the y range leaves room above 100 % for the
  value labels, the legend sits below the axes, the layout is matplotlib's constrained layout;
* a zero bar is drawn a little high (``MIN_BAR``, ``MIN_EFFECT_BAR``) with an outline and labelled
  with its true value, so "0 %" is not "missing";
* value labels sit beyond the whisker, p values under the axis, never on a bar;
* colour means significance only where it holds (McNemar p < ``ALPHA`` and the interval excludes
  0); every other effect is grey, and every effect has its interval drawn.

:func:`layout_problems` checks a drawn figure against the geometric rules with matplotlib's own
artist extents (the tests also check the saved PNG's pixels). Plots are drawn with the Agg backend:
no display needed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karma.core.atomic import atomic_path

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

DPI = 110
"""Pixels per inch of the saved PNGs (the figure is drawn at the same dpi, so artist extents are
PNG pixels)."""
MIN_BAR = 1.2
"""Least drawn height (percent) of an accuracy bar, so a 0 % bar is visible; outlined and labelled
with its true value."""
MIN_EFFECT_BAR = 0.012
"""Least drawn height of an effect bar, as a share of the axis range (a zero effect straddles 0)."""
ALPHA = 0.05
"""Significance level of the colouring (the tables print p itself)."""
HEADROOM = 14.0
"""Percent above 100 kept free for the value labels of bars that reach 100 %."""
FEW_STAMP = "few videos: intervals too coarse"

ON, OFF, READER = "#0072B2", "#E69F00", "#FFFFFF"
"""Graph on (blue), graph off (orange), graph reader (white, hatched): colour-blind-safe (Okabe-Ito)."""
GAIN, LOSS, NOT_SIGNIFICANT = "#009E73", "#D55E00", "#B4B9C0"
"""A gain (green), a loss (vermillion), no significant effect (a cool grey: distinct from the neutral
greys of anti-aliased text, so a PNG check can find its pixels)."""
EDGE = "#333333"
"""Outline of every bar (keeps a zero bar and a white bar visible)."""
WARN = "#C00000"
ARM_COLOURS = (ON, OFF, "#CC79A7", "#56B4E9", "#F0E442", "#009E73", "#D55E00", "#999999")
"""Colours of a task report's arms, in the order the run lists them."""


@dataclass(frozen=True)
class Estimate:
    """One bar: a fraction (0-1) with its interval and the count under it."""

    value: float | None
    """Accuracy as a fraction; None when nothing was answered (drawn as "no answers")."""
    low: float | None = None
    """Lower end of the 95% interval (None: no interval, e.g. the random baseline)."""
    high: float | None = None
    """Upper end of the 95% interval."""

    @classmethod
    def of(cls, stats: dict[str, Any] | None) -> Estimate | None:
        """From a results.json block (``accuracy``, ``ci_low``, ``ci_high``); None without one."""
        if not stats:
            return None
        return cls(stats.get("accuracy"), stats.get("ci_low"), stats.get("ci_high"))


@dataclass(frozen=True)
class Series:
    """One bar per group, in one colour, with one legend entry."""

    label: str
    """Legend text (parse failures belong here)."""
    colour: str
    estimates: Sequence[Estimate | None]
    """One per group; None where the series has nothing for the group (no bar, no label)."""
    hatch: str | None = None


@dataclass(frozen=True)
class Effect:
    """One paired effect: difference in fractions, its interval, McNemar p, the pairs."""

    delta: float
    low: float
    high: float
    p: float
    pairs: int

    @property
    def significant(self) -> bool:
        """McNemar p below ALPHA and an interval that excludes 0 (both, so colour never overstates)."""
        return self.p < ALPHA and (self.low > 0 or self.high < 0)


def p_text(p: float) -> str:
    """p as the tables print it (3 significant digits, scientific below 1e-4)."""
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def pct_text(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def wrap(text: str, width: int = 16) -> str:
    """Tick labels wrapped so neighbouring groups' labels do not run into each other."""
    return "\n".join(textwrap.wrap(text, width)) or text


def _figure(n_groups: int, n_series: int, height: float = 4.4) -> tuple[Figure, Axes]:
    plt = _pyplot()
    width = max(6.4, 0.42 * n_groups * (n_series + 0.8) + 1.8)
    fig, ax = plt.subplots(figsize=(width, height), dpi=DPI, layout="constrained")
    return fig, ax


def _titles(fig: Figure, ax: Axes, title: str, counts: str, warning: str | None) -> None:
    """The run in the figure title, n and videos on the left above the axes, the stamp on the right."""
    fig.suptitle(wrap(title, 110), fontsize=9)
    ax.set_title(counts, loc="left", fontsize=8)
    if warning:
        ax.set_title(warning, loc="right", fontsize=8, color=WARN, fontweight="bold")


def _legend(fig: Figure, handles: list[Any]) -> None:
    """Below the axes, outside them: it can hide nothing."""
    if not handles:
        return
    for ncols in range(min(len(handles), 3), 0, -1):
        legend = fig.legend(
            handles=handles, loc="outside lower center", ncols=ncols, fontsize=8, frameon=False
        )
        if ncols == 1 or legend.get_window_extent(_renderer(fig)).width <= fig.bbox.width - 8:
            return
        legend.remove()


def _value_labels(ax: Axes, spots: list[tuple[float, float, float, str]]) -> list[Any]:
    """Labels beyond the whisker ends: (x, end, direction +1 up / -1 down, text)."""
    return [
        ax.annotate(
            text,
            (x, end),
            textcoords="offset points",
            xytext=(0, 2 * direction),
            ha="center",
            va="bottom" if direction > 0 else "top",
            fontsize=7,
            annotation_clip=False,
        )
        for x, end, direction, text in spots
    ]


def _fit_labels(fig: Figure, ax: Axes, labels: list[Any], bars: list[Any]) -> None:
    """Turn the value labels upright when one is wider than its bar (many narrow bars), with room."""
    if not labels:
        return
    renderer = _renderer(fig)
    widths = [bar.get_window_extent(renderer).width for bar in bars]
    if min(widths, default=0) >= max(label.get_window_extent(renderer).width for label in labels) + 2:
        return
    for label in labels:
        label.set_rotation(90)
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 10)


def grouped_bars(
    ax: Axes, groups: Sequence[str], series: Sequence[Series], chance: Sequence[float | None] | float | None
) -> tuple[list[Any], list[Any], list[Any]]:
    """Accuracy bars in percent, one cluster per group, with interval whiskers and value labels.

    ``chance``: one line across the axes (a float) or a short segment per group (a sequence).
    Returns the legend handles, the bar patches and the value labels.
    """
    from matplotlib.lines import Line2D

    width = 0.8 / max(1, len(series))
    handles: list[Any] = []
    patches: list[Any] = []
    spots: list[tuple[float, float, float, str]] = []
    for i, s in enumerate(series):
        xs, values, heights, lo, hi = [], [], [], [], []
        for j, est in enumerate(s.estimates):
            if est is None:
                continue
            x = j + (i - (len(series) - 1) / 2) * width
            if est.value is None:
                spots.append((x, 0.0, 1, "no\nanswers"))
                continue
            value = 100 * est.value
            low = 100 * est.low if est.low is not None else value
            high = 100 * est.high if est.high is not None else value
            xs.append(x)
            values.append(value)
            heights.append(max(value, MIN_BAR))
            lo.append(max(0.0, value - low))
            hi.append(max(0.0, high - value))
            spots.append((x, max(high, MIN_BAR), 1, f"{value:.1f}"))
        if not xs:
            continue
        bars = ax.bar(
            xs,
            heights,
            width * 0.92,
            color=s.colour,
            edgecolor=EDGE,
            linewidth=0.8,
            hatch=s.hatch,
            label=s.label,
            zorder=2,
        )
        ax.errorbar(xs, values, yerr=[lo, hi], fmt="none", ecolor="black", elinewidth=1, capsize=3, zorder=3)
        patches += list(bars)
        handles.append(bars)
    if isinstance(chance, int | float):
        handles.append(
            ax.axhline(100 * chance, color="grey", linestyle="--", linewidth=1, zorder=1,
                       label=f"random guess ({100 * chance:.0f} %)")
        )  # fmt: skip
    elif chance is not None:
        segments = [(j, 100 * c) for j, c in enumerate(chance) if c is not None]
        if segments:
            ax.hlines(
                [y for _, y in segments],
                [j - 0.45 for j, _ in segments],
                [j + 0.45 for j, _ in segments],
                colors="grey",
                linestyles="--",
                linewidth=1,
                zorder=1,
            )
            handles.append(
                Line2D([], [], color="grey", linestyle="--", linewidth=1, label="chance (mean 1/k)")
            )
    ax.set_xticks(range(len(groups)), list(groups), fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, 100 + HEADROOM)
    ax.set_yticks(range(0, 101, 20), [f"{t} %" for t in range(0, 101, 20)], fontsize=8)
    ax.set_ylabel("accuracy (%), 95% CI by video", fontsize=8)
    ax.grid(axis="y", color="#E5E5E5", linewidth=0.6, zorder=0)
    ax.set_axisbelow(True)
    labels = _value_labels(ax, spots)
    return handles, patches, labels


def _save(fig: Figure, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=DPI)
    _pyplot().close(fig)
    return path


def accuracy_figure(
    groups: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    counts: str,
    chance: Sequence[float | None] | float | None = 0.25,
    warning: str | None = None,
    ylabel: str | None = None,
) -> Figure:
    """The grouped accuracy bars as a figure (tests inspect it; :func:`save` writes it)."""
    fig, ax = _figure(len(groups), len(series))
    handles, patches, labels = grouped_bars(ax, groups, series, chance)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=8)
    _titles(fig, ax, title, counts, warning)
    _legend(fig, handles)
    _fit_labels(fig, ax, labels, patches)
    return fig


def effect_figure(
    groups: Sequence[str],
    effects: Sequence[Effect],
    *,
    title: str,
    counts: str,
    warning: str | None = None,
    what: str = "graph effect (on − off)",
) -> Figure:
    """Paired effects in percentage points: grey unless significant, whiskers always, p under the axis."""
    from matplotlib.patches import Patch

    fig, ax = _figure(len(groups), 1, height=4.0)
    deltas = [100 * e.delta for e in effects]
    lows = [100 * e.low for e in effects]
    highs = [100 * e.high for e in effects]
    colours = [(GAIN if e.delta > 0 else LOSS) if e.significant else NOT_SIGNIFICANT for e in effects]
    span_low, span_high = min(0.0, *lows), max(0.0, *highs)
    pad = max(0.16 * (span_high - span_low), 3.0)
    low_limit = span_low - (pad if span_low < 0 else pad / 2)
    high_limit = span_high + (pad if span_high > 0 else pad / 2)
    # A bar is drawn at least MIN_EFFECT_BAR of the axis tall, so a tiny or zero effect is seen; a
    # zero one straddles 0. Its label says the true value.
    least = MIN_EFFECT_BAR * (high_limit - low_limit)
    zero = [round(d, 1) == 0 for d in deltas]
    bottoms = [-least / 2 if z else 0.0 for z in zero]
    heights = [
        least if z else (d if abs(d) >= least else (least if d > 0 else -least))
        for d, z in zip(deltas, zero, strict=True)
    ]
    bars = ax.bar(
        range(len(effects)),
        heights,
        0.6,
        bottom=bottoms,
        color=colours,
        edgecolor=EDGE,
        linewidth=0.8,
        zorder=2,
    )
    ax.errorbar(
        range(len(effects)),
        deltas,
        yerr=[[max(0.0, d - lo) for d, lo in zip(deltas, lows, strict=True)],
              [max(0.0, hi - d) for d, hi in zip(deltas, highs, strict=True)]],
        fmt="none", ecolor="black", elinewidth=1, capsize=3, zorder=3,
    )  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8, zorder=1)
    spots = []
    for x, (d, lo, hi) in enumerate(zip(deltas, lows, highs, strict=True)):
        top, bottom = max(bottoms[x], bottoms[x] + heights[x]), min(bottoms[x], bottoms[x] + heights[x])
        text = "0.0" if zero[x] else f"{d:+.1f}"
        spots.append((float(x), max(hi, top), 1, text) if d >= 0 else (float(x), min(lo, bottom), -1, text))
    labels = _value_labels(ax, spots)
    ax.set_ylim(low_limit, high_limit)
    ticks = [f"{name}\n{e.pairs} pairs\np = {p_text(e.p)}" for name, e in zip(groups, effects, strict=True)]
    ax.set_xticks(range(len(effects)), ticks, fontsize=8)
    ax.set_xlim(-0.6, len(effects) - 0.4)
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:+g}" if v else "0")
    ax.set_ylabel(f"{what}, percentage points\n95% CI by video", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="y", color="#E5E5E5", linewidth=0.6, zorder=0)
    ax.set_axisbelow(True)
    _titles(fig, ax, title, counts, warning)
    present = []
    if any(e.significant and e.delta > 0 for e in effects):
        present.append(
            Patch(facecolor=GAIN, edgecolor=EDGE, label=f"significant gain (p < {ALPHA:g}, CI excludes 0)")
        )
    if any(e.significant and e.delta < 0 for e in effects):
        present.append(
            Patch(facecolor=LOSS, edgecolor=EDGE, label=f"significant loss (p < {ALPHA:g}, CI excludes 0)")
        )
    if any(not e.significant for e in effects):
        present.append(Patch(facecolor=NOT_SIGNIFICANT, edgecolor=EDGE, label="not significant"))
    _legend(fig, present)
    _fit_labels(fig, ax, labels, list(bars))
    return fig


def save(fig: Figure, path: Path) -> Path:
    """Write the figure as a PNG at ``DPI`` (atomically) and close it."""
    return _save(fig, path)


# --- the checks -------------------------------------------------------------------------------


def _renderer(fig: Figure) -> Any:
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _inside(inner: Bbox, outer: Bbox, tol: float = 1.0) -> bool:
    return (
        inner.x0 >= outer.x0 - tol
        and inner.y0 >= outer.y0 - tol
        and inner.x1 <= outer.x1 + tol
        and inner.y1 <= outer.y1 + tol
    )


def _overlap(a: Bbox, b: Bbox, tol: float = 0.5) -> bool:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width > tol and height > tol


def marks(ax: Axes) -> tuple[list[Any], list[Any]]:
    """The bars and the interval whiskers of an axes (what must lie inside it)."""
    from matplotlib.collections import LineCollection
    from matplotlib.container import BarContainer, ErrorbarContainer

    bars = [p for c in ax.containers if isinstance(c, BarContainer) for p in c]
    whiskers = [
        seg
        for c in ax.containers
        if isinstance(c, ErrorbarContainer)
        for seg in c.lines[2]
        if isinstance(seg, LineCollection)
    ]
    return bars, whiskers


def layout_problems(fig: Figure) -> list[str]:
    """What in a drawn report figure breaks the rules of the module docstring; [] when nothing.

    Checked with the renderer's extents, in display pixels: every bar, whisker and label inside
    the axes; no label on a bar or a whisker; the legend outside the axes; titles, tick labels and
    legend not on top of each other; and the whole drawing inside the figure (nothing cut).
    """
    renderer = _renderer(fig)
    problems: list[str] = []
    whole = fig.bbox
    drawn = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    if not _inside(drawn, whole):
        problems.append(f"drawing {drawn.bounds} extends past the figure {whole.bounds}")
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        bars, whiskers = marks(ax)
        solid = [b.get_window_extent(renderer) for b in bars]
        lines = [w.get_window_extent(renderer) for w in whiskers]
        for i, extent in enumerate(solid):
            if not _inside(extent, box):
                problems.append(f"bar {i} at {extent.bounds} leaves the axes {box.bounds}")
            if extent.height < 2:
                problems.append(f"bar {i} is not visible ({extent.bounds})")
        for i, extent in enumerate(lines):
            if not _inside(extent, box):
                problems.append(f"whiskers {i} at {extent.bounds} leave the axes {box.bounds}")
        for text in ax.texts:
            extent = text.get_window_extent(renderer)
            if not _inside(extent, box):
                problems.append(f"label {text.get_text()!r} at {extent.bounds} leaves the axes")
            for i, other in enumerate(solid):
                if _overlap(extent, other):
                    problems.append(f"label {text.get_text()!r} lies on bar {i}")
            # whisker collections span a whole series; test against each segment's own extent
            for w in whiskers:
                for segment in w.get_segments():
                    seg = w.get_transform().transform(segment)
                    (x0, y0), (x1, y1) = seg.min(axis=0), seg.max(axis=0)
                    from matplotlib.transforms import Bbox

                    if _overlap(extent, Bbox([[x0 - 0.5, y0 - 0.5], [x1 + 0.5, y1 + 0.5]]), tol=0.0):
                        problems.append(f"label {text.get_text()!r} lies on a whisker")
                        break
        for legend in fig.legends + ([ax.get_legend()] if ax.get_legend() else []):
            extent = legend.get_window_extent(renderer)
            if _overlap(extent, box):
                problems.append(f"legend at {extent.bounds} overlaps the axes {box.bounds}")
        outside = [t for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
        outside += [t for t in ax.get_xticklabels() if t.get_text()]
        outside += [lg for lg in fig.legends]
        if fig._suptitle is not None:
            outside.append(fig._suptitle)
        extents = [(a, a.get_window_extent(renderer)) for a in outside]
        for i, (a, ea) in enumerate(extents):
            for b, eb in extents[i + 1 :]:
                if _overlap(ea, eb):
                    problems.append(f"{_name(a)} overlaps {_name(b)}")
    return problems


def _name(artist: Any) -> str:
    text = getattr(artist, "get_text", None)
    return repr(text()) if callable(text) else type(artist).__name__
