"""karma's Qwen2.5-Omni input builder against the official ``transformers.Qwen2_5OmniProcessor``.

Both are built from the same offline parts: the tiny thinker config of ``test_vlm_omni_tiny`` (patch
14, merge 2, temporal patch 2), its byte-level tokenizer with the Omni special tokens, a 128-bin
Whisper feature extractor, and the frames karma samples from real two-clip requests. The official
processor resizes, patches, extracts mel features and expands the placeholders itself; the token ids,
attention masks, grids and feature shapes must equal karma's. Pixel values are compared loosely
(OpenCV's and torchvision's bicubic resizes agree on 99 % of the values; see the assertion).

The processor's keyword for interleaving audio was renamed (``use_audio_in_video`` up to
transformers 5.24, ``load_audio_from_video`` from 5.25): ``processor_audio_kwargs`` picks the name.
The processor's video half needs torchvision (installed with the dev extra at vLLM's pairing).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pipelines.backends.omni import SPECIAL_TOKENS, OmniInputBuilder, OmniSettings, processor_audio_kwargs
from pipelines.media import FrameSampling
from pipelines.tiny_models import byte_tokenizer
from pipelines.vlm import VlmPipeline

pytestmark = pytest.mark.slow

MIN_PIXELS = 28 * 28 * 4
MAX_PIXELS = 28 * 28 * 64
NAMED_TOKENS = {
    "image_token": "image", "audio_token": "audio", "video_token": "video",
    "vision_bos_token": "vision_bos", "vision_eos_token": "vision_eos",
    "audio_bos_token": "audio_bos", "audio_eos_token": "audio_eos",
}  # fmt: skip


@pytest.fixture(scope="module")
def parts():
    """Tokenizer, thinker config and feature extractor (the tiny test model's, no weights needed)."""
    pytest.importorskip("torchvision")
    return offline_parts()


def offline_parts():
    from transformers import Qwen2_5OmniThinkerConfig, WhisperFeatureExtractor

    tokenizer = byte_tokenizer(
        extra_special_tokens={attr: SPECIAL_TOKENS[name] for attr, name in NAMED_TOKENS.items()}
    )
    config = Qwen2_5OmniThinkerConfig(
        vision_config={"patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "depth": 1}
    )
    return tokenizer, config, WhisperFeatureExtractor(feature_size=128, sampling_rate=16_000)


def _processor(tokenizer, feature_extractor):
    from transformers import Qwen2_5OmniProcessor, Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    size = {"shortest_edge": MIN_PIXELS, "longest_edge": MAX_PIXELS}
    return Qwen2_5OmniProcessor(
        image_processor=Qwen2VLImageProcessor(size=size, patch_size=14, merge_size=2, temporal_patch_size=2),
        video_processor=Qwen2VLVideoProcessor(
            size=size, patch_size=14, merge_size=2, temporal_patch_size=2, do_sample_frames=False
        ),
        feature_extractor=feature_extractor,
        tokenizer=tokenizer,
    )


def _official(processor, built: dict, use_audio_in_video: bool, audio_items: bool):
    """The processor's inputs for the same prompt: placeholders collapsed to the chat-template form."""
    tok = SPECIAL_TOKENS
    text = built["prompt"]
    # Rebuild the compact prompt the chat template writes: one <|VIDEO|> per clip, one <|AUDIO|> per
    # standalone audio item, in the order the builder met them.
    compact = re.sub(
        re.escape(tok["vision_bos"]) + ".*?" + re.escape(tok["vision_eos"]),
        tok["vision_bos"] + tok["video"] + tok["vision_eos"],
        text,
        flags=re.S,
    )
    compact = re.sub(
        re.escape(tok["audio_bos"]) + "(?:" + re.escape(tok["audio"]) + ")+" + re.escape(tok["audio_eos"]),
        tok["audio_bos"] + tok["audio"] + tok["audio_eos"],
        compact,
    )
    videos = [clip["frames"].frames for clip in built["clips"]]
    fps = {round(clip["frames"].sample_fps, 6) for clip in built["clips"]}
    assert len(fps) == 1  # the processor takes one rate for all videos of a call
    # the processor's own defaults (128..768 x 28 x 28 pixels) win over the video processor's size:
    # pass the pixel range with the call, as a user of the processor does
    size = {"shortest_edge": MIN_PIXELS, "longest_edge": MAX_PIXELS}
    kwargs = {"fps": fps.pop(), "size": size, **processor_audio_kwargs(use_audio_in_video)}
    audio = [a["audio"] for a in built["audios"]] if (use_audio_in_video or audio_items) else None
    return processor(text=[compact], videos=videos, audio=audio, return_tensors="pt", **kwargs)


@pytest.mark.parametrize(
    ("use_audio_in_video", "audio_parts", "qtype"),
    [
        (True, "wav", "predictive"),  # interleaved audio, the masked clip silent
        (False, "wav", "evidential"),  # each clip's audio as its own item
        (False, "wav", "predictive-remove"),  # separate items, the masked clip unheard
        (False, "none", "evidential"),  # video only
    ],
)
def test_builder_matches_the_official_processor(
    parts, clips_dir: Path, tmp_path: Path, transition_factory, use_audio_in_video, audio_parts, qtype
) -> None:
    tokenizer, config, feature_extractor = parts
    settings = OmniSettings(
        sampling=FrameSampling(num_frames=4, max_side=None),
        use_audio_in_video=use_audio_in_video,
        min_pixels=MIN_PIXELS,
        max_pixels=MAX_PIXELS,
    )
    builder = OmniInputBuilder(tokenizer, config, feature_extractor, settings)
    audio_mode = "remove" if qtype.endswith("remove") else "silence"
    pipeline = VlmPipeline(
        clips_dir=clips_dir, cache_dir=tmp_path, audio_parts=audio_parts, predictive_audio=audio_mode
    )
    request = pipeline.prepare(transition_factory(qtype.split("-")[0]), 0).request
    built = builder.build(request)
    ours = built["inputs"]
    theirs = _official(
        _processor(tokenizer, feature_extractor), built, use_audio_in_video, audio_parts != "none"
    )

    assert ours["input_ids"].tolist() == theirs["input_ids"].tolist()
    assert ours["attention_mask"].tolist() == theirs["attention_mask"].tolist()
    assert ours["video_grid_thw"].tolist() == theirs["video_grid_thw"].tolist()
    assert ours["pixel_values_videos"].shape == theirs["pixel_values_videos"].shape
    # 99 % of the normalised pixel values are the official processor's to float precision; the rest
    # (a few pixel columns: karma resizes with OpenCV's bicubic filter, the processor with
    # torchvision's, and the two round some edge pixels differently) stay within 0.25 (about 17 of 255 grey levels). Measured: max 0.18, mean 0.001.
    diff = np.abs(ours["pixel_values_videos"].numpy() - theirs["pixel_values_videos"].numpy())
    assert np.mean(diff < 1e-5) >= 0.99 and float(diff.max()) < 0.25, (
        float(diff.max()),
        float(np.mean(diff < 1e-5)),
    )
    assert np.allclose(ours["video_second_per_grid"].numpy(), np.asarray(theirs["video_second_per_grid"]))
    if "input_features" in theirs:
        assert ours["input_features"].shape == theirs["input_features"].shape
        assert ours["feature_attention_mask"].tolist() == theirs["feature_attention_mask"].tolist()
        assert np.allclose(ours["input_features"].numpy(), theirs["input_features"].numpy(), atol=1e-4)
    else:
        assert "input_features" not in ours
    expected_audio = {
        (True, "wav"): 2,
        (False, "wav"): 1 if qtype.endswith("remove") else 2,
        (False, "none"): 0,
    }[(use_audio_in_video, audio_parts)]
    assert len(built["audios"]) == expected_audio
