"""Bad configuration is found before the first request (issue 38): exit 2, one line, no run folder and
no empty lock left behind, and not one chat request sent.

Each case used to be found per request (retried, recorded as backend errors, exit 1 after 14-20 s,
a run folder holding an empty lock left behind). The server is
:class:`tests.karma.loopback.LoopbackModelServer`, a boundary double (a real HTTP server on
127.0.0.1, here one whose ``/v1/completions`` returns no logprobs); it counts the chat requests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from tests.karma.loopback import MODEL, LoopbackModelServer
from tests.karma.test_qa_verify import made  # noqa: F401 (fixture: a karma qa make folder)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"
runner = CliRunner()


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.fixture(scope="module")
def server():
    with LoopbackModelServer() as double:
        yield double


def _template(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jinja"
    path.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:")
    return path


def _cases(url: str, tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (eval arguments, a phrase the one-line error must hold)."""
    none = ["--retriever", "none"]
    openai = ["--backend", "openai", "--backend-opt", f"model={MODEL}", *none]
    cases = {
        "base_url=not-a-url": (
            [*openai, "--backend-opt", "base_url=not-a-url"],
            "must be an http:// or https:// URL",
        ),
        "timeout_s=-1": (
            [*openai, "--backend-opt", f"base_url={url}", "--backend-opt", "timeout_s=-1"],
            "timeout_s of the openai backend must be above 0",
        ),
        "loglik without logprobs": (
            [
                *openai,
                "--backend-opt",
                f"base_url={url}",
                "--answer-mode",
                "loglik",
                "--backend-opt",
                f"score_template={_template(tmp_path)}",
            ],
            "returns no logprobs",
        ),
        "score_template missing": (
            [
                *openai,
                "--backend-opt",
                f"base_url={url}",
                "--answer-mode",
                "loglik",
                "--backend-opt",
                f"score_template={tmp_path / 'nope.jinja'}",
            ],
            "no such file",
        ),
        "max_concurrency=0": (
            [*openai, "--backend-opt", f"base_url={url}", "--backend-opt", "max_concurrency=0"],
            "max_concurrency must be at least 1",
        ),
        "llamacpp model_path missing": (
            ["--backend", "llamacpp", "--backend-opt", f"model_path={tmp_path / 'missing.gguf'}", *none],
            "no such file or folder",
        ),
        "transformers model folder missing": (
            ["--backend", "transformers", "--backend-opt", f"model={tmp_path / 'no-model'}", *none],
            "no such file or folder",
        ),
    }
    if not _cuda_available():
        cases["--device cuda on a CPU machine"] = (
            [*openai, "--backend-opt", f"base_url={url}", "--retriever", "hybrid", "--device", "cuda"],
            "torch sees no CUDA device",
        )
        cases["transformers device=cuda on a CPU machine"] = (
            ["--backend", "transformers", "--backend-opt", "device=cuda", *none],
            "torch sees no CUDA device",
        )
    return cases


@pytest.mark.timeout(300)
def test_eval_refuses_bad_configuration_before_the_first_request(
    server: LoopbackModelServer, tmp_path: Path
) -> None:
    cases = _cases(server.base_url, tmp_path)
    assert len(cases) >= 7
    for name, (arguments, phrase) in cases.items():
        out = tmp_path / f"run-{abs(hash(name))}"
        result = runner.invoke(
            app, ["eval", "--data", str(SAMPLE), "--out", str(out), "--limit", "2", *arguments]
        )
        assert result.exit_code == 2, (name, result.output)
        assert phrase in result.output and "Traceback" not in result.output, (name, result.output)
        assert not out.exists(), f"{name}: left {sorted(p.name for p in out.iterdir())}"
    assert server.good == 0 and server.failed == 0  # not one chat request reached the server


def test_qa_verify_refuses_bad_configuration_before_its_folder_exists(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "verified"
    for option, phrase in (("base_url=not-a-url", "must be an http"), ("timeout_s=-1", "must be above 0")):
        result = runner.invoke(
            app,
            [
                "qa",
                "verify",
                str(made),
                "--out",
                str(out),
                "--backend",
                "openai",
                "--backend-opt",
                option,
                "--backend-opt",
                f"model={MODEL}",
            ],
        )
        assert result.exit_code == 2 and phrase in result.output, result.output
        assert not out.exists()


def test_a_good_configuration_still_runs(server: LoopbackModelServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    before = server.good
    result = runner.invoke(
        app,
        [
            "eval",
            "--data",
            str(SAMPLE),
            "--out",
            str(out),
            "--limit",
            "2",
            "--backend",
            "openai",
            "--backend-opt",
            f"base_url={server.base_url}",
            "--backend-opt",
            f"model={MODEL}",
            "--retriever",
            "none",
            "--ckg",
            "off",
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    assert server.good - before == 2 and (out / "samples.jsonl").is_file()


def test_task_runs_refuse_bad_configuration_before_their_folder_exists(
    server: LoopbackModelServer, tmp_path: Path
) -> None:
    wildscore = REPO / "tests" / "tasks" / "fixtures" / "wildscore"
    before = server.good
    for option, phrase in (
        ("base_url=not-a-url", "must be an http"),
        ("timeout_s=-1", "must be above 0"),
        (f"score_template={tmp_path / 'none.jinja'}", "no such file"),
    ):
        out = tmp_path / "task-run"
        result = runner.invoke(
            app,
            [
                "eval",
                "--task",
                "wildscore",
                "--data",
                str(wildscore),
                "--out",
                str(out),
                "--no-progress",
                "--arms",
                "text_only",
                "--backend",
                "openai",
                "--backend-opt",
                f"base_url={server.base_url}",
                "--backend-opt",
                f"model={MODEL}",
                "--backend-opt",
                option,
            ],
        )
        assert result.exit_code == 2 and phrase in result.output, result.output
        assert not out.exists()
    assert server.good == before
