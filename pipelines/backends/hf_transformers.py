"""A local Hugging Face causal LM run with transformers (a model folder, a hub id, or a GGUF file).

A GGUF is converted once to a cached safetensors folder (see ``hf_convert``). Decoding is greedy by
default. When a request sets ``choices``, every step may only pick tokens that continue one of the
tokenised choices (a prefix trie), and end-of-sequence only once a choice is complete, so the output
is exactly one of them. Text-only: video/audio models (Qwen2.5-Omni) have their own pipeline code.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from pipelines.backends._common import error_completion, text_messages
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.backends.choice_trie import ChoiceTrie
from pipelines.models import file_sha256, smollm2_gguf_path


class TransformersBackend(Backend):
    """A causal LM loaded with ``AutoModelForCausalLM``."""

    name = "transformers"
    batches_in_one_call = True

    def __init__(
        self,
        model: str | Path | None = None,
        gguf_file: str | None = None,
        device: str = "cpu",
        dtype: str | None = None,
        cache_root: str | Path | None = None,
        local_files_only: bool = True,
        batch_size: int | None = None,
    ):
        """Load the model.

        model: a model folder, a hub id, or a .gguf file; default: the packaged SmolLM2 GGUF.
        gguf_file: a GGUF file name inside the ``model`` folder (the transformers convention).
        device: torch device (``cpu``, ``cuda``).
        dtype: torch dtype name for the weights; default float32 on CPU, bfloat16 on cuda.
        cache_root: where converted GGUFs are cached; default: karma's cache folder.
        local_files_only: never contact the Hugging Face hub (our machines are offline).
        batch_size: greedy requests per padded batch (``hf_batching``); default 1 on CPU, 16 on cuda.
        """
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from pipelines.backends.hf_convert import converted_gguf_dir

        source = Path(model) if model is not None else smollm2_gguf_path()
        if gguf_file:
            source = Path(source) / gguf_file
        self._gguf: Path | None = None
        if str(source).endswith(".gguf"):
            self._gguf = Path(source)
            folder: str | Path = converted_gguf_dir(source, cache_root)
        else:
            folder = source if Path(source).exists() else str(model)
        self.source = str(source)
        self.folder = folder
        self.device = device
        on_cuda = str(device).startswith("cuda")
        dtype = dtype or ("bfloat16" if on_cuda else "float32")
        self.dtype = dtype
        self.batch_size = batch_size or (16 if on_cuda else 1)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=local_files_only)
        self.model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=getattr(torch, dtype), local_files_only=local_files_only
        ).to(device)
        self.model.eval()
        self._live = live_weights(self.model)
        """Device and dtype of the weights as loaded (``live_weights``): ``settings`` reads its dtype
        from here, so a later move cannot change a cache key mid-run; ``runtime`` reads them again."""
        self._lock = threading.Lock()
        self._model_id: str | None = None

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            self._model_id = _identify(self._gguf, self.folder)
        return self._model_id

    @property
    def settings(self) -> dict[str, object]:
        """What decides answers: the model and the dtype its weights really hold (read from the loaded
        model, the requested one unless the checkpoint kept another). Device and batch size are in
        ``runtime``: they do not change an answer in principle, and ``settings`` is hashed into cache
        keys and the run identity."""
        return {"backend": self.name, "model": self.model_id, "dtype": self._live["dtype"] or self.dtype}

    @property
    def runtime(self) -> dict[str, object]:
        """How the model runs here, read from the loaded model (run config only, never a cache key):
        the device and dtype of its weights, the greedy batch size and torch's CPU threads."""
        import torch

        live = live_weights(self.model) if self.model is not None else self._live
        return {**live, "batch_size": self.batch_size, "torch_threads": torch.get_num_threads()}

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        if self.batch_size > 1:
            from pipelines.backends.hf_batching import generate_batched

            return generate_batched(self, requests)
        return [self._one(request) for request in requests]

    def preferred_batch_size(self, pending: int) -> int:
        """Requests the evaluation runner should hand over per call."""
        return self.batch_size

    def _one(self, request: ChatRequest) -> Completion:
        import torch

        start = time.perf_counter()
        try:
            messages = text_messages(request, self.name)
            enc = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            input_ids = enc["input_ids"].to(self.device)
            attention = enc["attention_mask"].to(self.device)
            prompt_len = int(input_ids.shape[1])
            kwargs: dict[str, Any] = {"max_new_tokens": request.max_tokens}
            eos = self._eos_ids()
            if request.choices:
                trie = ChoiceTrie([self._choice_ids(c) for c in request.choices])
                kwargs["prefix_allowed_tokens_fn"] = trie.allowed_fn(prompt_len, eos)
                kwargs["max_new_tokens"] = max(request.max_tokens, trie.depth + 1)
            if request.temperature > 0:
                torch.manual_seed(request.seed)
                kwargs.update(do_sample=True, temperature=request.temperature)
            else:
                kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos[0]
            with self._lock, torch.inference_mode():
                out = self.model.generate(
                    input_ids=input_ids, attention_mask=attention, pad_token_id=pad, **kwargs
                )
            new = out[0, prompt_len:].tolist()
        except Exception as exc:  # never raise per request: record it
            return error_completion(exc, time.perf_counter() - start)
        finished = bool(new) and new[-1] in eos
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return Completion(
            text=text,
            prompt_tokens=prompt_len,
            completion_tokens=len(new),
            latency_s=time.perf_counter() - start,
            finish_reason="stop" if finished or len(new) < kwargs["max_new_tokens"] else "length",
            meta={"constrained": bool(request.choices)},
        )

    # -- option scoring (answer modes letter / loglik; see pipelines.loglik) ------------------------
    def score_continuations(self, requests, continuations):  # type: ignore[no-untyped-def]
        """Log-likelihood of each continuation after each request's chat prompt (lm-eval): the prompt
        is read once and every option scored from its KV cache in one padded batch
        (``pipelines.backends.hf_scoring``); equal to one forward pass per option within float
        rounding."""
        return [self._score_one(r, list(c)) for r, c in zip(requests, continuations, strict=True)]

    def _score_one(self, request: ChatRequest, continuations: list[str]) -> list[Any]:
        from pipelines.backends.hf_scoring import shared_prefix_scores

        prompt = self.tokenizer.apply_chat_template(
            text_messages(request, self.name), add_generation_prompt=True, tokenize=False
        )

        def tokenize(text: str) -> list[int]:
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]

        with self._lock:
            return shared_prefix_scores(self.model, tokenize, prompt, continuations, self.device)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (the fact block's budget unit)."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _choice_ids(self, choice: str) -> list[int]:
        ids = self.tokenizer(choice, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"choice {choice!r} tokenises to nothing")
        return list(ids)

    def _eos_ids(self) -> list[int]:
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        ids = eos if isinstance(eos, list) else [eos]
        return [int(i) for i in ids if i is not None]

    def close(self) -> None:
        self.model = None


def live_weights(model: Any) -> dict[str, str | None]:
    """The device and dtype a loaded torch model really holds its weights in: the device of its
    first parameter (``cuda:0``, ``cpu``) and the floating dtype holding the most parameters
    (``float32``, ``bfloat16``), so a few modules kept in float32 do not hide a bf16 model."""
    device: str | None = None
    counts: dict[str, int] = {}
    for parameter in model.parameters():
        if device is None:
            device = str(parameter.device)
        if parameter.is_floating_point():
            name = str(parameter.dtype).removeprefix("torch.")
            counts[name] = counts.get(name, 0) + parameter.numel()
    return {"device": device, "dtype": max(counts, key=lambda k: counts[k]) if counts else None}


def _identify(gguf: Path | None, folder: str | Path) -> str:
    if gguf is not None:
        return f"{gguf.name}@sha256:{file_sha256(gguf)[:16]}"
    path = Path(folder)
    if not path.is_dir():
        return str(folder)  # a hub id: its name is all we know
    # A fingerprint of the config and the weight files' names and sizes (hashing GBs would be slow).
    digest = hashlib.sha256()
    if (path / "config.json").is_file():
        digest.update((path / "config.json").read_bytes())
    for weight in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weight.name}:{weight.stat().st_size}".encode())
    return f"{path.name}@cfg:{digest.hexdigest()[:16]}"
