"""BASELINE (karma before issue 17, for bench_retrieval_scale): how the index build embedded a graph's
texts. Texts grouped by exact token count, each group padded to a multiple of 4 with copies of its first
text and encoded in forward passes of exactly 4 rows (the canonical passes of ``Embedder.encode`` then).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CHUNK_V1 = 4


def encode_v1(embedder, texts: Sequence[str]) -> np.ndarray:
    """(len(texts), dim) float32 the way the old build computed them (no cache involved)."""
    model = embedder._load()
    distinct = list(dict.fromkeys(texts))
    limit = getattr(model, "max_seq_length", None) or 512
    lengths = [len(ids) for ids in model.tokenizer(distinct, truncation=True, max_length=limit)["input_ids"]]
    groups: dict[int, list[str]] = {}
    for text, length in zip(distinct, lengths, strict=True):
        groups.setdefault(length, []).append(text)
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(embedder.threads)
    out: dict[str, np.ndarray] = {}
    try:
        for length in sorted(groups):
            group = groups[length]
            padded = group + [group[0]] * (-len(group) % CHUNK_V1)
            vectors = model.encode(
                padded,
                batch_size=CHUNK_V1,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out.update(zip(group, np.asarray(vectors[: len(group)], dtype=np.float32), strict=True))
    finally:
        torch.set_num_threads(previous)
    return np.stack([out[text] for text in texts])
