"""The vllm backend's batch logic, through a test double at the engine boundary.

vLLM cannot start an engine without a GPU (and is an optional extra not installed on CPU machines),
so ``VllmEngineTestDouble`` stands in for ``vllm.LLM`` exactly at its ``chat`` method. What is tested
for real: message conversion, per-request sampling settings including structured choice, ordering,
isolation of a failing request, and the clear error when vLLM is missing.
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from pipelines.backends import ChatMessage, ChatRequest, ContentPart, get_backend
from pipelines.backends.vllm_engine import VllmBackend, sampling_settings

HAVE_VLLM = importlib.util.find_spec("vllm") is not None


class VllmEngineTestDouble:
    """Stands in for ``vllm.LLM``: answers each conversation with its own first choice (or "echo:N"),
    refuses conversations mentioning ``BROKEN``, and records every call."""

    def __init__(self):
        self.calls: list[tuple[list, list, dict]] = []

    def chat(self, conversations, sampling_params, use_tqdm=True, **kwargs):
        self.calls.append((conversations, sampling_params, kwargs))
        outputs = []
        for conversation, params in zip(conversations, sampling_params, strict=True):
            if "BROKEN" in str(conversation):
                raise RuntimeError("video file not found")
            text = params["choice"][0] if "choice" in params else f"echo:{len(conversation)}"
            token_ids = list(range(min(params["max_tokens"], 3)))
            outputs.append(
                SimpleNamespace(
                    prompt_token_ids=[1] * 7,
                    outputs=[SimpleNamespace(text=text, token_ids=token_ids, finish_reason="stop")],
                )
            )
        return outputs


def _backend(engine) -> VllmBackend:
    backend = get_backend(
        "vllm",
        model="Qwen/Qwen2.5-Omni-7B",
        engine=engine,
        sampling_params_factory=dict,
        chat_kwargs={"mm_processor_kwargs": {"use_audio_in_video": True}},
        max_model_len=8192,
    )
    assert isinstance(backend, VllmBackend)
    return backend


def test_batch_goes_to_one_chat_call_with_structured_choice():
    engine = VllmEngineTestDouble()
    video = ChatMessage(
        role="user",
        content=[
            ContentPart(type="video_url", url="file:///c/scene_002.mp4"),
            ContentPart(type="text", text="Q?"),
        ],
    )
    requests = [
        ChatRequest(messages=[video], choices=["b", "a"], max_tokens=4, seed=3),
        ChatRequest(
            messages=[ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u")]
        ),
    ]
    first, second = _backend(engine).generate(requests)
    assert (first.text, second.text) == ("b", "echo:2")
    assert first.meta["constrained"] is True and second.meta["constrained"] is False
    assert first.prompt_tokens == 7 and first.completion_tokens == 3
    (conversations, params, kwargs) = engine.calls[0]
    assert len(engine.calls) == 1
    assert conversations[0][0]["content"][0] == {
        "type": "video_url",
        "video_url": {"url": "file:///c/scene_002.mp4"},
    }
    assert params[0] == {"max_tokens": 4, "temperature": 0.0, "seed": 3, "choice": ["b", "a"]}
    assert kwargs == {"mm_processor_kwargs": {"use_audio_in_video": True}}


def test_a_failing_request_fails_alone():
    engine = VllmEngineTestDouble()
    requests = [
        ChatRequest(messages=[ChatMessage(role="user", content=t)]) for t in ("ok", "BROKEN", "ok too")
    ]
    results = _backend(engine).generate(requests)
    assert [r.error is None for r in results] == [True, False, True]
    assert "video file not found" in (results[1].error or "")
    assert len(engine.calls) == 1 + 3  # the batch, then one call per request


def test_choice_budget_fits_the_longest_choice():
    request = ChatRequest(messages=[], max_tokens=2, choices=["a", "it gets much louder"])
    assert sampling_settings(request)["max_tokens"] == len("it gets much louder") + 1


def test_settings_exclude_memory_knobs():
    backend = _backend(VllmEngineTestDouble())
    assert backend.settings["engine"] == {"enable_prefix_caching": True, "max_model_len": 8192}
    assert sampling_settings(ChatRequest(messages=[], temperature=-1)) == {
        "max_tokens": 64,
        "temperature": 0.0,
        "seed": 0,
    }


@pytest.mark.skipif(HAVE_VLLM, reason="vLLM is installed here; this checks the message when it is absent")
def test_missing_vllm_gives_clear_error():
    with pytest.raises(ImportError, match=r"karma-mv\[vllm\]"):
        get_backend("vllm", model="Qwen/Qwen2.5-Omni-7B")


@pytest.mark.skipif(not HAVE_VLLM, reason="vLLM is an optional GPU extra, not installed on this machine")
def test_real_sampling_params_carry_the_choice():
    from pipelines.backends.vllm_engine import vllm_sampling_params

    params = vllm_sampling_params({"max_tokens": 2, "temperature": 0.0, "seed": 0, "choice": ["a", "b"]})
    carried = getattr(params, "structured_outputs", None) or getattr(params, "guided_decoding", None)
    assert list(carried.choice) == ["a", "b"]


class VllmScoringTestDouble:
    """Stands in for ``vllm.LLM`` when scoring: a whitespace tokenizer with a two-line chat template,
    and ``generate`` answering each prompt token's log-probability as ``-token_id / 10`` (rank 1 for
    even ids). It records every prompt and sampling setting it was given."""

    def __init__(self):
        self.prompts: list[dict] = []
        self.params: list = []
        self.vocab: dict[str, int] = {}

    def get_tokenizer(self):
        engine = self

        class Tokenizer:
            def apply_chat_template(self, messages, add_generation_prompt, tokenize):
                assert add_generation_prompt and not tokenize
                return "".join(f"<{m['role']}> {m['content']} " for m in messages) + "<assistant>\n"

            def __call__(self, text, add_special_tokens):
                assert add_special_tokens is False
                return {
                    "input_ids": [engine.vocab.setdefault(w, len(engine.vocab) + 1) for w in text.split()]
                }

        return Tokenizer()

    def generate(self, prompts, params, use_tqdm=True):
        self.prompts.extend(prompts)
        self.params.extend(params)
        outputs = []
        for prompt in prompts:
            ids = prompt["prompt_token_ids"]
            logprobs = [None] + [
                {t: SimpleNamespace(logprob=-t / 10, rank=1 if t % 2 == 0 else 2)} for t in ids[1:]
            ]
            outputs.append(SimpleNamespace(prompt_logprobs=logprobs, outputs=[]))
        return outputs


def test_scoring_builds_one_prompt_per_option_and_sums_only_the_continuation():
    engine = VllmScoringTestDouble()
    backend = _backend(engine)
    request = ChatRequest(messages=[ChatMessage(role="user", content="which one")], choices=["x y", "z"])
    (scores,) = backend.score_continuations([request], [["x y", "z"]])
    context = [engine.vocab[w] for w in ("<user>", "which", "one", "<assistant>")]
    assert [p["prompt_token_ids"] for p in engine.prompts] == [
        [*context, engine.vocab["x"], engine.vocab["y"]],
        [*context, engine.vocab["z"]],
    ]
    assert all(p == {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1} for p in engine.params)
    x, y, z = engine.vocab["x"], engine.vocab["y"], engine.vocab["z"]
    assert (
        scores[0].logprob == pytest.approx(-(x + y) / 10) and scores[0].tokens == 2 and scores[0].chars == 3
    )
    assert scores[1].logprob == pytest.approx(-z / 10) and scores[1].greedy == (z % 2 == 0)


def test_prefix_caching_is_on_by_default_and_recorded_in_the_settings():
    backend = _backend(VllmEngineTestDouble())
    assert backend.settings["engine"]["enable_prefix_caching"] is True
    off = get_backend(
        "vllm",
        model="m",
        engine=VllmEngineTestDouble(),
        sampling_params_factory=dict,
        enable_prefix_caching=False,
    )
    assert off.settings["engine"]["enable_prefix_caching"] is False
