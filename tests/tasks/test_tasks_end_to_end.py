"""WildScore and HarmonySet-MC end to end through the tiny Qwen2.5-Omni thinker (random weights,
built offline by tests/pipelines/vlm): real PNGs / mp4s, both paired arms, resumable run directory,
results.json with McNemar, and `karma report`. The answers are noise; the plumbing is what is tested."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from karma.tasks.harmonyset_oe import OeSample, run_oe
from karma.tasks.runner import TaskRunConfig, run_task
from tests.pipelines.vlm.test_vlm_omni_tiny import _backend, tiny_thinker  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"


def _report(run: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "karma.cli.main", "report", str(run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip().splitlines()[-1]).read_text()


def _check_paired_run(run: Path, arms: list[str], n_items: int, categories: set[str]) -> dict:
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == n_items * len(arms)
    assert len({(s["item_id"], s["arm"]) for s in samples}) == len(samples)
    assert all(s["error"] is None for s in samples), [s["error"] for s in samples if s["error"]][:2]
    results = json.loads((run / "results.json").read_text())
    assert set(results["arms"]) == set(arms) and set(results["arms"][arms[0]]["by_category"]) == categories
    paired = results["paired"][f"{arms[0]}-vs-{arms[1]}"]["overall"]
    assert paired["n_pairs"] == n_items and 0.0 <= paired["mcnemar_p"] <= 1.0
    return results


def test_wildscore_image_and_text_only_through_the_tiny_omni(tiny_thinker, tmp_path):  # noqa: F811
    backend = _backend(tiny_thinker, num_frames=2, use_audio_in_video=False)
    config = TaskRunConfig(
        task="wildscore", data=str(WILDSCORE), out=str(tmp_path / "run"), task_options={"image_as": "video"},
        max_tokens=3, bootstrap_resamples=100,
    )  # fmt: skip
    summary = run_task(config, backend=backend)
    assert summary.answered == 16 and summary.already_done == 0
    results = _check_paired_run(tmp_path / "run", ["image", "text_only"], 8, {"EP", "FM", "HT", "RM", "Tx"})
    chance = results["arms"]["image"]["overall"]["chance"]
    assert chance == pytest.approx((1 / 4 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 2 + 1 / 4 + 1 / 3 + 1 / 4) / 8)
    again = run_task(config, backend=backend)
    assert again.answered == 0 and again.already_done == 16
    report = _report(tmp_path / "run")
    assert "### Per subcategory" in report and "image minus text_only" in report and "McNemar" in report
    with pytest.raises(Exception, match="different settings"):
        run_task(config.model_copy(update={"max_tokens": 5}), backend=backend)


def test_harmonyset_mc_av_and_silent_audio_through_the_tiny_omni(tiny_thinker, harmonyset_dir, tmp_path):  # noqa: F811
    backend = _backend(tiny_thinker, num_frames=2)
    config = TaskRunConfig(
        task="harmonyset-mc",
        data=str(harmonyset_dir),
        out=str(tmp_path / "run"),
        max_tokens=3,
        bootstrap_resamples=100,
    )
    assert run_task(config, backend=backend).answered == 16
    results = _check_paired_run(tmp_path / "run", ["av", "silent_audio"], 8, {"R&S", "T", "E", "C"})
    assert results["n_clusters"] == 2  # clustered by video-music pair
    assert "not comparable to the paper" in _report(tmp_path / "run")


def test_harmonyset_oe_answers_through_the_tiny_omni(tiny_thinker, harmonyset_dir, tmp_path):  # noqa: F811
    backend = _backend(tiny_thinker, num_frames=2)
    assert run_oe(harmonyset_dir, tmp_path / "oe", backend, max_tokens=4) == 2
    assert run_oe(harmonyset_dir, tmp_path / "oe", backend, max_tokens=4) == 0  # resumed: nothing left
    samples = [
        OeSample.model_validate_json(x) for x in (tmp_path / "oe" / "samples.jsonl").read_text().splitlines()
    ]
    assert [s.pair_id for s in samples] == ["SYN-HS-0001", "SYN-HS-0002"]
    assert samples[0].reference.startswith("SYNTHETIC annotation 1") and samples[0].error is None
    assert samples[0].question.startswith("Does the background music fit this video?")
