"""Option scoring on a transformers causal LM at the cost of one prompt: read the prompt once, score
every option's continuation from its KV cache in one padded batch.

lm-evaluation-harness scores each option with its own forward pass over prompt + option; the prompt
(hundreds of tokens) is read once per option. Here the common prompt is read once with
``use_cache=True``; its last position's logits score every option's first token, and the options'
remaining tokens run as one batch of ``len(options)`` rows on the cache repeated per row
(``DynamicCache.batch_repeat_interleave``), right-padded (a padded position comes after every real
token of its row, so causal attention never lets a real token see it; it is also masked). The result
equals the per-option forward within float rounding (``tests/pipelines/test_hf_scoring.py`` checks
agreement and equal picks on the packaged model); ``benchmarks/bench_hf_scoring.py`` measures both.

Tokenization follows the harness's ``_encode_pair`` (``pipelines.loglik.split_pair``): a continuation
can merge with the prompt's last token, so each option's tokens are its own context beyond the common
prefix plus its continuation tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def shared_prefix_scores(
    model: Any,
    tokenize: Callable[[str], list[int]],
    prompt: str,
    continuations: Sequence[str],
    device: Any,
) -> list[Any]:
    """``ContinuationScore`` of each continuation after ``prompt`` (module docstring)."""
    import torch

    from pipelines.loglik import ContinuationScore, split_pair

    pairs = [split_pair(tokenize, prompt, text) for text in continuations]
    common = min((ctx for ctx, _ in pairs), key=len)
    rows = [ctx[len(common) :] + cont for ctx, cont in pairs]
    if not common or any(not row for row in rows):
        raise ValueError("option scoring needs a non-empty prompt and non-empty continuations")
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([common], device=device), use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        tails = [row[:-1] for row in rows]  # the last token of a row is scored, never read
        width = max(len(tail) for tail in tails)
        tail_logprobs = None
        if width:
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(rows))
            pad = 0
            ids = torch.tensor([tail + [pad] * (width - len(tail)) for tail in tails], device=device)
            mask = torch.tensor(
                [[1] * len(common) + [1] * len(tail) + [0] * (width - len(tail)) for tail in tails],
                device=device,
            )
            positions = torch.arange(len(common), len(common) + width, device=device).expand(len(rows), -1)
            tail_out = model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
            )
            tail_logprobs = torch.log_softmax(tail_out.logits.float(), dim=-1)
    scores = []
    for i, (row, text) in enumerate(zip(rows, continuations, strict=True)):
        total = float(first[row[0]])
        greedy = int(first.argmax()) == row[0]
        for j, token in enumerate(row[1:]):
            step = tail_logprobs[i, j]  # type: ignore[index]
            total += float(step[token])
            greedy = greedy and int(step.argmax()) == token
        scores.append(
            ContinuationScore(
                logprob=total, tokens=len(row), chars=len(text), greedy=greedy, prompt_tokens=len(common)
            )
        )
    return scores


def per_option_scores(
    model: Any,
    tokenize: Callable[[str], list[int]],
    prompt: str,
    continuations: Sequence[str],
    device: Any,
) -> list[Any]:
    """The harness's way, for comparison: one forward pass of prompt + option per option."""
    import torch

    from pipelines.loglik import ContinuationScore, split_pair

    scores = []
    with torch.inference_mode():
        for text in continuations:
            context, continuation = split_pair(tokenize, prompt, text)
            ids = torch.tensor([context + continuation], device=device)
            logits = model(input_ids=ids).logits[0, len(context) - 1 : -1].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            target = torch.tensor(continuation, device=device)
            picked = logprobs.gather(1, target[:, None])[:, 0]
            greedy = bool((logprobs.argmax(dim=-1) == target).all())
            scores.append(
                ContinuationScore(
                    logprob=float(picked.sum()), tokens=len(continuation), chars=len(text), greedy=greedy
                )
            )
    return scores
