"""Query vectors persist on disk so a warm CLI run never loads the embedding model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval import embed
from retrieval.embed import Embedder


def test_vectors_are_reused_from_disk_without_loading_the_model(tmp_path: Path, monkeypatch) -> None:
    texts = ["brightness increases across the cut", "tempo decreases"]
    # A fresh process: other tests may have embedded these texts into the shared in-memory cache.
    monkeypatch.setattr(embed, "_CACHES", {})
    first = Embedder(disk_cache=tmp_path).encode(texts)
    assert len(list(tmp_path.glob("*.vec"))) == 2  # sealed vectors (karma.core.cache_health)

    # A new process: no in-memory vectors, and the model must not be loaded at all.
    monkeypatch.setattr(embed, "_CACHES", {})
    fresh = Embedder(disk_cache=tmp_path)

    def no_model():
        raise AssertionError("the model was loaded although every vector was on disk")

    monkeypatch.setattr(fresh, "_load", no_model)
    again = fresh.encode(list(reversed(texts)))
    assert np.array_equal(again, first[::-1])  # bit-identical: retrieval stays deterministic
    with pytest.raises(AssertionError):
        fresh.encode(["a text never embedded before"])
