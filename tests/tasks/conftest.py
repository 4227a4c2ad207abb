"""Shared fixtures of the task tests: the HarmonySet fixture with real mp4 clips (video + audio), and
the chat completion body a scripted OpenAI-compatible server answers with."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def harmonyset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HarmonySet_Test.json fixture beside ``videos/SYN0000000{1,2}.mp4`` (1 s, tone + frames)."""
    from tests.pipelines.vlm.conftest import write_clip  # the VLM tests' PyAV clip writer

    root = tmp_path_factory.mktemp("harmonyset")
    shutil.copy(FIXTURES / "harmonyset" / "HarmonySet_Test.json", root)
    write_clip(root / "videos" / "SYN00000001.mp4", tone_hz=330.0, shade=40)
    write_clip(root / "videos" / "SYN00000002.mp4", tone_hz=660.0, shade=160)
    return root


def chat_reply(text: str, model: str) -> dict:
    """An OpenAI chat completion body answering ``text`` as ``model`` (for ``scripted_server`` scripts)."""
    return {
        "id": "x", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }  # fmt: skip
