"""Sharded runs (``--shard I/N`` + ``karma merge``) and the Ray executor, against local runs.

The local references are real runs: ``karma eval`` with the embedded model on a synth world and
``karma extract`` on two rendered mp4s. Shards must merge into byte-identical results.json and
feature files; a missing or repeated shard is refused with a one-line error (exit 2). The Ray tests
start a real local Ray head (``ray start --head --block`` on 127.0.0.1, stopped by its pid) and run
both commands with ``--executor ray`` and 2 workers.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from karma.core.errors import InputError
from karma.core.shard import ShardSpec, check_complete

ROOT = Path(__file__).resolve().parents[2]


# -- the shard rule -----------------------------------------------------------------------------
def test_shard_spec_parses_and_refuses_what_is_not_i_of_n() -> None:
    assert ShardSpec.parse("1/3") == ShardSpec(index=1, count=3)
    assert str(ShardSpec.parse(" 0 / 2 ")) == "0/2"
    for bad in ("3/3", "1", "a/b", "-1/2", "1/0", ""):
        with pytest.raises(InputError, match="shard"):
            ShardSpec.parse(bad)


def test_shards_partition_the_sorted_units_whatever_the_input_order() -> None:
    units = [f"v{i:02d}" for i in range(7)]
    parts = [ShardSpec(index=i, count=3).units(reversed(units)) for i in range(3)]
    assert parts == [["v00", "v03", "v06"], ["v01", "v04"], ["v02", "v05"]]
    assert sorted(u for p in parts for u in p) == units
    items = [("v03", "q1"), ("v00", "q2"), ("v03", "q3")]
    assert ShardSpec(index=0, count=3).select(items, lambda x: x[0], units) == items


def test_check_complete_names_missing_repeated_and_mixed_shards() -> None:
    s = ShardSpec.parse
    assert check_complete([(s("0/2"), "a"), (s("1/2"), "b")]) == 2
    with pytest.raises(InputError, match=r"missing shard 1/2"):
        check_complete([(s("0/2"), "a")])
    with pytest.raises(InputError, match=r"shard 0/2 is given twice: a and b"):
        check_complete([(s("0/2"), "a"), (s("0/2"), "b"), (s("1/2"), "c")])
    with pytest.raises(InputError, match="different counts"):
        check_complete([(s("0/2"), "a"), (s("1/3"), "b")])


# -- evaluation -----------------------------------------------------------------------------------
def _eval_config(world: Path, out: Path, **changes: object):
    from karma.eval import EvalConfig, arms_from_ckg

    return EvalConfig(
        data=str(world),
        out=str(out),
        arms=arms_from_ckg("both"),
        retriever="keyword",
        k=4,
        types=["predictive"],
        folds=3,
        constrain_choices=True,
        max_tokens=4,
        use_cache=False,
    ).model_copy(update=changes)


@pytest.fixture(scope="module")
def eval_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("llama_cpp")
    from karma.eval import run_evaluation
    from karma.synth import generate, load_world

    base = tmp_path_factory.mktemp("shards_eval")
    world = base / "world"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=5, seed=0)
    run_evaluation(_eval_config(world, base / "local"), progress=False)
    for i in range(2):
        run_evaluation(_eval_config(world, base / f"s{i}", shard=f"{i}/2"), progress=False)
    return {"world": world, "base": base, "local": base / "local", "s0": base / "s0", "s1": base / "s1"}


@pytest.mark.slow
def test_each_shard_answers_whole_videos_and_the_shards_are_disjoint(eval_runs: dict[str, Path]) -> None:
    from karma.eval import RunDir

    videos = [{r.video_id for r in RunDir(eval_runs[s]).samples()} for s in ("s0", "s1")]
    local = {r.video_id for r in RunDir(eval_runs["local"]).samples()}
    assert videos[0] and videos[1] and not videos[0] & videos[1]
    assert videos[0] | videos[1] == local
    config = RunDir(eval_runs["s1"]).read_config()
    assert config["selection"]["shard"] == "1/2"


@pytest.mark.slow
def test_merged_shards_give_the_local_results_byte_for_byte(eval_runs: dict[str, Path]) -> None:
    from karma.cli.main import app

    out = eval_runs["base"] / "merged"
    result = CliRunner().invoke(
        app, ["merge", "eval", "--out", str(out), str(eval_runs["s1"]), str(eval_runs["s0"])]
    )
    assert result.exit_code == 0, result.output
    assert (out / "results.json").read_bytes() == (eval_runs["local"] / "results.json").read_bytes()
    local_keys = sorted(
        json.loads(line)["question_id"] for line in (eval_runs["local"] / "samples.jsonl").open()
    )
    merged_keys = sorted(json.loads(line)["question_id"] for line in (out / "samples.jsonl").open())
    assert merged_keys == local_keys
    # A second merge into the same folder is refused (it would double the records).
    again = CliRunner().invoke(
        app, ["merge", "eval", "--out", str(out), str(eval_runs["s0"]), str(eval_runs["s1"])]
    )
    assert again.exit_code == 2 and "already holds a run" in again.output


@pytest.mark.slow
def test_merge_refuses_a_missing_and_a_repeated_shard(eval_runs: dict[str, Path]) -> None:
    from karma.cli.main import app

    base = eval_runs["base"]
    missing = CliRunner().invoke(app, ["merge", "eval", "--out", str(base / "m1"), str(eval_runs["s0"])])
    assert missing.exit_code == 2
    assert "missing shard 1/2" in missing.output and "Traceback" not in missing.output
    twice = CliRunner().invoke(
        app,
        [
            "merge",
            "eval",
            "--out",
            str(base / "m2"),
            str(eval_runs["s0"]),
            str(eval_runs["s0"]),
            str(eval_runs["s1"]),
        ],
    )
    assert twice.exit_code == 2 and "shard 0/2 is given twice" in twice.output
    not_a_shard = CliRunner().invoke(
        app, ["merge", "eval", "--out", str(base / "m3"), str(eval_runs["local"])]
    )
    assert not_a_shard.exit_code == 2 and "not a shard run" in not_a_shard.output
    assert not (base / "m1" / "results.json").exists() and not (base / "m2" / "results.json").exists()


@pytest.mark.slow
def test_merge_refuses_shards_that_lost_a_record(eval_runs: dict[str, Path], tmp_path: Path) -> None:
    from karma.eval.shards import merge_runs

    broken = tmp_path / "s1"
    shutil.copytree(eval_runs["s1"], broken)
    lines = (broken / "samples.jsonl").read_text().splitlines(keepends=True)
    (broken / "samples.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(InputError, match="selected questions are in no shard"):
        merge_runs(tmp_path / "merged", [eval_runs["s0"], broken])


# -- extraction -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def raw_videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from karma.core.records import SceneFeatures
    from karma.synth.media import MediaOptions, ScenePlan, render_scenes

    folder = tmp_path_factory.mktemp("raw_videos")
    rng = np.random.default_rng(11)
    for name in ("vidA", "vidB", "vidC"):
        plans = [
            ScenePlan(
                scene_id=f"scene_{i + 1:03d}",
                features=SceneFeatures.model_validate(
                    {
                        "Brightness": float(rng.uniform(60, 190)),
                        "Contrast": float(rng.uniform(15, 40)),
                        "Saturation": float(rng.uniform(40, 200)),
                        "Motion": float(rng.uniform(1, 20)),
                        "Average Loudness (dB)": float(rng.uniform(-30, -12)),
                        "Key": ["C major", "A minor", "G major"][i],
                    }
                ),
                n_frames=36,
            )
            for i in range(3)
        ]
        result = render_scenes(name, plans, folder / name, MediaOptions(seed=5))
        shutil.move(str(result.video_path), folder / f"{name}.mp4")
        shutil.rmtree(folder / name, ignore_errors=True)
    return folder


def _extract(videos: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "karma.cli.main", "extract", str(videos), "--out", str(out), "--no-progress",
               "--workers", "1", *extra]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)


def _features(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*_causal_features.json"))}


@pytest.fixture(scope="module")
def local_extract(raw_videos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("extract_local")
    done = _extract(raw_videos, out, "--clips", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_features(out)) == 3
    return out


@pytest.mark.slow
def test_extract_shards_merge_into_the_local_feature_files(
    raw_videos: Path, local_extract: Path, tmp_path: Path
) -> None:
    from karma.cli.main import app

    for i in range(2):
        done = _extract(raw_videos, tmp_path / f"s{i}", "--clips", "none", "--shard", f"{i}/2")
        assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(_features(tmp_path / "s0")) == ["vidA_causal_features.json", "vidC_causal_features.json"]
    missing = CliRunner().invoke(
        app, ["merge", "extract", "--out", str(tmp_path / "m"), str(tmp_path / "s0")]
    )
    assert missing.exit_code == 2 and "missing shard 1/2" in missing.output
    merged = CliRunner().invoke(
        app, ["merge", "extract", "--out", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1")]
    )
    assert merged.exit_code == 0, merged.output
    assert _features(tmp_path / "m") == _features(local_extract)
    shutil.copy(tmp_path / "s0" / "extract_shard-0-of-2.json", tmp_path / "s1")
    twice = CliRunner().invoke(
        app, ["merge", "extract", "--out", str(tmp_path / "m2"), str(tmp_path / "s0"), str(tmp_path / "s1")]
    )
    assert twice.exit_code == 2 and "shard 0/2 is given twice" in twice.output


# -- Ray --------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory: pytest.TempPathFactory):
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        pytest.skip("Ray is not installed (pip install -e '.[ray]'; scripts/setup.sh installs it)")
    port = _free_port()
    # The system temp folder, not pytest's deep tmp_path: Ray's socket paths must fit AF_UNIX's 107 bytes.
    temp = Path(tempfile.gettempdir()) / f"kray{os.getpid()}"
    command = [str(ray_bin), "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
               "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", str(temp)]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    log = (tmp_path_factory.mktemp("ray") / "head.log").open("w")
    head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while subprocess.run(
        [str(ray_bin), "status", "--address", address], capture_output=True, env=env
    ).returncode:
        if head.poll() is not None or time.monotonic() > deadline:
            head.kill()
            pytest.fail(f"Ray head did not start: {Path(log.name).read_text()[-2000:]}")
        time.sleep(1)
    try:
        yield address
    finally:
        head.terminate()  # --block: the head stops the Ray processes it started
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, 9)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_eval_on_ray_with_two_workers_gives_the_local_results(
    eval_runs: dict[str, Path], ray_head: str
) -> None:
    out = eval_runs["base"] / "ray"
    command = [sys.executable, "-m", "karma.cli.main", "eval", "--model", "smollm2-135m",
               "--data", str(eval_runs["world"]), "--out", str(out),
               "--ckg", "both", "--retriever", "keyword", "--k", "4", "--types", "predictive", "--folds", "3",
               "--constrain-choices", "--max-tokens", "4", "--no-cache", "--no-progress",
               "--executor", "ray", "--shards", "2", "--ray-address", ray_head]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "results.json").read_bytes() == (eval_runs["local"] / "results.json").read_bytes()
    assert sorted(p.name for p in (out / "shards").iterdir()) == ["shard-0-of-2", "shard-1-of-2"]


@pytest.mark.slow
def test_extract_on_ray_with_two_workers_gives_the_local_feature_files(
    raw_videos: Path, local_extract: Path, ray_head: str, tmp_path: Path
) -> None:
    out = tmp_path / "ray_extract"
    done = _extract(
        raw_videos, out, "--clips", "none", "--executor", "ray", "--shards", "2", "--ray-address", ray_head
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _features(out) == _features(local_extract)
    assert json.loads((out / "extract_merge.json").read_text())["shards"] == ["0/2", "1/2"]
