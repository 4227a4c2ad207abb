"""The VLM pipeline through a tiny, randomly initialised Qwen2.5-Omni thinker built offline.

Real parts: the thinker architecture from transformers (``Qwen2_5OmniThinkerConfig``, tiny sizes,
random weights: no checkpoint is reachable offline), Whisper log-mel features, a real byte-level BPE
tokenizer with the Omni special tokens, real mp4 clips, decord frames and PyAV audio. The answers
are noise; the test is that the request's clips reach the model as the right tensors and that
generation runs through the vision and audio towers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.media import FrameSampling, sample_frames
from pipelines.omni import SPECIAL_TOKENS, QwenOmniBackend, audio_token_count, omni_conversation
from pipelines.vlm import VlmPipeline

pytestmark = pytest.mark.slow


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([*SPECIAL_TOKENS.values(), "<|endoftext|>"])
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


@pytest.fixture(scope="module")
def tiny_thinker():
    import torch
    from transformers import (
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    tokenizer = _tokenizer()
    ids = {name: tokenizer.convert_tokens_to_ids(tok) for name, tok in SPECIAL_TOKENS.items()}
    config = Qwen2_5OmniThinkerConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
        },
        vision_config={
            "depth": 1,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "out_hidden_size": 64,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 56,
            "fullatt_block_indexes": [0],
        },
        audio_config={
            "d_model": 32,
            "encoder_layers": 1,
            "encoder_attention_heads": 2,
            "encoder_ffn_dim": 64,
            "output_dim": 64,
            "num_mel_bins": 128,
            "max_source_positions": 1500,
            "n_window": 100,
        },
        audio_token_index=ids["audio"],
        image_token_index=ids["image"],
        video_token_index=ids["video"],
        audio_start_token_id=ids["audio_bos"],
        audio_end_token_id=ids["audio_eos"],
    )
    config.vision_start_token_id = ids["vision_bos"]
    config.vision_end_token_id = ids["vision_eos"]
    torch.manual_seed(0)
    model = Qwen2_5OmniThinkerForConditionalGeneration(config)
    return model, tokenizer, WhisperFeatureExtractor(feature_size=128, sampling_rate=16_000)


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

    model = tiny_thinker[0]
    seen = {"visual": 0, "audio_tower": 0}
    hooks = [
        # the towers sit on the thinker (transformers <= 5.20) or on its inner model (later)
        (getattr(model, name, None) or getattr(model.model, name)).register_forward_hook(
            lambda *_, name=name: seen.__setitem__(name, seen[name] + 1)
        )
        for name in seen
    ]
    try:
        (record,) = pipeline.answer([prepared])
    finally:
        for hook in hooks:
            hook.remove()
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
