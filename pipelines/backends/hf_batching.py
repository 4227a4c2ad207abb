"""Padded batch generation for the ``transformers`` backend.

Greedy requests are grouped (constrained and free ones apart, since a constrained batch needs a
token filter for every row) and run ``batch_size`` at a time as one left-padded batch: the prompts
are right-aligned, the attention mask hides the padding and ``generate`` derives the positions from
the mask, so each row sees exactly its own prompt. Rows that finish early are padded by ``generate``;
each completion is cut at its first end-of-sequence token. Sampled requests (temperature > 0) run
one at a time, because a seeded sample depends on the batch it is drawn in.

Greedy answers equal batch-size-1 answers up to floating-point ties: padding changes the shapes of
the matrix products, so logits differ in the last bits, and a near-tie between two tokens can
flip. ``tests/pipelines/test_backend_batching.py`` checks identity on the test model in float32.
"""

from __future__ import annotations

import time
from typing import Any

from pipelines.backends._common import error_completion, text_messages
from pipelines.backends.base import ChatRequest, Completion
from pipelines.backends.choice_trie import ChoiceTrie


def generate_batched(backend: Any, requests: list[ChatRequest]) -> list[Completion]:
    """Completions for ``requests`` in order, greedy ones in padded batches of ``backend.batch_size``."""
    out: dict[int, Completion] = {}
    groups: dict[bool, list[int]] = {True: [], False: []}
    for i, request in enumerate(requests):
        if request.temperature > 0:
            out[i] = backend._one(request)
        else:
            groups[bool(request.choices)].append(i)
    for indices in groups.values():
        for start in range(0, len(indices), backend.batch_size):
            chunk = indices[start : start + backend.batch_size]
            for i, completion in zip(chunk, _batch(backend, [requests[i] for i in chunk]), strict=True):
                out[i] = completion
    return [out[i] for i in range(len(requests))]


def _batch(backend: Any, requests: list[ChatRequest]) -> list[Completion]:
    import torch

    if len(requests) == 1:
        return [backend._one(requests[0])]
    start = time.perf_counter()
    try:
        rows = []
        for request in requests:
            enc = backend.tokenizer.apply_chat_template(
                text_messages(request, backend.name), add_generation_prompt=True, return_dict=True
            )
            rows.append(list(enc["input_ids"]))
    except Exception:
        return [backend._one(r) for r in requests]  # let the failing request fail alone
    eos = backend._eos_ids()
    pad = backend.tokenizer.pad_token_id if backend.tokenizer.pad_token_id is not None else eos[0]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for n, row in enumerate(rows):
        ids[n, width - len(row) :] = torch.tensor(row)
        mask[n, width - len(row) :] = 1
    kwargs: dict[str, Any] = {"max_new_tokens": max(r.max_tokens for r in requests)}
    limits = [r.max_tokens for r in requests]
    if requests[0].choices:
        tries = [ChoiceTrie([backend._choice_ids(c) for c in r.choices or []]) for r in requests]
        filters = [t.allowed_fn(width, eos) for t in tries]
        kwargs["prefix_allowed_tokens_fn"] = lambda row, seq: filters[row](row, seq)
        limits = [max(r.max_tokens, t.depth + 1) for r, t in zip(requests, tries, strict=True)]
        kwargs["max_new_tokens"] = max(limits)
    kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    try:
        with backend._lock, torch.inference_mode():
            out = backend.model.generate(
                input_ids=ids.to(backend.device), attention_mask=mask.to(backend.device), pad_token_id=pad,
                **kwargs,
            )  # fmt: skip
    except Exception as exc:
        if len(requests) > 1:
            return [backend._one(r) for r in requests]
        return [error_completion(exc, time.perf_counter() - start)]
    share = (time.perf_counter() - start) / len(requests)
    completions = []
    for n, request in enumerate(requests):
        new = out[n, width:].tolist()[: limits[n]]
        end = next((k for k, tok in enumerate(new) if tok in eos), None)
        finished = end is not None
        new = new[: end + 1] if finished else new
        completions.append(
            Completion(
                text=backend.tokenizer.decode(new, skip_special_tokens=True),
                prompt_tokens=len(rows[n]),
                completion_tokens=len(new),
                latency_s=share,
                finish_reason="stop" if finished or len(new) < limits[n] else "length",
                meta={"constrained": bool(request.choices), "batch": len(requests)},
            )
        )
    return completions
