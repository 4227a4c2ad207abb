"""`karma eval --task NAME` is as safe as a Karma-MV `karma eval` run (issue 29, item 5):

* the run folder is locked (a second run on it is refused, exit 2, nothing written);
* options a task run cannot honour are refused (exit 2, one `error:` line naming them) before any
  work, and a refused run leaves no folder behind; honoured ones (--seed, --temperature) are recorded;
* a backend error is no answer: not scored, not a parse failure, not paired; the run exits 1, stops
  at --max-error-rate, and the same command retries exactly the failed items;
* `karma eval --task harmonyset-oe` runs; `karma data validate --task` exits 2 naming the file.

Servers are real: the packaged SmolLM2 behind llama.cpp's OpenAI-compatible server, and the scripted
HTTP server of tests/pipelines/conftest.py in front of it (HTTP 500s on cue).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.run.hygiene import MIN_JUDGED, read_hygiene
from karma.tasks.records import TaskSample
from karma.tasks.results import aggregate_task
from karma.tasks.runner import read_samples
from tests.pipelines.conftest import llama_server, scripted_server, smollm2_gguf  # noqa: F401 (fixtures)
from tests.tasks.conftest import chat_reply

ROOT = Path(__file__).resolve().parents[2]
WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


# -- options --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "extra", "named"),
    [
        ("wildscore", ["--shard", "0/2"], "--shard"),
        ("wildscore", ["--executor", "ray"], "--executor"),
        ("wildscore", ["--answer-mode", "loglik"], "--answer-mode"),
        ("wildscore", ["--ckg", "on"], "--ckg"),
        ("wildscore", ["--retriever", "none"], "--retriever"),
        ("wildscore", ["--k", "3"], "--k"),
        ("wildscore", ["--log-prompts"], "--log-prompts"),
        ("wildscore", ["--types", "evidential"], "--types"),
        ("harmonyset-oe", ["--arms", "av"], "--arms"),
        ("harmonyset-oe", ["--concurrency", "2"], "--concurrency"),
        ("aimoclips", ["--backend", "openai"], "--backend"),
        ("aimoclips", ["--seed", "3"], "--seed"),
    ],
)
def test_options_a_task_cannot_honour_are_refused_before_any_work(tmp_path, task, extra, named):
    run = tmp_path / "run"
    done = _invoke(
        "eval", "--task", task, "--data", str(WILDSCORE), "--out", str(run), "--no-progress", *extra
    )
    assert done.exit_code == 2, done.output
    errors = _error_lines(done.output)
    assert len(errors) == 1 and named in errors[0] and "cannot honour" in errors[0], done.output
    assert "Traceback" not in done.output
    assert not run.exists()  # refused: no run folder


def test_the_only_answer_mode_and_executor_a_task_has_may_be_named(tmp_path):
    # --answer-mode generate / --executor local are what a task run does: accepted, then the next
    # refusal (an impossible temperature) is what stops it, still before any folder exists.
    run = tmp_path / "run"
    done = _invoke("eval", "--task", "wildscore", "--data", str(WILDSCORE), "--out", str(run),
                   "--answer-mode", "generate", "--executor", "local", "--temperature", "-1")  # fmt: skip
    assert done.exit_code == 2 and "temperature" in done.output and "cannot honour" not in done.output
    assert not run.exists()


def test_broken_data_and_a_refused_backend_leave_no_run_folder(tmp_path, scripted_server):  # noqa: F811
    data = tmp_path / "ws"
    shutil.copytree(WILDSCORE, data)
    (data / "data.csv").write_text((WILDSCORE / "data.csv").read_text().replace(",B,Rhythm", ",Q,Rhythm"))
    run = tmp_path / "run"
    bad = _invoke("eval", "--task", "wildscore", "--data", str(data), "--out", str(run), "--no-progress")
    assert bad.exit_code == 2 and "data.csv" in _error_lines(bad.output)[0] and not run.exists()
    # The backend is built after the lock is taken: a model the server does not serve is refused
    # there (exit 2) and the folder the run had created is removed again.
    server = scripted_server(models={"object": "list", "data": [{"id": "some-other-model"}]})
    refused = _invoke("eval", "--task", "wildscore", "--data", str(WILDSCORE), "--out", str(run), "--no-progress",
                      "--arms", "text_only", "--backend", "openai", "--backend-opt", f"base_url={server.base_url}",
                      "--backend-opt", "model=karma-test-model")  # fmt: skip
    assert refused.exit_code == 2, refused.output
    assert "karma-test-model" in _error_lines(refused.output)[0] and not run.exists()
    assert server.bodies == []  # not one request was sent


def test_data_validate_task_exits_2_with_an_error_line_naming_the_file(tmp_path):
    data = tmp_path / "ws"
    shutil.copytree(WILDSCORE, data)
    (data / "data.csv").write_text((WILDSCORE / "data.csv").read_text().replace(",B,Rhythm", ",Q,Rhythm"))
    done = _invoke("data", "validate", "--task", "wildscore", str(data))
    assert done.exit_code == 2, done.output
    errors = _error_lines(done.output)
    assert len(errors) == 1 and str(data / "data.csv") in errors[0] and "truth_letter" in errors[0]


# -- lock and recorded options --------------------------------------------------------------------------


@pytest.mark.slow
def test_two_task_runs_on_one_out_are_refused_and_seed_is_recorded(tmp_path):
    pytest.importorskip("llama_cpp")
    run = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from karma.core.lock import FolderLock; "
         "lock = FolderLock(sys.argv[1], 'task run').acquire(); print('held', flush=True); time.sleep(120)", str(run)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    args = ["eval", "--task", "wildscore", "--data", str(WILDSCORE), "--out", str(run), "--arms", "text_only",
            "--limit", "2", "--max-tokens", "2", "--seed", "3", "--no-progress", "--bootstrap-resamples", "50"]  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        second = _invoke(*args)
        assert second.exit_code == 2, second.output
        assert "in use by another karma task run" in _error_lines(second.output)[0]
        assert not (run / "samples.jsonl").exists() and not (run / "config.json").exists()
    finally:
        holder.kill()
        holder.wait(timeout=30)
    done = _invoke(*args)  # the holder is gone: its lock is stale, the run takes it over
    assert done.exit_code == 0, done.output
    config = json.loads((run / "config.json").read_text())
    assert config["config"]["seed"] == 3 and config["identity"]["seed"] == 3
    assert config["identity"]["temperature"] == 0.0
    assert len(read_samples(run)) == 2
    again = _invoke(*args[:-2], "--seed", "4", "--bootstrap-resamples", "50")
    assert again.exit_code == 2 and "identity.seed: 3 -> 4" in again.output


# -- backend errors -------------------------------------------------------------------------------------


def _sample(
    item: str, arm: str, *, correct: bool = False, error: str | None = None, status="ok"
) -> TaskSample:
    return TaskSample(
        item_id=item, task="wildscore", arm=arm, category="HT", cluster_id=item, k=4, answer="a",
        parsed_letter="a" if correct else ("b" if status == "ok" else None), parse_status=status,
        correct=correct, error=error,
    )  # fmt: skip


def test_a_backend_error_is_neither_wrong_nor_a_parse_failure_nor_paired():
    samples = [
        _sample("1", "image", correct=True), _sample("1", "text_only", correct=False),
        _sample("2", "image", error="HTTP 500", status="none"), _sample("2", "text_only", correct=True),
        _sample("3", "image", correct=False, status="none"), _sample("3", "text_only", correct=True),
    ]  # fmt: skip
    results = aggregate_task(samples, task="wildscore", arms=["image", "text_only"], resamples=50)
    image = results["arms"]["image"]["overall"]
    assert image["n"] == 2 and image["correct"] == 1 and image["accuracy"] == pytest.approx(0.5)
    assert image["backend_errors"] == 1 and image["parse_failures"] == 1
    assert image["parse_failure_rate"] == pytest.approx(0.5) and image["chance"] == pytest.approx(0.25)
    paired = results["paired"]["image-vs-text_only"]["overall"]
    assert paired["n_pairs"] == 2  # items 1 and 3: item 2 has no image answer
    assert paired["first_only_correct"] == 1 and paired["second_only_correct"] == 1
    everything_failed = aggregate_task(samples[2:3], task="wildscore", arms=["image"], resamples=50)
    assert everything_failed["arms"]["image"]["overall"]["accuracy"] is None  # not NaN in JSON


def _twelve_rows(tmp_path: Path) -> Path:
    """The WildScore fixture plus four more rows (other questions on the same images): 12 items."""
    root = tmp_path / "ws12"
    shutil.copytree(WILDSCORE, root)
    lines = (WILDSCORE / "data.csv").read_text().splitlines()
    extra = [line.replace("SYNTHETIC: ", f"SYNTHETIC (extra {n}): ") for n, line in enumerate(lines[1:5], 1)]
    (root / "data.csv").write_text("\n".join([*lines, *extra]) + "\n")
    return root


@pytest.mark.slow
@pytest.mark.server
def test_500s_stop_a_task_run_and_the_same_command_retries_the_failed_items(
    llama_server,  # noqa: F811
    scripted_server,  # noqa: F811
    tmp_path,
):
    data, run = _twelve_rows(tmp_path), tmp_path / "run"
    broken = scripted_server(upstream=llama_server.base_url, script=[("status", 500)] * 100)
    args = ["eval", "--task", "wildscore", "--data", str(data), "--out", str(run), "--arms", "text_only",
            "--max-tokens", "2", "--no-progress", "--bootstrap-resamples", "50", "--backend", "openai",
            "--backend-opt", f"base_url={broken.base_url}", "--backend-opt", f"model={llama_server.model}",
            "--backend-opt", "max_retries=0"]  # fmt: skip

    stopped = _invoke(*args)
    assert stopped.exit_code == 1, stopped.output
    assert "stopped:" in stopped.output and "--max-error-rate 0.2" in stopped.output
    records = read_samples(run)
    assert len(records) == MIN_JUDGED and all(r.error and "500" in r.error for r in records)
    assert all(r.parse_status == "none" and not r.correct for r in records)
    assert read_hygiene(run)["stopped"]["backend_errors"] == MIN_JUDGED

    broken.script[:] = [("status", 500)] * 2  # mostly fixed: two more failures, under a lenient limit
    partial = _invoke(*args, "--max-error-rate", "1")
    assert partial.exit_code == 1, partial.output
    assert "12 answered, 0 already done" in partial.output  # the 10 failed items were asked again
    assert "2 request(s)" in _error_lines(partial.output)[0] and "--allow-backend-errors" in partial.output
    results = json.loads((run / "results.json").read_text())["arms"]["text_only"]["overall"]
    assert results["n"] == 10 and results["backend_errors"] == 2
    assert results["parse_failures"] == sum(
        1 for r in read_samples(run) if r.error is None and r.parse_status == "none"
    )

    fixed = _invoke(*args, "--max-error-rate", "1")
    assert fixed.exit_code == 0, fixed.output
    assert "2 answered, 10 already done" in fixed.output
    final = read_samples(run)
    assert len(final) == 12 and all(r.error is None for r in final)
    assert json.loads((run / "results.json").read_text())["arms"]["text_only"]["overall"]["n"] == 12


# -- HarmonySet-OE --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_harmonyset_oe_runs_from_the_cli_and_retries_backend_errors(
    harmonyset_dir,
    scripted_server,  # noqa: F811
    tmp_path,
):
    server = scripted_server(
        models={"object": "list", "data": [{"id": "oe-model"}]},
        script=[
            ("status", 500),
            ("reply", chat_reply("It fits.", "oe-model")),
            ("reply", chat_reply("It fits well.", "oe-model")),
        ],
    )
    run = tmp_path / "oe"
    args = ["eval", "--task", "harmonyset-oe", "--data", str(harmonyset_dir), "--out", str(run), "--no-progress",
            "--backend", "openai", "--backend-opt", f"base_url={server.base_url}", "--backend-opt", "model=oe-model",
            "--backend-opt", "max_retries=0", "--seed", "5"]  # fmt: skip
    first = _invoke(*args)
    assert first.exit_code == 1, first.output  # one pair failed in the backend
    assert "2 open answers written" in first.output and "1 request(s)" in _error_lines(first.output)[0]
    assert server.bodies[0]["seed"] == 5
    second = _invoke(*args)
    assert second.exit_code == 0, second.output
    assert "1 open answers written" in second.output
    from karma.tasks.harmonyset_oe import latest_samples

    samples = latest_samples(run)
    assert len(samples) == 2 and all(
        s.error is None and s.raw_completion.startswith("It fits") for s in samples
    )
    # An OE run is a karma run: config.json (seed, model), karma report reads it, other settings refused.
    config = json.loads((run / "config.json").read_text())
    assert config["identity"]["seed"] == 5 and config["hashes"]["model"] == "oe-model"
    assert config["task"]["kind"] == "open"
    report = _invoke("report", str(run))
    assert report.exit_code == 0, report.output
    text = Path(report.output.strip().splitlines()[-1]).read_text()
    assert "pairs answered: 2; backend errors (no answer, retried by a rerun): 0" in text
    assert "not judged yet" in text
    other = _invoke(*args[:-1], "6")
    assert other.exit_code == 2 and "identity.seed: 5 -> 6" in other.output


# -- kill -9 ---------------------------------------------------------------------------------------------


def test_a_task_run_killed_with_sigkill_and_rerun_loses_and_duplicates_nothing(
    tmp_path,
    scripted_server,  # noqa: F811
):
    """A real `karma eval --task wildscore` process (answers through the scheduler from a real HTTP
    server, 0.15 s each) is killed with SIGKILL mid-run; the same command then finishes it: every
    (item, arm) is answered exactly once in samples.jsonl and results.json counts all of them."""
    import os
    import signal
    import time

    data, run = _twelve_rows(tmp_path), tmp_path / "run"
    server = scripted_server(
        models={"object": "list", "data": [{"id": "ws-model"}]}, delay_s=0.15,
        script=[("reply", chat_reply("ANSWER: A", "ws-model"))] * 200,
    )  # fmt: skip
    args = [sys.executable, "-m", "karma.cli.main", "eval", "--task", "wildscore", "--data", str(data),
            "--out", str(run), "--arms", "text_only", "--max-tokens", "4", "--no-progress",
            "--bootstrap-resamples", "50", "--backend", "openai", "--backend-opt", f"base_url={server.base_url}",
            "--backend-opt", "model=ws-model", "--backend-opt", "max_retries=0"]  # fmt: skip
    samples = run / "samples.jsonl"
    first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None:
            if samples.exists() and samples.read_text().count("\n") >= 3:
                break
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    before = [line for line in samples.read_text().splitlines() if line.strip()]
    assert 3 <= len(before) < 12, "the kill should land mid-run"

    again = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    lines = [json.loads(line) for line in samples.read_text().splitlines() if line.strip()]
    keys = [(r["item_id"], r["arm"]) for r in lines]
    assert len(keys) == len(set(keys)) == 12, "every item answered exactly once"
    assert all(r["error"] is None and r["parsed_letter"] == "a" for r in lines)
    overall = json.loads((run / "results.json").read_text())["arms"]["text_only"]["overall"]
    assert overall["n"] == 12 and overall["backend_errors"] == 0
    assert f"{12 - len(before)} answered, {len(before)} already done" in again.stdout
