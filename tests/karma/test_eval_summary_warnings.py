"""``karma eval``'s summary says what its numbers cannot show (issue 39, items 2 and 3): a run on too
few videos for its video-clustered intervals, and ``--fact-links options`` prompts that linked nothing.

A real ``karma eval`` on a 2-video ``karma synth`` world with the suite's fast model (SmolLM2, named),
then the summary printer on that run folder with its results changed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.evaluate import _print_summary
from karma.cli.main import app
from karma.eval import RunDir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def two_video_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from karma.synth import generate, load_world

    base = tmp_path_factory.mktemp("two_videos")
    world, run = base / "world", base / "run"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=2, seed=0)
    args = ["eval", "--model", "smollm2-135m", "--data", str(world), "--out", str(run), "--ckg", "on",
            "--retriever", "keyword", "--fact-links", "options", "--limit", "3", "--folds", "2",
            "--answer-mode", "letter", "--no-cache", "--no-progress", "--allow-empty-graph"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return run, result.output


def test_a_run_on_two_videos_warns_that_its_intervals_are_too_coarse(two_video_run):
    run, output = two_video_run
    assert json.loads((run / "results.json").read_text())["n_videos"] == 2
    assert "warning: 3 questions from only 2 video(s)" in output and "widen --limit" in output


def test_the_summary_counts_the_prompts_whose_links_linked_nothing(two_video_run):
    run, output = two_video_run
    linked = [r.linked_lines for r in RunDir(run).final_samples()]
    assert len(linked) == 3 and all(count is not None for count in linked)
    empty = sum(1 for count in linked if count == 0)
    assert f"fact links: {3 - empty} of 3 graph-on prompts name an option; {empty} linked nothing" in output


def test_enough_videos_print_no_warning(two_video_run, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    run, _ = two_video_run
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("config.json", "samples.jsonl"):
        (copy / name).write_bytes((run / name).read_bytes())
    results = json.loads((run / "results.json").read_text())
    (copy / "results.json").write_text(json.dumps({**results, "n_videos": 12}))
    _print_summary(copy)
    printed = capsys.readouterr().out
    assert "graph on: accuracy" in printed and "warning" not in printed
