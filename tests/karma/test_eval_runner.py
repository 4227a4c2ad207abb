"""End to end on a `karma synth` world with the embedded model (llama.cpp + packaged SmolLM2).

One run is started as a real `karma eval` subprocess and killed with SIGKILL after its first record;
the same command then resumes it. The tests check that nothing was lost or duplicated, that a rerun
into a new directory is answered from the cache with byte-identical results, that a finished run
answers nothing more, that changed settings refuse to resume, and that `karma report` writes
markdown with PNG plots.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from karma.eval import EvalConfig, RunDir, arms_from_ckg, run_evaluation, write_report
from karma.eval.report import MIN_VIDEOS_FOR_INTERVALS
from karma.run.rundir import RunMismatchError

pytestmark = pytest.mark.slow

LIMIT = 2  # questions; x2 arms = 4 model requests
ROOT = Path(__file__).resolve().parents[2]


def _args(world: Path, out: Path, cache: Path) -> list[str]:
    return [
        "eval",
        "--model", "smollm2-135m",
        "--data", str(world),
        "--out", str(out),
        "--ckg", "both",
        "--retriever", "keyword",
        "--k", "4",
        "--limit", str(LIMIT),
        "--folds", "3",
        "--constrain-choices",
        "--max-tokens", "4",
        "--cache", str(cache),
        "--no-progress",
    ]  # fmt: skip


def _config(world: Path, out: Path, cache: Path, **changes: object) -> EvalConfig:
    base = EvalConfig(
        data=str(world),
        out=str(out),
        arms=arms_from_ckg("both"),
        retriever="keyword",
        k=4,
        limit=LIMIT,
        folds=3,
        constrain_choices=True,
        max_tokens=4,
        cache_path=str(cache),
    )
    return base.model_copy(update=changes)


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [line for line in path.read_text().split("\n")[:-1] if line.strip()]


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    pytest.importorskip("llama_cpp")
    from karma.synth import generate, load_world

    base = tmp_path_factory.mktemp("eval_runner")
    world, run, cache = base / "world", base / "run", base / "cache.sqlite"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=6, seed=0)
    command = [sys.executable, "-m", "karma.cli.main", *_args(world, run, cache)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    samples = run / "samples.jsonl"
    deadline = time.monotonic() + 900
    while not _lines(samples):
        if proc.poll() is not None:
            pytest.fail(f"karma eval exited early ({proc.returncode}):\n{proc.stdout.read().decode()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("no record was written within the time limit")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before_kill = _lines(samples)
    resumed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    return {
        "world": world,
        "run": run,
        "cache": cache,
        "killed_exit": proc.returncode,
        "before_kill": before_kill,
        "resume_output": resumed.stdout,
    }


def test_sigkill_then_rerun_loses_nothing_and_duplicates_nothing(killed_and_resumed: dict) -> None:
    assert killed_and_resumed["killed_exit"] == -signal.SIGKILL
    run = RunDir(killed_and_resumed["run"])
    records = run.samples()
    keys = Counter(r.key for r in records)
    assert all(count == 1 for count in keys.values()), keys
    assert {arm for _, arm in keys} == {"on", "off"}
    assert len(keys) == LIMIT * 2
    # What was on disk before the kill is kept verbatim at the head of the file.
    lines = _lines(run.samples_path)
    before = killed_and_resumed["before_kill"]
    assert lines[: len(before)] == before
    assert len(before) < LIMIT * 2  # the kill really happened mid-run
    assert f"{len(before)} already done" in killed_and_resumed["resume_output"]
    # Every record is complete: prompt hash, parse status, and facts exactly for the graph arm.
    for record in records:
        assert record.prompt_hash and record.parse_status in ("ok", "fallback", "none")
        assert record.correct == (record.parsed_letter == record.answer)
        if record.arm == "off":
            assert record.fact_ids == [] and record.graph_hash is None
    baselines = run.baselines()
    assert sorted(b.question_id for b in baselines) == sorted({r.question_id for r in records})


def test_config_records_hashes_and_the_fold_setting(killed_and_resumed: dict) -> None:
    config = RunDir(killed_and_resumed["run"]).read_config()
    assert config["graph_mode"] == "folds"
    assert config["folds"]["k"] == 3
    assert set(config["hashes"]) >= {"data", "template", "template_version", "model", "backend_settings"}
    assert "sha256:" in config["hashes"]["model"]
    for info in config["graphs"].values():
        # Each graph used was built without the videos of its fold.
        assert info["excluded_videos"] and len(info["hash"]) == 16
    # Leakage guard: every answered video was left out of the graph its questions retrieved from,
    # and no edge statistic of that graph was computed from one of its transitions.
    from graph.model import CausalGraph

    for record in RunDir(killed_and_resumed["run"]).samples():
        key = f"fold{record.fold}"
        assert record.video_id in config["graphs"][key]["excluded_videos"]
        graph = CausalGraph.model_validate_json(
            (killed_and_resumed["run"] / "graphs" / f"{key}.json").read_text()
        )
        if record.arm == "on":
            assert record.graph_hash == graph.content_hash()
            assert set(record.fact_ids) <= set(graph.edges)
        assert not any(
            e.startswith(record.video_id + "/") for edge in graph.edges.values() for e in edge.evidence
        )
    results = RunDir(killed_and_resumed["run"]).results()
    assert results["n_questions"] == LIMIT
    assert set(results["arms"]) == {"on", "off"}
    assert results["paired"]["overall"]["n_pairs"] == LIMIT
    assert set(results["baselines"]["overall"]) >= {
        "random",
        "most_frequent_letter",
        "longest_option",
        "graph_reader",
    }


def test_rerun_from_cache_into_a_new_dir_gives_identical_results(
    killed_and_resumed: dict, tmp_path: Path
) -> None:
    first = RunDir(killed_and_resumed["run"])
    summary = run_evaluation(
        _config(killed_and_resumed["world"], tmp_path / "again", killed_and_resumed["cache"]), progress=False
    )
    assert summary.answered == LIMIT * 2
    assert summary.cache_hits == LIMIT * 2  # every answer came from the cache: no model call
    second = RunDir(tmp_path / "again")
    assert second.results_path.read_bytes() == first.results_path.read_bytes()

    def comparable(run: RunDir) -> dict:
        return {r.key: r.model_dump(exclude={"latency_s", "cached"}) for r in run.samples()}

    assert comparable(second) == comparable(first)


def test_rerun_of_a_finished_run_answers_nothing(killed_and_resumed: dict) -> None:
    run = RunDir(killed_and_resumed["run"])
    before = run.samples_path.read_bytes()
    results_before = run.results_path.read_bytes()
    summary = run_evaluation(
        _config(killed_and_resumed["world"], killed_and_resumed["run"], killed_and_resumed["cache"]),
        progress=False,
    )
    assert (summary.answered, summary.already_done) == (0, LIMIT * 2)
    assert run.samples_path.read_bytes() == before
    assert run.results_path.read_bytes() == results_before


def test_changed_decoding_settings_refuse_to_resume(killed_and_resumed: dict) -> None:
    config = _config(
        killed_and_resumed["world"], killed_and_resumed["run"], killed_and_resumed["cache"], max_tokens=8
    )
    with pytest.raises(RunMismatchError, match="max_tokens"):
        run_evaluation(config, progress=False)


def test_report_has_tables_and_plots(killed_and_resumed: dict, tmp_path: Path) -> None:
    run_dir = killed_and_resumed["run"]
    path = write_report([run_dir], tmp_path / "report")
    text = path.read_text()
    assert "| graph on |" in text and "| graph off |" in text
    assert "McNemar" in text and "graph reader (facts only, no LLM)" in text and "random (25%)" in text
    pngs = sorted((tmp_path / "report").glob("*.png"))
    assert {p.name.split("_")[-1] for p in pngs} == {"accuracy.png", "delta.png"}
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert f"]({png.name})" in text
    # Two runs side by side: the comparison table and plot appear.
    both = write_report([run_dir, run_dir], tmp_path / "both")
    compared = both.read_text()
    assert "## Comparison" in compared and (tmp_path / "both" / "comparison.png").is_file()
    results = json.loads((Path(run_dir) / "results.json").read_text())
    assert results["n_questions"] == LIMIT
    # Few videos: the report says the video-clustered intervals are too coarse, naming the count.
    assert results["n_videos"] < MIN_VIDEOS_FOR_INTERVALS
    assert f"**few videos**: the intervals resample whole videos, so with {results['n_videos']} " in text
