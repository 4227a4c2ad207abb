"""Tiny, randomly initialised models built offline: for tests and the GPU smoke check.

No checkpoint is reachable offline and a smoke check must not need one, so these are built on the
spot from transformers' own architectures at tiny sizes: a byte-level BPE tokenizer over the 256 byte
symbols (no merges) plus the Qwen ChatML/Omni special tokens, a Llama-shaped causal LM
(``tiny_llama_folder``: saved as a model folder ``TransformersBackend`` loads), and a Qwen2.5-Omni
thinker with its vision and audio towers (``tiny_omni_thinker``; ``tiny_omni_folder`` saves it for
``QwenOmniBackend(model_path)``). ``write_clip`` writes a one-second mp4 with a tone. Their answers
are noise; what they test is that inputs reach the model and that two ways of running it agree.

Used by ``tests/pipelines/vlm/test_vlm_omni_tiny.py`` and ``benchmarks/gpu_check.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipelines.backends.omni import SPECIAL_TOKENS

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""Qwen's ChatML, text only (the tiny Llama's chat template)."""

CLIP_FPS = 12
CLIP_FRAMES = 12
CLIP_SIZE = (96, 64)
TONE_RATE = 44_100


def byte_tokenizer(chat_template: str | None = None, **options: Any) -> Any:
    """A real byte-level BPE tokenizer (256 byte symbols, no merges) that knows the Omni special tokens;
    eos ``<|im_end|>``, pad ``<|endoftext|>``; ``options`` go to ``PreTrainedTokenizerFast``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={ch: i for i, ch in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([*SPECIAL_TOKENS.values(), "<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", **options
    )
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def tiny_llama_folder(folder: str | Path, *, seed: int = 0, initializer_range: float = 0.5) -> Path:
    """Save a 2-layer Llama-shaped causal LM (hidden 64, byte vocabulary) and its ChatML tokenizer in
    ``folder``; returns the folder. A wide ``initializer_range`` spreads the random logits, so greedy
    picks are decisive (no near-ties for float rounding to flip between devices)."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    tokenizer = byte_tokenizer(CHATML_TEMPLATE)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        initializer_range=initializer_range,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_omni_thinker(seed: int = 0) -> tuple[Any, Any, Any]:
    """(thinker, tokenizer, Whisper feature extractor): a Qwen2.5-Omni thinker at tiny sizes (text 64
    wide, 2 layers; one vision and one audio layer) with random weights, float32 on CPU."""
    import torch
    from transformers import (
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    tokenizer = byte_tokenizer()
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
    torch.manual_seed(seed)
    model = Qwen2_5OmniThinkerForConditionalGeneration(config)
    return model, tokenizer, WhisperFeatureExtractor(feature_size=128, sampling_rate=16_000)


def tiny_omni_folder(folder: str | Path, seed: int = 0) -> Path:
    """``tiny_omni_thinker`` saved as a checkpoint folder (thinker, tokenizer, feature extractor)."""
    folder = Path(folder)
    model, tokenizer, features = tiny_omni_thinker(seed)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    features.save_pretrained(folder)
    return folder


@contextmanager
def tower_calls(model: Any) -> Iterator[dict[str, int]]:
    """Count the forward calls of a thinker's vision and audio towers inside the block."""
    seen = {"visual": 0, "audio_tower": 0}
    hooks = [
        # the towers sit on the thinker (transformers <= 5.20) or on its inner model (later)
        (getattr(model, name, None) or getattr(model.model, name)).register_forward_hook(
            lambda *_, name=name: seen.__setitem__(name, seen[name] + 1)
        )
        for name in seen
    ]
    try:
        yield seen
    finally:
        for hook in hooks:
            hook.remove()


def tiny_transition(qtype: str) -> Any:
    """One transition of video ``vidV`` (scene_001.mp4 -> scene_002.mp4, one second each) with one
    multiple-choice question of type ``qtype``."""
    from karma.core.records import Question, SceneRef, Transition

    return Transition(
        video_id="vidV",
        index=0,
        past_scene=SceneRef(name="scene_001.mp4", start_time="00:00:00.000", end_time="00:00:01.000"),
        current_scene=SceneRef(name="scene_002.mp4", start_time="00:00:01.000", end_time="00:00:02.000"),
        questions=[
            Question(
                type=qtype,
                question="How does the music change when the picture brightens?",
                options={"a": "louder", "b": "quieter", "c": "higher pitch", "d": "no change"},
                answer="c",
                index=0,
            )
        ],
    )


def write_clip(path: Path, *, tone_hz: float, shade: int, seconds: float = 1.0) -> Path:
    """``seconds`` of H.264 video (a moving bar over a tinted background, 12 fps, 96 x 64) with an
    AAC stereo tone, written through karma's one media writer (``karma.core.media_write``)."""
    import numpy as np

    from karma.core.media_write import Mp4Writer

    width, height = CLIP_SIZE
    frames = max(1, round(seconds * CLIP_FPS))
    path.parent.mkdir(parents=True, exist_ok=True)
    with Mp4Writer(path) as out:
        out.add_video(CLIP_FPS, width, height, options={"preset": "ultrafast"})
        out.add_audio(TONE_RATE, "stereo")
        for i in range(frames):
            image = np.full((height, width, 3), shade, np.uint8)
            image[:, : (i % CLIP_FRAMES + 1) * width // CLIP_FRAMES, 1] = 220
            out.write_frame(image)
        total = frames * TONE_RATE // CLIP_FPS
        tone = (0.5 * np.sin(2 * np.pi * tone_hz * np.arange(total) / TONE_RATE)).astype(np.float32)
        for start in range(0, total, 1024):
            out.write_audio(np.stack([tone[start : start + 1024]] * 2))
    return path
