"""The VLM pipeline through a tiny, randomly initialised Qwen2.5-Omni thinker built offline.

Real parts: the thinker architecture from transformers (``Qwen2_5OmniThinkerConfig``, tiny sizes,
random weights: no checkpoint is reachable offline; built by ``pipelines.tiny_models``), Whisper log-mel features, a real byte-level BPE
tokenizer with the Omni special tokens, real mp4 clips, decord frames and PyAV audio. The answers
are noise; the test is that the request's clips reach the model as the right tensors and that
generation runs through the vision and audio towers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.backends.omni import SPECIAL_TOKENS, QwenOmniBackend, audio_token_count, omni_conversation
from pipelines.media import FrameSampling, sample_frames
from pipelines.tiny_models import tiny_omni_thinker, tower_calls
from pipelines.vlm import VlmPipeline

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_thinker():
    return tiny_omni_thinker()


def _backend(tiny_thinker, **options) -> QwenOmniBackend:
    model, tokenizer, features = tiny_thinker
    return QwenOmniBackend(
        model=model, tokenizer=tokenizer, feature_extractor=features, max_side=112, **options
    )


def test_predictive_clips_reach_the_thinker_with_silenced_audio_and_same_frames(
    tiny_thinker, clips_dir: Path, tmp_path: Path, transition_factory
):
    backend = _backend(tiny_thinker, num_frames=4)
    pipeline = VlmPipeline(backend, clips_dir=clips_dir, cache_dir=tmp_path, max_tokens=6)
    prepared = pipeline.prepare(transition_factory("predictive"), 0)
    built = backend.builder.build(prepared.request)
    past, current = built["clips"]
    inputs = built["inputs"]

    # audio: the past clip plays its tone, the current (masked) clip is silent but present
    assert np.sqrt(np.mean(past["audio"] ** 2)) > 0.1
    assert current["audio"].size == 16_000 and np.abs(current["audio"]).max() == 0.0
    # frames: the masked clip's sampled frames equal the original current clip's
    sampling = FrameSampling(num_frames=4, max_side=112)
    original = sample_frames(clips_dir / "vidV" / "scene_002.mp4", sampling).frames
    assert np.array_equal(current["frames"].frames, original)
    assert not np.array_equal(past["frames"].frames, original)

    # the placeholders match what the towers will emit
    ids = inputs["input_ids"][0]
    video_id = backend.tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS["video"])
    audio_id = backend.tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS["audio"])
    grids = inputs["video_grid_thw"]
    assert int((ids == video_id).sum()) == int((grids.prod(dim=1) // 4).sum())
    lengths = inputs["feature_attention_mask"].sum(dim=1).tolist()
    assert int((ids == audio_id).sum()) == sum(audio_token_count(int(n)) for n in lengths)
    assert inputs["pixel_values_videos"].shape == (int(grids.prod(dim=1).sum()), 3 * 2 * 14 * 14)
    assert inputs["use_audio_in_video"] is True

    with tower_calls(tiny_thinker[0]) as seen:
        (record,) = pipeline.answer([prepared])
    assert record.error is None, record.error
    assert record.completion_tokens and record.completion_tokens > 0
    assert record.prompt_tokens == len(ids)
    assert record.parse_status in {"ok", "fallback", "none"}
    assert seen["visual"] >= 1 and seen["audio_tower"] >= 1


def test_clip_without_audio_needs_use_audio_in_video_off(
    tiny_thinker, clips_dir: Path, tmp_path: Path, transition_factory
):
    transition = transition_factory("predictive")
    with_audio = _backend(tiny_thinker, num_frames=2)
    removed = VlmPipeline(
        with_audio, clips_dir=clips_dir, cache_dir=tmp_path, predictive_audio="remove", max_tokens=3
    )
    (failed,) = removed.run([(transition, 0, None)])
    assert (
        failed.letter is None and failed.parse_status == "none" and "no audio track" in (failed.error or "")
    )

    video_only = _backend(tiny_thinker, num_frames=2, use_audio_in_video=False)
    pipeline = VlmPipeline(
        video_only, clips_dir=clips_dir, cache_dir=tmp_path, predictive_audio="remove", max_tokens=3
    )
    prepared = pipeline.prepare(transition, 0)
    built = video_only.builder.build(prepared.request)
    inputs = built["inputs"]
    # the past clip's audio part is its own audio item; the masked clip (track removed) has none
    assert inputs["input_features"].shape[0] == 1 and len(built["audios"]) == 1
    assert built["prompt"].count(SPECIAL_TOKENS["audio_bos"]) == 1
    (record,) = pipeline.answer([prepared])
    assert record.error is None and record.completion_tokens


def test_conversation_in_qwen_omni_utils_form(clips_dir: Path, tmp_path: Path, transition_factory):
    prepared = VlmPipeline(clips_dir=clips_dir, cache_dir=tmp_path).prepare(
        transition_factory("evidential"), 0
    )
    system, user = omni_conversation(prepared.request)
    assert system["role"] == "system" and system["content"][0]["type"] == "text"
    kinds = [part["type"] for part in user["content"]]
    assert kinds == ["video", "audio", "video", "audio", "text"]
    assert user["content"][0]["video"] == str((clips_dir / "vidV" / "scene_001.mp4").resolve())
