"""`karma eval --task aimoclips` is a karma run (issue 29, item 4): config.json beside results.json,
`karma report RUN` reads it, a rerun with other settings is refused, and with the release's WAVs the
run computes karma's valence / arousal agreement with the listener means."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from karma.cli.main import app
from tests.tasks.test_aimoclips import FIXTURE, _click_track


def _eval(data: Path, out: Path, *extra: str):
    args = ["eval", "--task", "aimoclips", "--data", str(data), "--out", str(out), "--no-progress", *extra]
    return CliRunner().invoke(app, args)


def test_an_aimoclips_run_has_a_config_and_karma_report_reads_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _eval(FIXTURE, run, "--bootstrap-resamples", "100")
    assert done.exit_code == 0, done.output
    config = json.loads((run / "config.json").read_text())
    assert config["task"]["task"] == "aimoclips" and config["task"]["kind"] == "analysis"
    assert config["identity"]["bootstrap_resamples"] == 100 and len(config["hashes"]["data"]) == 16
    results = json.loads((run / "results.json").read_text())
    assert results["va_agreement"]["computed"] is False  # the fixture has no WAVs
    assert "VA agreement not computed" in done.output

    report = CliRunner().invoke(app, ["report", str(run), "--recompute"])
    assert report.exit_code == 0, report.output
    text = Path(report.output.strip().splitlines()[-1]).read_text()
    assert "neutrality, clip means" in text and "| MusicGen | arousal |" in text
    assert "not computed: needs the WAVs" in text

    other = _eval(FIXTURE, run, "--bootstrap-resamples", "200")
    assert other.exit_code == 2 and "bootstrap_resamples: 100 -> 200" in other.output


def test_with_the_wavs_the_run_reports_karmas_va_agreement(tmp_path: Path) -> None:
    """Six WAVs from quiet-and-slow to loud-and-fast, listener arousal 2 + level: the run's arousal
    agreement is strongly positive, and the report prints it."""
    root = tmp_path / "aimo"
    (root / "music_clips" / "MusicGen").mkdir(parents=True)
    shutil.copy(FIXTURE / "emotion_intents_metadata.csv", root)
    clips, ratings = [], []
    for level in range(6):
        name = f"MusicGen_happy_{level + 1}_crop.wav"
        wav = root / "music_clips" / "MusicGen" / name.replace("_crop", "")
        _click_track(wav, 60 + 30 * level, 0.05 + 0.18 * level)
        clips.append([level + 1, name, "MusicGen", "happy", level + 1, "5.0", f"{2 + level:.1f}", 2])
        ratings += [["P1", name, 4, 1 + level], ["P2", name, 6, 3 + level]]
    for file, header, rows in (
        ("clips_metadata.csv", ["index", "audio_file", "model", "emotion", "file_index", "valence", "arousal", "num_annotators"], clips),
        ("ratings_metadata.csv", ["user", "audio_file", "valence", "arousal"], ratings),
    ):  # fmt: skip
        with (root / file).open("w", newline="") as fh:
            csv.writer(fh).writerows([header, *rows])
    run = tmp_path / "run"
    done = _eval(root, run, "--bootstrap-resamples", "50")
    assert done.exit_code == 0, done.output
    agreement = json.loads((run / "results.json").read_text())["va_agreement"]
    assert agreement["computed"] and agreement["n_clips"] == 6
    assert agreement["arousal"]["pearson_r"] > 0.8, agreement
    assert "karma's VA estimate vs listeners (6 clips)" in done.output
    report = CliRunner().invoke(app, ["report", str(run)])
    text = Path(report.output.strip().splitlines()[-1]).read_text()
    assert "- arousal: Pearson r" in text and "quadrant agreement" in text
