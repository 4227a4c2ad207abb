"""Issue 38's configuration errors, for the passes that ask a model outside ``karma eval``: ``karma qa
verify``, ``karma qa paraphrase`` and the HarmonySet-OE judge (``python -m karma.tasks.judge``).

Each must be refused before the first request: exit 2, one ``error:`` line naming the option, no
``--out`` folder (for the judge, which writes into an answered run: no judge file and no lock in it),
and not one request at the server. The server is :class:`tests.karma.loopback.LoopbackModelServer`,
a boundary double (a real HTTP server on 127.0.0.1) that counts every POST it receives.

The errors, and where they apply (``tests/karma/test_config_preflight.py`` holds the ``karma eval``
cases):

* ``base_url=not-a-url``, ``timeout_s=-1``, ``max_concurrency=0`` (openai backend options);
* ``score_template=`` naming a missing file (checked for every openai run, so here too);
* a missing llama.cpp ``model_path`` and a missing transformers ``model`` folder (model files);
* ``device=cuda`` of the transformers backend on a machine where torch sees no GPU (skipped where
  torch sees one).

Not applicable to these passes: loglik over a server without logprobs (verify, paraphrase and the
judge generate text, with no ``--answer-mode``: verify's letter is a constrained generation, not a
scored option) and ``karma eval --device`` (the passes retrieve nothing, so have no ``--device``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.run.jsonl import JsonlAppender
from karma.tasks.harmonyset_oe import OeSample
from karma.tasks.judge import main as judge_main
from tests.karma.loopback import MODEL, LoopbackModelServer
from tests.karma.test_config_preflight import _cuda_available
from tests.karma.test_qa_verify import made  # noqa: F401 (fixture: a karma qa make folder)

runner = CliRunner()


@pytest.fixture(scope="module")
def server():
    with LoopbackModelServer() as double:
        yield double


def _cases(url: str, tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (backend arguments, a phrase the one error line must hold: the option it names)."""
    openai = ["--backend", "openai", "--backend-opt", f"model={MODEL}"]
    at = ["--backend-opt", f"base_url={url}"]
    cases = {
        "base_url=not-a-url": ([*openai, "--backend-opt", "base_url=not-a-url"], "must be an http"),
        "timeout_s=-1": ([*openai, *at, "--backend-opt", "timeout_s=-1"], "timeout_s of the openai backend"),
        "max_concurrency=0": ([*openai, *at, "--backend-opt", "max_concurrency=0"], "max_concurrency"),
        "score_template missing": (
            [*openai, *at, "--backend-opt", f"score_template={tmp_path / 'nope.jinja'}"],
            "score_template=",
        ),
        "llamacpp model_path missing": (
            ["--backend", "llamacpp", "--backend-opt", f"model_path={tmp_path / 'missing.gguf'}"],
            "model_path=",
        ),
        "transformers model folder missing": (
            ["--backend", "transformers", "--backend-opt", f"model={tmp_path / 'no-model'}"],
            "model=",
        ),
    }
    if not _cuda_available():
        cases["transformers device=cuda on a CPU machine"] = (
            ["--backend", "transformers", "--backend-opt", "device=cuda"],
            "device=",
        )
    return cases


def _one_error_line(output: str, phrase: str, name: str) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.lstrip().startswith("error")]
    assert len(errors) == 1 and phrase in errors[0], (name, output)
    assert "Traceback" not in output, (name, output)


def _requests(server: LoopbackModelServer) -> int:
    return server.good + server.failed


@pytest.mark.parametrize("command", ["verify", "paraphrase"])
@pytest.mark.timeout(300)
def test_qa_passes_refuse_each_configuration_error_before_the_first_request(
    command: str,
    made: Path,  # noqa: F811
    server: LoopbackModelServer,
    tmp_path: Path,
) -> None:
    before = _requests(server)
    cases = _cases(server.base_url, tmp_path)
    for name, (arguments, phrase) in cases.items():
        out = tmp_path / f"{command}-{abs(hash(name))}"
        result = runner.invoke(app, ["qa", command, str(made), "--out", str(out), "--limit", "2", *arguments])
        assert result.exit_code == 2, (name, result.output)
        _one_error_line(result.output, phrase, name)
        assert not out.exists(), f"{name}: left {sorted(p.name for p in out.iterdir())}"
    assert _requests(server) == before  # not one request reached the server


def _answered_run(tmp_path: Path) -> Path:
    run = tmp_path / "oe-run"
    run.mkdir()
    with JsonlAppender(run / "samples.jsonl") as writer:
        for i in range(2):
            writer.append(
                OeSample(
                    pair_id=f"SYN-HS-{i:04d}",
                    question="Does the background music fit this video?",
                    reference=f"SYNTHETIC reference {i}: the beat matches the cuts.",
                    raw_completion=f"SYNTHETIC answer {i}: the music fits.",
                )
            )
    return run


@pytest.mark.timeout(300)
def test_the_judge_refuses_each_configuration_error_before_the_first_request(
    server: LoopbackModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _answered_run(tmp_path)
    samples = (run / "samples.jsonl").read_bytes()
    before = _requests(server)
    for name, (arguments, phrase) in _cases(server.base_url, tmp_path).items():
        assert judge_main([str(run), *arguments]) == 2, name
        _one_error_line(capsys.readouterr().out, phrase, name)
        assert sorted(p.name for p in run.iterdir()) == ["samples.jsonl"], name  # no judgments, no lock
    assert (run / "samples.jsonl").read_bytes() == samples
    assert _requests(server) == before


def test_a_good_judge_configuration_still_asks_the_server(tmp_path: Path) -> None:
    """The refusals above are not a judge that refuses everything."""
    run = _answered_run(tmp_path)
    scores = '{"R&S": 7, "T": 5, "E": 8, "C": 3}'
    with LoopbackModelServer(reply=lambda body: scores) as healthy:
        options = [f"--backend-opt={key}={value}" for key, value in healthy.options().items()]
        assert judge_main([str(run), "--backend", "openai", *options]) == 0
        assert healthy.good == 2
    assert json.loads((run / "judge_results.json").read_text())["n_judged"] == 2
