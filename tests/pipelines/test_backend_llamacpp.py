"""The in-process llama.cpp backend on the real packaged SmolLM2-135M-Instruct GGUF."""

from __future__ import annotations

import pytest

from pipelines.backends import ChatMessage, ChatRequest, ContentPart, get_backend
from pipelines.backends._common import gbnf_choice_grammar
from pipelines.backends.llamacpp import LlamaCppBackend

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llama() -> LlamaCppBackend:
    backend = get_backend("llamacpp", n_ctx=1024)
    assert isinstance(backend, LlamaCppBackend)
    yield backend
    backend.close()


def _ask(text: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=text)], max_tokens=kw.pop("max_tokens", 8), **kw
    )


QUESTION = (
    "The picture cuts from a bright beach to a dark street at night. How does the music change?\n"
    "a) it gets louder\nb) it gets quieter\nc) it changes key to minor\nd) nothing changes\n"
    "Reply with the letter."
)


def test_constrained_letter_is_exactly_one_choice(llama):
    (done,) = llama.generate([_ask(QUESTION, choices=["a", "b", "c", "d"])])
    assert done.error is None
    assert done.text in {"a", "b", "c", "d"}
    assert done.meta["constrained"] is True


def test_constrained_multi_token_choices_and_escaping(llama):
    # Multi-token strings, one with a quote and a backslash: the grammar must admit them verbatim.
    choices = ['the music gets "louder"', "the music gets quieter", r"key change \ minor"]
    (done,) = llama.generate([_ask(QUESTION, choices=choices, max_tokens=2)])
    assert done.error is None
    assert done.text in choices  # max_tokens grows so the longest choice can finish


def test_greedy_is_deterministic_and_reports_usage(llama):
    first, second = llama.generate(
        [_ask("Name one musical instrument."), _ask("Name one musical instrument.")]
    )
    assert first.error is None and first.text.strip()
    assert first.text == second.text
    assert first.prompt_tokens and first.prompt_tokens > 5
    assert 0 < (first.completion_tokens or 0) <= 8
    assert first.finish_reason in {"stop", "length"}


def test_media_part_fails_that_request_only(llama):
    video = ChatMessage(role="user", content=[ContentPart(type="video_url", url="file:///x.mp4")])
    bad, good = llama.generate([ChatRequest(messages=[video]), _ask("Say hi.", choices=["hi", "hello"])])
    assert bad.error is not None and "text-only" in bad.error and bad.finish_reason == "error"
    assert good.error is None and good.text in {"hi", "hello"}


def test_model_id_names_file_and_hash(llama):
    assert llama.model_id.endswith(".gguf@sha256:" + llama.model_id.split(":")[-1])
    assert len(llama.model_id.split(":")[-1]) == 16
    assert llama.settings["backend"] == "llamacpp"


def test_choice_grammar_text():
    assert gbnf_choice_grammar(["a", 'b"c', "a"]) == 'root ::= "a" | "b\\"c"\n'
    with pytest.raises(ValueError):
        gbnf_choice_grammar([])


def test_unknown_backend_name_is_rejected():
    with pytest.raises(ValueError, match="unknown backend 'gpt'"):
        get_backend("gpt")
