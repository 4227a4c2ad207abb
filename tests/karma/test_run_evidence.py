"""Results are evidence, not checkpoints (issue 38, item 6): ``results/`` holds each run's config,
results, report, records (gzipped) and README, under 1 MB in all and without a machine path; the
numbers are recomputed from what stays; and ``scripts/run_evidence.py`` saves a run's evidence and
restores a run folder from it that resumes on a machine where the data sit at another path (nothing
asked again).

The model server is the scripted HTTP server of tests/pipelines/conftest.py on 127.0.0.1.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from karma.eval import RunDir
from tests.karma.test_eval_resume_moved import MODEL, _eval
from tests.pipelines.conftest import scripted_server  # noqa: F401 (fixture)
from tests.tasks.conftest import chat_reply

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
SCRIPT = ROOT / "scripts" / "run_evidence.py"
RUNS = sorted(p.parent for p in (RESULTS / "ablation").glob("*/config.json"))


def _evidence():
    spec = importlib.util.spec_from_file_location("run_evidence", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_results_hold_evidence_only_under_1_mb_and_no_machine_path():
    files = [p for p in RESULTS.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 1_000_000
    assert not [p for p in files if p.suffix == ".png" or "graphs" in p.parts or p.name == "samples.jsonl"]
    assert _evidence().check(RESULTS) == []
    for run in RUNS:
        assert {p.name for p in run.iterdir()} >= {"config.json", "README.md", "samples.jsonl.gz"}


@pytest.mark.parametrize("run", [r for r in RUNS if (r / "results.json").is_file()], ids=lambda r: r.name)
def test_the_saved_numbers_are_recomputed_from_the_saved_records(run, tmp_path):
    """results.json (every table of docs/evaluation.md item 4 reads from it or the records) again from
    the gzipped records and the saved config, bootstrap included."""
    from karma.eval.runner import finalize

    restored = _evidence().restore(run, tmp_path / "run", tmp_path)
    recomputed = finalize(RunDir(restored))  # --model is not resolved: its weights need not be here
    assert json.loads(json.dumps(recomputed)) == json.loads((run / "results.json").read_text())


def test_save_then_restore_resumes_on_another_machine_with_nothing_asked_again(
    tmp_path,
    scripted_server,  # noqa: F811
):
    from karma.synth import generate, load_world

    server = scripted_server(
        models={"object": "list", "data": [{"id": MODEL}]},
        script=[("reply", chat_reply("ANSWER: B", MODEL))] * 100,
    )
    work_a, work_b = tmp_path / "machine-a", tmp_path / "machine-b" / "elsewhere"
    world = work_a / "world"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=4, seed=0)
    run = work_a / "abl-tiny"
    assert _eval(world, run, server.base_url).exit_code == 0
    asked = len(server.bodies)
    saved = tmp_path / "repo" / "results" / "tiny"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "save", str(run), str(saved), "--work", str(work_a),
         "--reproduce", "karma eval ..."],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in saved.iterdir()) == [
        "README.md", "baselines.jsonl.gz", "config.json", "results.json", "samples.jsonl.gz", "timing.json"
    ]  # fmt: skip
    assert _evidence().check(saved) == []
    assert str(tmp_path) not in "".join(p.read_text() for p in saved.iterdir() if p.suffix != ".gz")
    config = json.loads((saved / "config.json").read_text())
    assert config["config"]["data"] == "$WORK/world" and "restore" in (saved / "README.md").read_text()
    assert gzip.decompress((saved / "samples.jsonl.gz").read_bytes()) == (run / "samples.jsonl").read_bytes()
    # Machine B: the data at another path, no run folder; the evidence alone comes along.
    work_b.mkdir(parents=True)
    shutil.copytree(world, work_b / "world")
    shutil.rmtree(work_a)
    restored = work_b / "runs" / "abl-tiny"
    back = subprocess.run(
        [sys.executable, str(SCRIPT), "restore", str(saved), str(restored), "--work", str(work_b)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert back.returncode == 0, back.stderr
    assert json.loads((restored / "config.json").read_text())["config"]["data"] == str(
        (work_b / "world").resolve()
    )
    before = (restored / "samples.jsonl").read_bytes()
    resumed = _eval(work_b / "world", restored, server.base_url)
    assert resumed.exit_code == 0, resumed.output
    assert len(server.bodies) == asked  # nothing asked again: the fold graphs were rebuilt and matched
    assert (restored / "samples.jsonl").read_bytes() == before


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.name)
def test_a_saved_config_keeps_each_fold_list_once_and_restores_it_whole(run, tmp_path):
    """A fold graph's excluded_videos is its fold's member list: saved once as a reference, written back
    whole by restore (the resume check compares the lists)."""
    evidence = _evidence()
    saved = json.loads((run / "config.json").read_text())
    members = saved["folds"]["members"]
    assert all(g["excluded_videos"] == f"$FOLD_MEMBERS[{k}]" for k, g in enumerate(saved["graphs"].values()))
    restored = json.loads((evidence.restore(run, tmp_path / "run", tmp_path) / "config.json").read_text())
    assert [g["excluded_videos"] for g in restored["graphs"].values()] == members
    assert evidence.compact_folds(json.loads(json.dumps(restored)))["graphs"] == saved["graphs"]
    saved["graphs"]["fold0"]["excluded_videos"] = "$FOLD_MEMBERS[9]"
    with pytest.raises(evidence.EvidenceError, match=r"graphs\.fold0\.excluded_videos names fold 9"):
        evidence.expand_folds(saved)


def test_a_path_outside_work_is_refused_naming_the_key(tmp_path):
    evidence = _evidence()
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"config": {"data": "/srv/elsewhere/world"}, "command": []}))
    with pytest.raises(evidence.EvidenceError, match=r"config\.json\.config\.data holds the machine path"):
        evidence.save(run, tmp_path / "saved", tmp_path / "work")
    assert not (tmp_path / "saved").exists()
