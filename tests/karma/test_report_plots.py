"""The report's plots as pictures (issue 39, item 4): rendered, then checked twice — with matplotlib's
own artist extents (bars, whiskers and labels inside the axes, no label on a bar, the legend off the
axes, nothing past the figure's edge) and on the saved PNG's pixels (bar colours only inside the axes
or the legend, every bar — a 0 % one too — visibly drawn, no bar colour under a value label, a blank
border) — with n and videos in the title, percent on the axes, parse failures in the legend, grey for
an effect that is not significant, and the "few videos" stamp exactly when the report warns.

The data are the case the issue met: a 30-question run over 2 videos, a 0 % bar, a graph reader at
100 % (its marker was cut by the top edge and hidden by the legend), 30 % parse failures, and a paired
effect of 3 against 1 discordant pairs (McNemar p = 0.625) whose interval collapses on 2 videos.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from karma.eval.records import BaselineRecord, SampleRecord
from karma.eval.report import accuracy_plot_figure, comparison_plot_figure, delta_plot_figure, write_report
from karma.eval.results import aggregate
from karma.run.plots import (
    DPI,
    NOT_SIGNIFICANT,
    OFF,
    ON,
    Estimate,
    Series,
    accuracy_figure,
    layout_problems,
    marks,
    save,
)
from karma.tasks.records import TaskSample
from karma.tasks.report import task_plot_figure, write_task_report
from karma.tasks.results import aggregate_task

TYPES = ("evidential", "predictive", "counterfactual")


def _outcomes(i: int) -> tuple[str, str]:
    """(on, off) of question i: "right", "wrong" or "unparsed" (see the module docstring)."""
    kind, rank = TYPES[i % 3], (i // 3) % 10
    if kind == "evidential":  # graph on: 0 %; off: 1 right, 3 unparsed
        return "wrong", "right" if rank == 0 else "unparsed" if rank <= 3 else "wrong"
    right_on = 6 if kind == "predictive" else 5
    on = "right" if rank < right_on else "wrong"
    off = "right" if rank < 4 else "unparsed" if rank >= 7 else "wrong"
    return on, off


def quick_run(n: int = 30, videos: int = 2, same: bool = False) -> dict[str, Any]:
    """The run's results.json; ``same``: both arms answer alike (every effect is 0)."""
    samples, baselines = [], []
    for i in range(n):
        video = f"v{i % videos}"
        qid = f"{video}/t{i:03d}/q0"
        outcomes = (_outcomes(i)[0],) * 2 if same else _outcomes(i)
        for arm, outcome in zip(("on", "off"), outcomes, strict=True):
            letter = {"right": "a", "wrong": "b", "unparsed": None}[outcome]
            samples.append(
                SampleRecord(
                    question_id=qid, video_id=video, transition_id=f"{video}/t{i:03d}",
                    question_type=TYPES[i % 3], prompt_hash=qid + arm, arm=arm, answer="a",
                    parsed_letter=letter, parse_status="ok" if letter else "none",
                    correct=outcome == "right", error=None, raw_completion="",
                )
            )  # fmt: skip
        baselines.append(
            BaselineRecord(
                question_id=qid, video_id=video, question_type=TYPES[i % 3], answer="a",
                picks={"random": ["a", "b", "c", "d"], "graph_reader": ["a"]},
            )
        )  # fmt: skip
    return aggregate(samples, baselines, resamples=200, seed=0)


@pytest.fixture(scope="module")
def quick() -> dict[str, Any]:
    results = quick_run()
    paired = results["paired"]["overall"]
    assert (paired["on_only_correct"], paired["off_only_correct"]) == (3, 1)
    assert paired["mcnemar_p"] == pytest.approx(0.625)
    assert results["arms"]["on"]["by_type"]["evidential"]["accuracy"] == 0.0
    assert results["arms"]["off"]["overall"]["parse_failures"] == 9
    assert results["baselines"]["overall"]["graph_reader"]["accuracy"] == 1.0
    return results


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _rows(box: Any, height: int) -> tuple[int, int, int, int]:
    """A display bbox (origin bottom left) as PNG index ranges (row0, row1, col0, col1)."""
    return (
        int(np.floor(height - box.y1)),
        int(np.ceil(height - box.y0)),
        int(np.floor(box.x0)),
        int(np.ceil(box.x1)),
    )


def picture_problems(fig: Any, png: Path, colours: tuple[str, ...]) -> list[str]:
    """Pixel checks of the saved PNG against the figure's extents (same dpi, so display = pixels)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    axes_box = ax.get_window_extent(renderer)
    legends = [lg.get_window_extent(renderer) for lg in fig.legends]
    bars = [b.get_window_extent(renderer) for b in marks(ax)[0]]
    labels = [t.get_window_extent(renderer) for t in ax.texts]
    save(fig, png)
    image = np.asarray(Image.open(png).convert("RGB")).astype(int)
    height, width, _ = image.shape
    problems = []
    if (height, width) != (round(fig.bbox.height), round(fig.bbox.width)):
        problems.append(f"PNG is {width}x{height}, the figure {fig.bbox.width}x{fig.bbox.height}")
    white = (image == 255).all(axis=2)
    border = np.concatenate(
        [white[:2].ravel(), white[-2:].ravel(), white[:, :2].ravel(), white[:, -2:].ravel()]
    )
    if not border.all():
        problems.append("something is drawn on the PNG's edge (cut by the frame)")
    allowed = np.zeros_like(white)
    for box in [axes_box, *legends]:
        r0, r1, c0, c1 = _rows(box, height)
        allowed[max(r0 - 1, 0) : r1 + 1, max(c0 - 1, 0) : c1 + 1] = True
    for colour in colours:
        mask = (image == _rgb(colour)).all(axis=2)
        if not mask.any():
            problems.append(f"no pixel of bar colour {colour}")
        if (mask & ~allowed).any():
            problems.append(f"bar colour {colour} drawn outside the axes and the legend")
        for box in labels:
            r0, r1, c0, c1 = _rows(box, height)
            if mask[r0:r1, c0:c1].any():
                problems.append(f"bar colour {colour} under a value label at {box.bounds}")
    spine_row = round(height - axes_box.y0)
    for i, box in enumerate(bars):
        r0, r1, c0, c1 = _rows(box, height)
        region = ~white[r0 : min(r1, spine_row - 1), c0 + 1 : c1 - 1]
        if region.size == 0 or not region.any():
            problems.append(f"bar {i} at {box.bounds} has no visible pixel above the axis")
    return problems


def _title_texts(fig: Any) -> str:
    ax = fig.axes[0]
    return " | ".join([fig.get_suptitle(), *(ax.get_title(loc=loc) for loc in ("left", "center", "right"))])


def _legend_texts(fig: Any) -> list[str]:
    return [t.get_text() for lg in fig.legends for t in lg.get_texts()]


def test_the_accuracy_plot_of_a_two_video_run_passes_the_picture_checks(quick: dict, tmp_path: Path) -> None:
    fig = accuracy_plot_figure(quick, "quick (llm/llamacpp, hybrid, folds)")
    assert layout_problems(fig) == []
    titles = _title_texts(fig)
    assert "n = 30 questions · 2 videos" in titles and "few videos" in titles
    assert all(t.get_text().endswith(" %") for t in fig.axes[0].get_yticklabels())
    legend = _legend_texts(fig)
    assert (
        "graph off · parse failures 9 (30.0 %)" in legend and "graph on · parse failures 0 (0.0 %)" in legend
    )
    assert any(text.startswith("graph reader") for text in legend)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["evidential\nn = 10", "predictive\nn = 10", "counterfactual\nn = 10", "overall\nn = 30"]
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("0.0") == 1 and labels.count("100.0") == 4  # the 0 % bar and the reader's
    assert picture_problems(fig, tmp_path / "acc.png", (ON, OFF)) == []


def test_a_non_significant_effect_is_grey_with_its_interval_and_its_p_under_the_axis(
    quick: dict, tmp_path: Path
) -> None:
    fig = delta_plot_figure(quick, "quick")
    assert layout_problems(fig) == []
    ax = fig.axes[0]
    bars, whiskers = marks(ax)
    assert len(bars) == 4 and sum(len(w.get_segments()) for w in whiskers) == 4
    assert {tuple(round(c, 3) for c in b.get_facecolor()[:3]) for b in bars} == {
        tuple(round(v / 255, 3) for v in _rgb(NOT_SIGNIFICANT))
    }
    assert ax.get_xticklabels()[-1].get_text() == "overall\n30 pairs\np = 0.625"
    assert "n = 30 pairs" in _title_texts(fig) and "2 videos" in _title_texts(fig)
    assert "few videos" in _title_texts(fig)
    assert "percentage points" in ax.get_ylabel()
    assert _legend_texts(fig) == ["not significant"]
    assert picture_problems(fig, tmp_path / "delta.png", (NOT_SIGNIFICANT,)) == []


def test_a_significant_effect_is_coloured_and_a_run_with_enough_videos_has_no_stamp(tmp_path: Path) -> None:
    results = quick_run(n=300, videos=31)
    fig = delta_plot_figure(results, "big")
    assert layout_problems(fig) == []
    assert "few videos" not in _title_texts(fig)
    colours = {b.get_facecolor()[:3] for b in marks(fig.axes[0])[0]}
    assert len(colours) == 2  # gains green, the evidential loss red (p < 0.05, CI excludes 0)
    assert any(t.startswith("significant gain") for t in _legend_texts(fig))
    assert any(t.startswith("significant loss") for t in _legend_texts(fig))
    fig = accuracy_plot_figure(results, "big")
    assert "few videos" not in _title_texts(fig) and "n = 300 questions · 31 videos" in _title_texts(fig)


def test_a_zero_effect_is_drawn_visible_and_labelled_zero(tmp_path: Path) -> None:
    results = quick_run(n=60, videos=12, same=True)
    assert {s["delta"] for s in results["paired"]["by_type"].values()} == {0.0}
    fig = delta_plot_figure(results, "no effect")
    assert layout_problems(fig) == []  # includes: every bar at least 2 px tall
    assert [t.get_text() for t in fig.axes[0].texts] == ["0.0"] * 4
    assert picture_problems(fig, tmp_path / "zero.png", (NOT_SIGNIFICANT,)) == []


def test_the_comparison_plot_names_n_videos_and_parse_failures_per_run(quick: dict, tmp_path: Path) -> None:
    runs = [("contrary1k-qwen15-generate-links", quick), ("second", quick_run(n=300, videos=31))]
    fig = comparison_plot_figure(runs)
    assert layout_problems(fig) == []
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "n = 30 · 2 videos (few videos)\nparse fail. 0.0/30.0 %" in ticks[0]
    assert "n = 30–300 questions · 2–31 videos per run" in _title_texts(fig)
    assert picture_problems(fig, tmp_path / "cmp.png", (ON, OFF)) == []


def test_the_checks_catch_what_the_old_plots_did(tmp_path: Path) -> None:
    """A bar above the top of the range, a label drawn on a bar, a legend inside the axes: each is named."""
    fig = accuracy_figure(
        ["a\nn = 1"], [Series("s", ON, [Estimate(0.5, 0.4, 0.6)])], title="t", counts="n = 1", chance=0.25
    )
    ax = fig.axes[0]
    ax.set_ylim(0, 40)  # the bar (50 %) now leaves the axes, as the graph reader's marker did
    ax.annotate("p=0.6", (0, 20), ha="center")  # on the bar, as the p labels were
    ax.legend(["s"], loc="center")  # over the bars, as the overall marker was
    problems = layout_problems(fig)
    assert any("leaves the axes" in p and p.startswith("bar 0") for p in problems)
    assert any("'p=0.6' lies on bar 0" in p for p in problems)
    assert any(p.startswith("legend at") for p in problems)


def test_report_md_links_the_checked_plots(tmp_path: Path) -> None:
    """The report writes the figures these tests check (and warns in the text where the plot is stamped)."""
    from karma.eval import RunDir, finalize
    from tests.karma.test_report_cli import _write_run  # a run folder written record by record

    run = tmp_path / "run"
    _write_run(run, [i % 2 == 0 for i in range(12)], [False] * 12)
    finalize(RunDir(run))
    text = write_report([run], tmp_path / "rep").read_text()
    assert "**few videos**" in text
    pngs = sorted((tmp_path / "rep").glob("*.png"))
    assert len(pngs) == 2
    for png in pngs:
        assert f"]({png.name})" in text
        assert Image.open(png).size[0] > 600


# --- task reports ------------------------------------------------------------------------------


def _task_run(folder: Path) -> Path:
    categories = ("harmony", "rhythm", "form")
    rows = []
    for i in range(60):
        category = categories[i % 3]
        for arm in ("gpt", "text-only"):
            right = (i % 4 != 0) if arm == "gpt" else (i % 2 == 0 and category != "form")
            letter = None if arm == "text-only" and i % 10 == 1 else ("a" if right else "b")
            rows.append(
                TaskSample(
                    item_id=f"item{i:03d}", task="wildscore", category=category, cluster_id=f"c{i % 4}",
                    k=4 if i % 2 else 2, arm=arm, answer="a", parsed_letter=letter,
                    parse_status="ok" if letter else "none", correct=letter == "a", error=None,
                    raw_completion="",
                )
            )  # fmt: skip
    results = aggregate_task(rows, task="wildscore", arms=["gpt", "text-only"], resamples=200, seed=0)
    folder.mkdir(parents=True)
    config = {"task": {"task": "wildscore", "title": "WildScore", "cluster_unit": "item"}, "hashes": {}}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def test_a_task_report_has_a_plot_per_category_and_arm_that_passes_the_picture_checks(tmp_path: Path) -> None:
    run = _task_run(tmp_path / "ws")
    report = write_task_report([run], tmp_path / "rep")
    text = report.read_text()
    assert "![accuracy per category and arm](00_ws_accuracy.png)" in text
    assert "**few clusters**" in text  # 4 clusters: the text warns, the plot is stamped
    config = json.loads((run / "config.json").read_text())
    results = json.loads((run / "results.json").read_text())
    fig = task_plot_figure("ws", config, results)
    assert layout_problems(fig) == []
    titles = _title_texts(fig)
    assert "n = 60 items · 4 clusters (item)" in titles and "few clusters" in titles
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["form\nn = 20", "harmony\nn = 20", "rhythm\nn = 20", "overall\nn = 60"]
    assert "text-only · parse failures 6 (10.0 %)" in _legend_texts(fig)
    assert "chance (mean 1/k)" in _legend_texts(fig)
    assert labels_zero(fig) == 1  # text-only is at 0 % on "form": drawn and labelled
    assert picture_problems(fig, tmp_path / "task.png", (ON, OFF)) == []
    written = np.asarray(Image.open(tmp_path / "rep" / "00_ws_accuracy.png").convert("RGB"))
    assert written.shape[1] == round(fig.bbox.width) and DPI == 110


def labels_zero(fig: Any) -> int:
    return [t.get_text() for t in fig.axes[0].texts].count("0.0")
