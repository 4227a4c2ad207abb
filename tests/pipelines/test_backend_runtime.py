"""What a run's config records about how the model ran: device, dtype and batch size read from the
live model (``runtime``, never a cache key), and the prompt size of scored answers."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.backends.base import Backend, Completion
from pipelines.backends.hf_transformers import live_weights
from pipelines.loglik import ContinuationScore, ScoringBackend

OPTIONS = ["the music gets louder", "the music gets quieter", "it changes key", "nothing changes"]
REQUEST = ChatRequest(
    messages=[
        ChatMessage(role="system", content="Reply with the single best option."),
        ChatMessage(role="user", content="The picture turns dark. How does the music change?"),
    ],
    choices=OPTIONS,
)


def test_live_weights_reads_the_majority_dtype_and_the_device() -> None:
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 2)).to(torch.bfloat16)
    model[1].to(torch.float32)  # a small module kept in float32 does not hide a bf16 model
    assert live_weights(model) == {"device": "cpu", "dtype": "bfloat16"}
    assert live_weights(torch.nn.Sequential()) == {"device": None, "dtype": None}


class _Scorer(Backend):
    name = "fake"

    def __init__(self, prompt_tokens: int | None) -> None:
        self.prompt_tokens = prompt_tokens

    @property
    def model_id(self) -> str:
        return "fake"

    def generate(self, requests):  # type: ignore[no-untyped-def]
        raise AssertionError("scored, not generated")

    def score_continuations(self, requests, continuations):  # type: ignore[no-untyped-def]
        return [
            [
                ContinuationScore(logprob=-float(i), tokens=1, chars=1, prompt_tokens=self.prompt_tokens)
                for i, _ in enumerate(options)
            ]
            for options in continuations
        ]


def test_scored_completion_carries_the_prompt_tokens_not_the_stored_scores() -> None:
    (completion,) = ScoringBackend(_Scorer(42), "letter").generate([REQUEST])
    assert isinstance(completion, Completion) and completion.prompt_tokens == 42
    assert all("prompt_tokens" not in score for score in completion.meta["scores"].values())
    (unknown,) = ScoringBackend(_Scorer(None), "letter").generate([REQUEST])
    assert unknown.prompt_tokens is None


def test_vllm_runtime_reads_the_engine_config() -> None:
    import torch

    from pipelines.backends.vllm_engine import VllmBackend

    config = SimpleNamespace(
        device_config=SimpleNamespace(device=torch.device("cuda")),
        model_config=SimpleNamespace(dtype=torch.bfloat16),
        scheduler_config=SimpleNamespace(max_num_seqs=256),
        parallel_config=SimpleNamespace(tensor_parallel_size=1),
    )
    engine = SimpleNamespace(llm_engine=SimpleNamespace(vllm_config=config))
    backend = VllmBackend("some/model", engine=engine, sampling_params_factory=dict)
    assert backend.runtime == {
        "device": "cuda",
        "dtype": "bfloat16",
        "max_num_seqs": 256,
        "tensor_parallel_size": 1,
        "batch_cap": None,
    }
    assert "device" not in backend.settings
    bare = VllmBackend(
        "some/model", engine=SimpleNamespace(), sampling_params_factory=dict, input_mode="omni"
    )
    assert bare.runtime == {"batch_cap": 256}


@pytest.mark.slow
def test_transformers_runtime_is_read_from_the_live_model() -> None:
    import torch

    backend = get_backend("transformers", device="cpu")
    try:
        assert backend.settings["dtype"] == "float32"
        assert "device" not in backend.settings and "batch_size" not in backend.settings
        runtime = backend.runtime
        assert runtime["device"] == "cpu" and runtime["dtype"] == "float32" and runtime["batch_size"] == 1
        assert runtime["torch_threads"] >= 1
        settings = backend.settings
        backend.model.to(torch.bfloat16)  # what runs now, not what was asked
        assert backend.runtime["dtype"] == "bfloat16"
        assert backend.settings == settings  # a cache key does not move mid-run
    finally:
        backend.close()


@pytest.mark.slow
def test_llamacpp_scored_answer_records_its_prompt_tokens() -> None:
    backend = get_backend("llamacpp", n_ctx=1024)
    try:
        prompt = backend.chat_prompt(REQUEST)
        expected = len(backend._llm.tokenize(prompt.encode(), add_bos=False, special=True))
        (completion,) = ScoringBackend(backend, "loglik").generate([REQUEST])
        assert completion.error is None
        # The shared context: the chat prompt's tokens (less one where an option merges into its end).
        assert completion.prompt_tokens is not None and expected - 1 <= completion.prompt_tokens <= expected
        assert all("prompt_tokens" not in score for score in completion.meta["scores"].values())
    finally:
        backend.close()


@pytest.mark.slow
def test_qwen_omni_runtime_is_read_from_the_live_model() -> None:
    import torch

    from pipelines.backends.omni import QwenOmniBackend

    path = Path(__file__).parent / "vlm" / "test_vlm_omni_tiny.py"
    spec = importlib.util.spec_from_file_location("omni_tiny_for_runtime", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, tokenizer, features = module.tiny_thinker.__wrapped__()  # the tests' tiny random thinker
    backend = QwenOmniBackend(model=model, tokenizer=tokenizer, feature_extractor=features, batch_size=2)
    assert backend.runtime["device"] == "cpu" and backend.runtime["batch_size"] == 2
    assert backend.runtime["dtype"] == "float32"
    before = backend.settings
    backend.model.to(torch.bfloat16)
    assert backend.runtime["dtype"] == "bfloat16"
    assert backend.settings == before
