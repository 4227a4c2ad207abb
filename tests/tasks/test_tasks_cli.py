"""The `--task` options of the CLI: `karma data validate --task`, `karma eval --task` on a broken
fixture (one line, exit 2, no traceback), and a small real run + `karma report` on the embedded model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def _karma(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "karma.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _broken_wildscore(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "wildscore", root)
    lines = (root / "data.csv").read_text().splitlines()
    lines[3] = lines[3].replace(",B,Rhythm & Meter,", ",Q,Rhythm & Meter,")  # row 3: truth letter Q
    (root / "data.csv").write_text("\n".join(lines) + "\n")
    return root


def test_data_validate_task(tmp_path: Path):
    ok = _karma("data", "validate", "--task", "wildscore", str(FIXTURES / "wildscore"))
    assert ok.returncode == 0 and "valid items 8" in ok.stdout and ok.stdout.rstrip().endswith("valid")
    aimo = _karma("data", "validate", "--task", "aimoclips", str(FIXTURES / "aimoclips"))
    assert aimo.returncode == 0, aimo.stdout + aimo.stderr
    root = _broken_wildscore(tmp_path)
    bad = _karma("data", "validate", "--task", "wildscore", str(root))
    assert bad.returncode == 2 and f"{root / 'data.csv'}, row 3, field truth_letter: " in bad.stdout
    assert bad.stderr.startswith(f"error: {root / 'data.csv'}: 1 problem(s)")
    lenient = _karma("data", "validate", "--task", "wildscore", "--lenient", str(root))
    assert lenient.returncode == 0 and "valid items 7" in lenient.stdout
    unknown = _karma("data", "validate", "--task", "nope", str(root))
    assert (
        unknown.returncode == 2
        and "unknown task 'nope'" in unknown.stderr
        and "Traceback" not in unknown.stderr
    )


def test_eval_task_on_broken_data_is_one_line_exit_2(tmp_path: Path):
    root = _broken_wildscore(tmp_path)
    done = _karma(
        "eval", "--task", "wildscore", "--data", str(root), "--out", str(tmp_path / "run"), "--no-progress"
    )
    assert done.returncode == 2, done.stderr
    assert f"{root / 'data.csv'}, row 3, field truth_letter" in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1
    assert not (tmp_path / "run").exists()  # a refused run leaves no folder behind


@pytest.mark.slow
def test_eval_task_text_only_on_the_embedded_model_and_report(tmp_path: Path):
    pytest.importorskip("llama_cpp")
    run = tmp_path / "run"
    args = ["eval", "--task", "wildscore", "--data", str(FIXTURES / "wildscore"), "--out", str(run),
            "--arms", "text_only", "--limit", "3", "--max-tokens", "2", "--no-progress", "--bootstrap-resamples", "100"]  # fmt: skip
    done = _karma(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "text_only: accuracy" in done.stdout and "chance" in done.stdout
    results = json.loads((run / "results.json").read_text())
    assert results["task"] == "wildscore" and results["arms"]["text_only"]["overall"]["n"] == 3
    again = _karma(*args)
    assert "0 answered, 3 already done" in again.stdout
    report = _karma("report", str(run))
    assert report.returncode == 0, report.stderr
    text = Path(report.stdout.strip().splitlines()[-1]).read_text()
    assert "### Per category" in text and "chance (mean 1/k)" in text


def test_eval_task_aimoclips_writes_the_analysis(tmp_path: Path):
    done = _karma("eval", "--task", "aimoclips", "--data", str(FIXTURES / "aimoclips"), "--out", str(tmp_path / "a"),
                  "--bootstrap-resamples", "100", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Suno: valence deviation +1.00" in done.stdout and "8 grid cells missing" in done.stdout
    result = json.loads((tmp_path / "a" / "results.json").read_text())
    assert result["task"] == "aimoclips" and result["by_model"]["MusicGen"]["n_clips"] == 8
