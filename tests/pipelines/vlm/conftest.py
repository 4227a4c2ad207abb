"""Real mp4 scene clips for the VLM tests, written with PyAV (``pipelines.tiny_models.write_clip``):
coloured frames and a stereo tone."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.tiny_models import tiny_transition, write_clip

__all__ = ["make_transition", "write_clip"]


@pytest.fixture(scope="session")
def clips_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<clips>/vidV/scene_001.mp4`` and ``scene_002.mp4`` (different tones and tints)."""
    root = tmp_path_factory.mktemp("clips")
    write_clip(root / "vidV" / "scene_001.mp4", tone_hz=330.0, shade=40)
    write_clip(root / "vidV" / "scene_002.mp4", tone_hz=660.0, shade=160)
    return root


make_transition = tiny_transition
"""A transition of ``vidV`` over the two clips with one question of the given type."""


@pytest.fixture
def transition_factory():
    return make_transition
