"""Shared fixtures of the task tests: the HarmonySet fixture with real mp4 clips (video + audio)."""

from __future__ import annotations

import shutil
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
