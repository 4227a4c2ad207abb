"""Constrained choice for the transformers backends: a token-id prefix trie of the allowed outputs, read
by ``generate``'s ``prefix_allowed_tokens_fn`` (one request in ``hf_transformers``, a batch in
``hf_batching``)."""

from __future__ import annotations

from typing import Any


class ChoiceTrie:
    """Token-id prefix trie of the allowed outputs."""

    def __init__(self, sequences: list[list[int]]):
        self.root: dict[int, Any] = {}
        self.depth = max(len(s) for s in sequences)
        for seq in sequences:
            node = self.root
            for tok in seq:
                node = node.setdefault(tok, {})
            node[-1] = {}  # marks a complete choice

    def allowed_fn(self, prompt_len: int, eos: list[int]):
        def allowed(_batch_id: int, ids: Any) -> list[int]:
            node = self.root
            for tok in ids[prompt_len:].tolist():
                if tok in eos and -1 in node:
                    return eos
                node = node.get(tok)
                if node is None:
                    return eos  # cannot happen under the constraint; end cleanly if it does
            nxt = [t for t in node if t != -1]
            return nxt + eos if -1 in node else nxt

        return allowed
