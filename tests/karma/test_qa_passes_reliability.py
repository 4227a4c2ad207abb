"""``karma qa verify`` and ``karma qa paraphrase`` on karma eval's contract (issue 38): against HTTP
500s, a dead port and a hanging server a failed request is an error record, never a verdict; the
command exits 1 and writes no question set; a rerun against a healthy server asks exactly the failed
questions; a second run on the same ``--out`` is refused.

The server is :class:`tests.karma.loopback.LoopbackModelServer`, a boundary double (a real HTTP server
on 127.0.0.1); the backend is karma's real ``openai`` backend.
"""

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
from karma.qa.verify import MANIFEST, RECORDS
from tests.karma.loopback import MODEL, LoopbackModelServer, dead_port_url
from tests.karma.test_qa_verify import made  # noqa: F401 (fixture: a karma qa make folder)

runner = CliRunner()


def _opts(base_url: str, timeout_s: float = 2.0) -> list[str]:
    return ["--backend", "openai", "--backend-opt", f"base_url={base_url}", "--backend-opt", f"model={MODEL}",
            "--backend-opt", "max_retries=0", "--backend-opt", f"timeout_s={timeout_s}"]  # fmt: skip


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verify(made: Path, out: Path, url: str, *extra: str, timeout_s: float = 2.0):  # noqa: F811
    return runner.invoke(app, ["qa", "verify", str(made), "--out", str(out), *_opts(url, timeout_s), *extra])


def _assert_failed_then_rerun_asks_exactly_those(made: Path, out: Path, first, limit: int) -> None:  # noqa: F811
    assert first.exit_code == 1, first.output
    assert "have no verdict" in first.output or "stopped:" in first.output
    assert not list(out.glob("*_qa.json")) and not (out / MANIFEST).exists()  # no set written
    records = {r["question_id"]: r for r in _lines(out / RECORDS)}  # the latest per question
    failed = [qid for qid, r in records.items() if r["error"] is not None]
    assert failed and all("kept" not in records[qid] for qid in failed)  # an error is never a verdict
    answered = {qid for qid, r in records.items() if r["error"] is None}
    with LoopbackModelServer() as healthy:
        again = _verify(made, out, healthy.base_url, "--limit", str(limit))
        assert again.exit_code == 0, again.output
        assert healthy.good == limit - len(answered)  # the failed and the never-asked ones, nothing else
    final = {}
    for record in _lines(out / RECORDS):
        final[record["question_id"]] = record
    assert len(final) == limit and all(r["error"] is None for r in final.values())
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["verified"] == limit and manifest["kept"] + manifest["dropped"] == limit
    assert not any("backend error" in d["reason"] for d in manifest["drops"])
    assert runner.invoke(app, ["data", "validate", str(out)]).exit_code == 0


@pytest.mark.timeout(120)
def test_verify_against_500s_after_six_answers(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "verified"
    with LoopbackModelServer(fail_after=6) as server:
        first = _verify(made, out, server.base_url, "--limit", "12", "--max-error-rate", "1")
        assert server.good == 6 and server.failed == 6
    _assert_failed_then_rerun_asks_exactly_those(made, out, first, 12)


@pytest.mark.timeout(120)
def test_verify_against_a_dead_port_stops_at_the_error_rate(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "verified"
    first = _verify(made, out, dead_port_url(), "--limit", "16")
    assert "stopped: 10 of 10 requests failed" in first.output
    _assert_failed_then_rerun_asks_exactly_those(made, out, first, 16)


@pytest.mark.timeout(120)
def test_verify_against_a_hanging_server(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "verified"
    with LoopbackModelServer(mode="hang") as server:
        first = _verify(made, out, server.base_url, "--limit", "3", "--max-error-rate", "1", timeout_s=0.5)
    assert "timeout" in first.output
    _assert_failed_then_rerun_asks_exactly_those(made, out, first, 3)


def test_old_backend_error_verdicts_are_asked_again(made: Path, tmp_path: Path) -> None:  # noqa: F811
    # Runs before this change wrote a failed request as a drop ("backend error: ..."): retried now.
    out = tmp_path / "verified"
    with LoopbackModelServer() as server:
        assert _verify(made, out, server.base_url, "--limit", "4").exit_code == 0
    lines = (out / RECORDS).read_text().splitlines()
    old = {**json.loads(lines[0]), "kept": False, "reason": "backend error: HTTP 500"}
    old.pop("error")
    (out / RECORDS).write_text("\n".join([json.dumps(old), *lines[1:]]) + "\n")
    with LoopbackModelServer() as server:
        assert _verify(made, out, server.base_url, "--limit", "4").exit_code == 0
        assert server.good == 0  # asked again, answered from the response cache
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["from_cache"] == 1 and manifest["answered_now"] == 1


@pytest.mark.timeout(120)
def test_paraphrase_against_500s_then_a_rerun(made: Path, tmp_path: Path) -> None:  # noqa: F811
    from karma.qa.paraphrase import MANIFEST as PARAPHRASED
    from karma.qa.paraphrase import RECORDS as REWRITES

    out = tmp_path / "paraphrased"

    def rewrite(body: dict) -> str:
        return "In other words: " + body["messages"][-1]["content"].split("Question: ", 1)[1]

    command = ["qa", "paraphrase", str(made), "--out", str(out), "--limit", "8", "--allow-bias",
               "--max-error-rate", "1"]  # fmt: skip
    with LoopbackModelServer(reply=rewrite, fail_after=3) as server:
        first = runner.invoke(app, [*command, *_opts(server.base_url)])
    assert first.exit_code == 1 and "5 of 8 questions have no verdict" in first.output, first.output
    assert not (out / PARAPHRASED).exists() and not list(out.glob("*_qa.json"))
    with LoopbackModelServer(reply=rewrite) as server:
        again = runner.invoke(app, [*command, *_opts(server.base_url)])
        assert again.exit_code == 0, again.output
        assert server.good == 5
    manifest = json.loads((out / PARAPHRASED).read_text())
    assert manifest["answered_now"] == 5 and manifest["from_cache"] == 0  # the 3 answered are kept
    assert len({r["question_id"] for r in _lines(out / REWRITES)}) == 8


@pytest.mark.timeout(120)
def test_a_second_run_on_the_same_out_is_refused(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "verified"
    with LoopbackModelServer(mode="hang") as server:
        argv = [sys.executable, "-m", "karma.cli.main", "qa", "verify", str(made), "--out", str(out),
                *_opts(server.base_url, timeout_s=60), "--limit", "4"]  # fmt: skip
        first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            lock = out / ".karma.lock"
            while time.monotonic() < deadline and not (lock.is_file() and lock.read_text().strip()):
                time.sleep(0.05)
            assert first.poll() is None, "the first run ended before the second started"
            second = _verify(made, out, server.base_url, "--limit", "4")
            assert second.exit_code == 2, second.output
            assert f"in use by another karma qa verify, pid {first.pid}" in second.output
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
    assert not (out / RECORDS).is_file() or (out / RECORDS).read_text() == ""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", ["dead port", "hang"])
def test_paraphrase_against_a_dead_port_and_a_hang(made: Path, tmp_path: Path, fault: str) -> None:  # noqa: F811
    from karma.qa.paraphrase import MANIFEST as PARAPHRASED
    from karma.qa.paraphrase import RECORDS as REWRITES

    out = tmp_path / "paraphrased"
    command = ["qa", "paraphrase", str(made), "--out", str(out), "--limit", "3", "--allow-bias",
               "--max-error-rate", "1"]  # fmt: skip
    with LoopbackModelServer(mode="hang") as hanging:
        url = dead_port_url() if fault == "dead port" else hanging.base_url
        first = runner.invoke(app, [*command, *_opts(url, timeout_s=0.5)])
    assert first.exit_code == 1 and "3 of 3 questions have no verdict" in first.output, first.output
    assert all(r["error"] for r in _lines(out / REWRITES)) and not (out / PARAPHRASED).exists()
    with LoopbackModelServer(reply=lambda body: "How does the music change?") as healthy:
        again = runner.invoke(app, [*command, *_opts(healthy.base_url)])
        assert again.exit_code == 0, again.output
        assert healthy.good == 3
    assert json.loads((out / PARAPHRASED).read_text())["questions"] > 3
