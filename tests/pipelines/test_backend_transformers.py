"""The transformers backend on the real SmolLM2-135M weights, converted offline from the packaged GGUF."""

from __future__ import annotations

import pytest

from pipelines.backends import ChatMessage, ChatRequest, ContentPart, get_backend
from pipelines.backends.hf_convert import converted_gguf_dir
from pipelines.backends.hf_transformers import TransformersBackend

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hf() -> TransformersBackend:
    # Converted once into karma's cache (.cache/karma/hf-from-gguf in the checkout), reused afterwards.
    backend = get_backend("transformers")
    assert isinstance(backend, TransformersBackend)
    yield backend
    backend.close()


def _ask(text: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=text)], max_tokens=kw.pop("max_tokens", 6), **kw
    )


def test_conversion_is_cached(hf, smollm2_gguf):
    folder = converted_gguf_dir(smollm2_gguf)
    assert folder == hf.folder
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert converted_gguf_dir(smollm2_gguf) == folder  # no second conversion
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    assert hf.model_id.startswith(smollm2_gguf.name + "@sha256:")


def test_free_generation_is_greedy_and_deterministic(hf):
    first, second = hf.generate([_ask("Name one musical instrument."), _ask("Name one musical instrument.")])
    assert first.error is None and first.text.strip()
    assert first.text == second.text
    assert 0 < (first.completion_tokens or 0) <= 6
    assert first.prompt_tokens and first.prompt_tokens > 5


def test_choices_restrict_output_to_one_choice(hf):
    question = "Does music get louder or quieter when the scene turns dark? Answer with one letter: a or b."
    letters, phrases = hf.generate(
        [
            _ask(question, choices=["a", "b", "c", "d"]),
            _ask(question, choices=["it gets much louder", "it gets quieter", "no change"], max_tokens=1),
        ]
    )
    assert letters.error is None and letters.text in {"a", "b", "c", "d"}
    assert phrases.error is None and phrases.text in {"it gets much louder", "it gets quieter", "no change"}
    assert phrases.finish_reason == "stop"


def test_media_part_is_an_error_not_a_crash(hf):
    video = ChatMessage(role="user", content=[ContentPart(type="video_url", url="file:///x.mp4")])
    (done,) = hf.generate([ChatRequest(messages=[video])])
    assert done.error is not None and "text-only" in done.error
