"""``karma qa verify``: answer each made question from its explanation, drop the wrong ones, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.qa import QaMakeConfig, make_qa
from karma.qa.verify import DROPS, MANIFEST, RECORDS, VerifyConfig, verify_qa
from pipelines.backends.base import Backend, ChatRequest, Completion

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


class AlwaysA(Backend):
    """Replies ``a`` to everything and counts its calls."""

    name = "always-a"

    def __init__(self) -> None:
        self.calls = 0

    @property
    def model_id(self) -> str:
        return "always-a"

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        self.calls += len(requests)
        return [Completion(text="a") for _ in requests]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from karma.synth import generate, load_world

    root = tmp_path_factory.mktemp("verify")
    world = root / "world"
    generate(load_world(REPO / "data" / "worlds" / "tiny.yaml"), world, videos=40, seed=4)
    features = root / "features"
    features.mkdir()
    for path in world.glob("*_causal_features.json"):
        (features / path.name).write_bytes(path.read_bytes())
    out = root / "qa"
    make_qa(QaMakeConfig(data=features, out=out, allow_bias=True))
    return out


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]


def test_wrong_answers_are_dropped_listed_and_the_rest_is_a_valid_folder(made: Path, tmp_path: Path) -> None:
    backend = AlwaysA()
    out = tmp_path / "verified"
    summary = verify_qa(VerifyConfig(qa_dir=made, out=out, limit=24), backend=backend)
    records = _records(out)
    assert backend.calls == summary.answered_now == summary.verified == len(records) == 24
    wrong = {r["question_id"] for r in records if r["answer"] != "a"}
    assert wrong and len(wrong) < 24
    drops = [json.loads(line) for line in (out / DROPS).read_text().splitlines()]
    assert {d["question_id"] for d in drops} == wrong
    assert all(d["reason"].startswith("answered a, the file says") for d in drops)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["model_id"] == "always-a" and len(manifest["prompt_hash"]) == 16
    assert manifest["kept"] == 24 - len(wrong) == summary.kept
    # The kept questions: a folder the strict validator accepts, every kept answer is "a", and the
    # grounding records follow the renumbered ids.
    result = runner.invoke(app, ["data", "validate", str(out)])
    assert result.exit_code == 0, result.output
    grounding = [json.loads(line) for line in (out / "question_grounding.jsonl").read_text().splitlines()]
    assert len(grounding) == summary.kept
    for record in grounding:
        items = json.loads((out / f"{record['video_id']}_qa.json").read_text())
        question = items[record["transition_index"]]["questions"][record["question_index"]]
        assert question["answer"] == record["answer"] == "a"


def test_a_rerun_resumes_without_loss_or_duplicates(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "verified"
    verify_qa(VerifyConfig(qa_dir=made, out=out, limit=10), backend=AlwaysA())
    lines = (out / RECORDS).read_bytes().splitlines(keepends=True)
    # A kill in the middle of a write leaves half a line: it is cut and that question asked again.
    (out / RECORDS).write_bytes(b"".join(lines[:6]) + lines[6][:20])
    again = AlwaysA()
    summary = verify_qa(VerifyConfig(qa_dir=made, out=out, limit=10), backend=again)
    assert again.calls == 0 and summary.from_cache == 4 and summary.answered_now == 4
    ids = [r["question_id"] for r in _records(out)]
    assert len(ids) == len(set(ids)) == 10


def _kill_9_then_rerun(command: list[str], records: Path, total: int) -> int:
    """Start ``karma <command>``, SIGKILL it once two verdicts are on disk, rerun it to the end;
    return how many verdict lines the killed run left."""
    argv = [sys.executable, "-m", "karma.cli.main", *command]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            if records.is_file() and records.read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.05)
        assert process.poll() is None, "finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    before = records.read_bytes().count(b"\n")
    assert 2 <= before < total
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    ids = [json.loads(line)["question_id"] for line in records.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == total
    return before


@pytest.mark.timeout(600)
def test_the_embedded_model_resumes_after_kill_9(made: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    out = tmp_path / "verified"
    before = _kill_9_then_rerun(
        ["qa", "verify", str(made), "--out", str(out), "--limit", "12"], out / RECORDS, 12
    )
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["answered_now"] <= 12 - before + 1  # at most the one cut short is asked twice
    assert "SmolLM2" in manifest["model_id"]
    assert manifest["kept"] + manifest["dropped"] == 12 and len(manifest["drops"]) == manifest["dropped"]


@pytest.mark.timeout(600)
def test_the_embedded_model_paraphrase_resumes_after_kill_9(made: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from karma.qa.paraphrase import MANIFEST as PARAPHRASED
    from karma.qa.paraphrase import RECORDS as REWRITES

    out = tmp_path / "paraphrased"
    command = ["qa", "paraphrase", str(made), "--out", str(out), "--limit", "5", "--allow-bias"]
    before = _kill_9_then_rerun(command, out / REWRITES, 5)
    manifest = json.loads((out / PARAPHRASED).read_text())
    assert manifest["answered_now"] <= 5 - before + 1
    assert "SmolLM2" in manifest["model_id"]
    assert manifest["rewritten"] + len(manifest["rejected_rewrites"]) == 5
    assert runner.invoke(app, ["data", "validate", str(out)]).exit_code == 0


class Rewriter(Backend):
    """Rewrites in turn: fairly, dropping the numbers, and naming options (event titles: whatever the
    options of a question, it adds one of their words)."""

    name = "rewriter"

    def __init__(self) -> None:
        self.calls = 0

    @property
    def model_id(self) -> str:
        return "rewriter"

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        out = []
        for request in requests:
            self.calls += 1
            question = str(request.messages[-1].content).split("Question: ", 1)[1]
            kind = self.calls % 3
            if kind == 0:
                text = "Question: In other words -- " + question
            elif kind == 1:
                text = "Something changed on screen; what does the soundtrack do?"
            else:
                text = question + " Is it loudness increases, mode shifts, or brightness increases?"
            out.append(Completion(text=text))
        return out


def test_paraphrases_pass_the_guards_or_keep_the_template(made: Path, tmp_path: Path) -> None:
    from karma.qa.paraphrase import MANIFEST as PARAPHRASED
    from karma.qa.paraphrase import RECORDS as REWRITES
    from karma.qa.paraphrase import ParaphraseConfig, paraphrase_qa

    out = tmp_path / "paraphrased"
    config = ParaphraseConfig(qa_dir=made, out=out, limit=12, allow_bias=True)
    summary = paraphrase_qa(config, backend=Rewriter())
    assert summary.rewritten == 4 and summary.questions > 12
    assert summary.rejected == {"lost a number": 4, "shares a word with an option": 4}
    manifest = json.loads((out / PARAPHRASED).read_text())
    assert len(manifest["rejected_rewrites"]) == 8 and manifest["model_id"] == "rewriter"
    assert runner.invoke(app, ["data", "validate", str(out)]).exit_code == 0
    verdicts = [json.loads(line) for line in (out / REWRITES).read_text().splitlines()]
    texts = {}
    for item in (json.loads(p.read_text()) for p in out.glob("*_qa.json")):
        for transition in item:
            for question in transition["questions"]:
                texts[question["question"]] = True
    for verdict in verdicts:
        rewritten = "In other words -- " + verdict["original"]
        assert (rewritten in texts) == verdict["accepted"]
        assert (verdict["original"] in texts) != verdict["accepted"]
    # A rerun asks nothing again.
    again = Rewriter()
    assert paraphrase_qa(config, backend=again).answered_now == 0 and again.calls == 0


def test_the_embedded_model_paraphrases_and_its_rejections_are_listed(made: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    out = tmp_path / "paraphrased"
    command = ["qa", "paraphrase", str(made), "--out", str(out), "--limit", "3", "--allow-bias"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "paraphrase.json").read_text())
    assert "SmolLM2" in manifest["model_id"] and manifest["answered_now"] == 3
    assert manifest["rewritten"] + len(manifest["rejected_rewrites"]) == 3
    assert runner.invoke(app, ["data", "validate", str(out)]).exit_code == 0
