"""`karma report` over runs of different tasks: a real Karma-MV run (`karma eval` on data/sample with
the embedded SmolLM2) beside a real WildScore run (`karma eval --task wildscore`, text-only arm, the
same model) renders one report, the shared metrics side by side, the rest named and shown per run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.eval.side_by_side import _views, not_shared, shared_metrics, side_by_side_figure
from karma.run.plots import layout_problems
from tests.karma.test_report_cli import _write_run

ROOT = Path(__file__).resolve().parents[2]
WILDSCORE = ROOT / "tests" / "tasks" / "fixtures" / "wildscore"
AIMOCLIPS = ROOT / "tests" / "tasks" / "fixtures" / "aimoclips"
runner = CliRunner()


def _karma(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "karma.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def _row(label: str, task: str, arm: str, s: dict, clusters: str) -> str:
    """The side-by-side row the report must print for one arm's overall block of results.json."""
    return (
        f"| {label} | {task} | {arm} | {_pct(s['accuracy'])} [{_pct(s['ci_low'])}, {_pct(s['ci_high'])}] | "
        f"{s['correct']}/{s['n']} | {clusters} **few** |"
    )


@pytest.mark.slow
def test_a_karma_mv_run_and_a_wildscore_run_side_by_side(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    mv, ws = tmp_path / "mv", tmp_path / "ws"
    _karma("eval", "--model", "smollm2-135m", "--data", str(ROOT / "data" / "sample"), "--out", str(mv),
           "--ckg", "both", "--retriever", "keyword", "--k", "4", "--limit", "2", "--whole-corpus-graph",
           "--constrain-choices", "--max-tokens", "4", "--cache", str(tmp_path / "cache.sqlite"), "--no-progress",
           "--bootstrap-resamples", "200")  # fmt: skip
    _karma("eval", "--task", "wildscore", "--data", str(WILDSCORE), "--out", str(ws), "--arms", "text_only",
           "--limit", "3", "--max-tokens", "2", "--no-progress", "--bootstrap-resamples", "100")  # fmt: skip
    out = tmp_path / "report"
    done = runner.invoke(app, ["report", str(mv), str(ws), "--out", str(out)])
    assert done.exit_code == 0, done.output
    text = Path(done.output.strip().splitlines()[-1]).read_text()

    mv_results = json.loads((mv / "results.json").read_text())
    ws_results = json.loads((ws / "results.json").read_text())
    side = text[text.index("## Side by side") : text.index("### Not shared")]
    for arm in ("on", "off"):
        s = mv_results["arms"][arm]["overall"]
        assert _row("mv", "karma-mv", f"graph {arm}", s, "2 (video)") in side
    s = ws_results["arms"]["text_only"]["overall"]
    assert _row("ws", "wildscore", "text_only", s, "3 (item)") in side
    assert f"| {_pct(s['chance'])} |" in side and "| 25.00 |" in side  # chance: mean 1/k; a-d
    assert "![overall accuracy side by side](side_by_side.png)" in side
    assert "`accuracy`, `ci95`, `n`, `clusters`, `chance`, `parse_failures`, `backend_errors`" in side

    unshared = text[text.index("### Not shared") :].split("\n## ")[0]
    assert "- mv: `accuracy_by_type`, `graph_effect`, `baselines`, `graph_reader`" in unshared
    assert "- ws: `accuracy_by_category`" in unshared and "`accuracy_by_subcategory`" in unshared
    # Each run's own section follows, as its single-kind report shows it.
    assert "### Graph effect (paired)" in text and "### Reference baselines (no model)" in text
    assert "### Per category" in text and "chance (mean 1/k)" in text
    for png in ("side_by_side.png", "00_mv_accuracy.png", "00_mv_delta.png", "01_ws_accuracy.png"):
        assert (out / png).stat().st_size > 1000 and f"]({png})" in text
    assert layout_problems(side_by_side_figure(_views([mv, ws]))) == []


def test_a_run_without_accuracy_is_named_and_nothing_is_shared_with_it(tmp_path: Path) -> None:
    # A Karma-MV run written record by record beside an AIMO-clips analysis run (no model needed).
    mv = tmp_path / "mv"
    _write_run(mv, [True] * 8 + [False] * 4, [True] * 5 + [False] * 7)
    aimo = tmp_path / "aimo"
    made = runner.invoke(app, ["eval", "--task", "aimoclips", "--data", str(AIMOCLIPS), "--out", str(aimo),
                               "--bootstrap-resamples", "100", "--no-progress"])  # fmt: skip
    assert made.exit_code == 0, made.output
    done = runner.invoke(app, ["report", str(mv), str(aimo), "--out", str(tmp_path / "report")])
    assert done.exit_code == 0, done.output  # the Karma-MV run's results.json computed first
    views = _views([mv, aimo])
    assert shared_metrics(views) == [] and not views[1].arms
    assert "graph_effect" in not_shared(views)["mv"] and not_shared(views)["aimo"]
    text = (tmp_path / "report" / "report.md").read_text()
    assert "- shared by every run: nothing" in text and "- no accuracy to set beside the others: aimo" in text
    assert "| mv | karma-mv | graph on | 66.67 [" in text and "| 8/12 |" in text


def test_a_missing_run_among_task_runs_is_one_line_exit_2(tmp_path: Path) -> None:
    aimo = tmp_path / "aimo"
    made = runner.invoke(app, ["eval", "--task", "aimoclips", "--data", str(AIMOCLIPS), "--out", str(aimo),
                               "--bootstrap-resamples", "100", "--no-progress"])  # fmt: skip
    assert made.exit_code == 0, made.output
    done = runner.invoke(app, ["report", str(aimo), str(tmp_path / "nothing")])
    assert done.exit_code == 2 and "no config.json" in done.output and "Traceback" not in done.output
