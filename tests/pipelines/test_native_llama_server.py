"""llama.cpp's C++ llama-server (parallel slots): locating the binary, its command line, and, when
scripts/build_llama_server.sh has built it on this machine, a real server answering concurrent requests."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from pipelines.backends import get_backend
from pipelines.backends.base import ChatMessage, ChatRequest
from pipelines.backends.llamacpp_server import (
    LLAMA_SERVER_ENV,
    NativeLlamaServer,
    find_llama_server,
)


def test_missing_binary_says_how_to_build_it(monkeypatch, tmp_path, smollm2_gguf):
    monkeypatch.setenv(LLAMA_SERVER_ENV, str(tmp_path / "no-such-llama-server"))
    assert find_llama_server() is None
    with pytest.raises(FileNotFoundError, match=r"build_llama_server\.sh"):
        NativeLlamaServer(smollm2_gguf)


def test_command_binds_loopback_and_sizes_the_context_per_slot(tmp_path, smollm2_gguf):
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    server = NativeLlamaServer(smollm2_gguf, n_ctx=1024, n_threads=2, parallel=3, binary=binary)
    command = server.command()
    assert command[0] == str(binary)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--parallel") + 1] == "3"
    assert command[command.index("--ctx-size") + 1] == str(3 * 1024)
    assert command[command.index("--alias") + 1] == server.model
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    with pytest.raises(ValueError, match="parallel"):
        NativeLlamaServer(smollm2_gguf, parallel=0, binary=binary)


@pytest.mark.server
@pytest.mark.slow
def test_built_server_answers_concurrent_requests(smollm2_gguf):
    if find_llama_server() is None:
        pytest.skip("llama-server not built on this machine (scripts/build_llama_server.sh)")
    with NativeLlamaServer(smollm2_gguf, n_ctx=512, parallel=2, n_threads=2) as server:
        listed = httpx.get(f"{server.base_url}/models", timeout=10).json()
        assert server.model in [m["id"] for m in listed["data"]]
        backend = get_backend("openai", base_url=server.base_url, model=server.model, max_concurrency=2)
        requests = [
            ChatRequest(
                messages=[
                    ChatMessage(role="user", content=f"Which letter comes after {letter}? Answer a-d.")
                ],
                max_tokens=4,
                choices=["a", "b", "c", "d"],
            )
            for letter in "abc"
        ]
        with ThreadPoolExecutor(max_workers=2) as pool:
            completions = list(pool.map(lambda r: backend.generate([r])[0], requests))
        backend.close()
    assert [c.error for c in completions] == [None, None, None]
    assert all(c.text.strip() in {"a", "b", "c", "d"} for c in completions)
    assert not server.running
