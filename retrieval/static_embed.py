"""The static embedding route: a model2vec embedding distilled once from the local sentence-transformers
model, for graphs too large to embed with the model's forward pass in the time at hand.

Why: on a CPU the exact route (all-MiniLM-L6-v2, six transformer layers) costs >= 20 MFLOP a token and
runs at ~100 texts/s on 2 cores, so a 30,000-entity GraphRAG graph (~120,000 node and edge texts) takes
~20 minutes to index. A static embedding (``model2vec``: every vocabulary token passed through the model
once, PCA to 256 dims, SIF weights by token rank) embeds a text as the weighted mean of its tokens'
rows: no matrix product, tens of thousands of texts a second, at a recall close to the model's
(docs/retrieval.md, "The static route").

Distilled offline from the model folder (``HF_HUB_OFFLINE=1``; model2vec reads a local path and never asks
the hub), on the embedding device, once per machine: cached under ``cache_dir("static-embed")/<key>``,
where the key hashes the source model's files and the distillation recipe, written with
``karma.core.atomic.atomic_directory`` (a killed distillation leaves no half folder). Its record
``karma_static.json`` (written last) holds the size and sha256 of every file of the folder; a folder
whose files no longer match (or one from before the checksums) is named on stderr and distilled again.

Route choice (``choose_route``): ``exact`` (the model, today's vectors) or ``static``. The setting is an
``Embedder(route=...)`` argument, else ``$KARMA_EMBED_ROUTE``, else ``auto``: static when an index build
embeds more than ``STATIC_MIN_TEXTS`` node + edge texts and the model is a local folder, else exact. The
route is recorded in the index metadata and the question vectors use the index's route. On a static
index the hybrid retriever re-ranks by default: the static vectors propose, exact vectors of the proposed
texts decide (``retrieval.hybrid``, ``HybridConfig.rerank_pool``: ``static+rerank``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from karma.core.errors import InputError, RunError

ROUTE_ENV = "KARMA_EMBED_ROUTE"
"""Environment variable that forces the embedding route (``exact``, ``static``) or leaves it ``auto``."""
ROUTES = ("auto", "exact", "static")
"""Accepted route settings."""
STATIC_MIN_TEXTS = 20_000
"""``auto`` takes the static route for index builds of more than this many node + edge texts. At the exact
route's ~100 texts/s on 2 CPU cores that is a build of over 3 minutes; every graph karma builds from its
own worlds (hundreds of texts) and a 3,000-entity GraphRAG graph (~12,000 texts) stay exact."""
PCA_DIMS = 256
"""Static vector width (model2vec's default PCA size). It also differs from MiniLM's 384, so a vector of
one route can never be searched in an index of the other by accident (FAISS refuses the width)."""
SIF_COEFFICIENT = 1e-4
"""model2vec's default token weighting (smooth inverse frequency by vocabulary rank)."""
RECIPE_VERSION = "1"
"""Bump when the distillation recipe changes: the cache key then changes and a new one is distilled."""
CACHE_KIND = "static-embed"
"""Sub-folder of the cache root that holds distilled models."""


class StaticRouteUnavailable(RunError):
    """The static route cannot be used (model2vec missing, or the model is not a local folder)."""


def embed_route(value: str | None = None) -> str:
    """The route setting: ``value`` when given, else ``$KARMA_EMBED_ROUTE``, else ``auto``.
    ValueError on anything but auto, exact, static."""
    chosen = value if value not in (None, "") else os.environ.get(ROUTE_ENV) or "auto"
    setting = str(chosen).strip().lower()
    if setting not in ROUTES:
        source = "route" if value not in (None, "") else f"${ROUTE_ENV}"
        raise InputError(f"{source} must be auto, exact or static, got {chosen!r}")
    return setting


def choose_route(setting: str, texts: int, local_model: bool = True) -> str:
    """``exact`` or ``static`` for an index of ``texts`` node + edge texts under ``setting``: a forced
    route is honoured; ``auto`` is static above ``STATIC_MIN_TEXTS`` texts when the model is a local
    folder (the static model is distilled from it), else exact."""
    setting = embed_route(setting)
    if setting != "auto":
        return setting
    return "static" if texts > STATIC_MIN_TEXTS and local_model else "exact"


def _model_files(folder: Path) -> list[Path]:
    """The files that decide the model's vectors (weights, config, tokenizer; not the README)."""
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and path.suffix.lower() not in (".md",) and not path.name.startswith(".")
    )


def source_hash(folder: str | Path) -> str:
    """SHA-256 over the model folder's files (relative name and content), hex."""
    root = Path(folder)
    digest = hashlib.sha256()
    for path in _model_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def recipe() -> dict[str, object]:
    """What besides the source model decides the distilled vectors."""
    return {
        "method": "model2vec.distill",
        "pca_dims": PCA_DIMS,
        "sif_coefficient": SIF_COEFFICIENT,
        "dtype": "float32",
        "version": RECIPE_VERSION,
    }


def cache_key(folder: str | Path) -> str:
    """``<source hash[:16]>-<recipe hash[:8]>``: the distilled model's folder name."""
    from karma.core.hashing import canonical_hash

    return f"{source_hash(folder)[:16]}-{canonical_hash(recipe())[:8]}"


RECORD_FILE = "karma_static.json"
"""The distillation's record, written last: source, key, recipe and every file's size and sha256."""


def _intact(folder: Path) -> bool:
    """True when ``folder`` holds a finished distillation whose files match their record; a folder
    that fails (altered, truncated or replaced files, no checksums) is named on stderr (it is then
    distilled again). No folder at all is simply not there yet."""
    from karma.core.cache_health import check_files, note_rebuilt

    record_path = folder / RECORD_FILE
    if not record_path.is_file():
        return False
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError) as exc:
        note_rebuilt(f"distilled static model {record_path}: unreadable ({exc})", "distilled again")
        return False
    problem = check_files(folder, record.get("files") if isinstance(record, dict) else None)
    if problem is not None:
        note_rebuilt(f"distilled static model {problem}", "distilled again")
        return False
    return True


_LOCK = threading.Lock()
_LOADED: dict[str, StaticEmbedding] = {}


def _distill(source: Path, target: Path, device: str, threads: int) -> None:
    """Distill ``source`` into ``target`` (a staging folder) with model2vec, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from model2vec.distill import distill
    except ImportError as exc:  # pragma: no cover - a dependency of karma
        raise StaticRouteUnavailable(f"the static embedding route needs model2vec: {exc}") from exc
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    try:
        model = distill(
            model_name=str(source),
            device=device,
            pca_dims=PCA_DIMS,
            sif_coefficient=SIF_COEFFICIENT,
            quantize_to="float32",
        )
    finally:
        torch.set_num_threads(previous)
    model.save_pretrained(str(target))


class StaticEmbedding:
    """A distilled model2vec embedding: ``encode`` gives (len(texts), dim) float32, L2-normalised.

    A text's vector depends on that text alone (the weighted mean of its tokens' rows), so a batch and
    a single text get the same vector bit for bit.
    """

    def __init__(self, folder: str | Path, key: str, seconds: float = 0.0) -> None:
        from model2vec import StaticModel

        self.folder = Path(folder)
        self.key = key
        """Cache key (source model hash and recipe): part of the index's model id."""
        self.distill_seconds = seconds
        """Time spent distilling in this process (0.0 when read from the cache)."""
        self._model = StaticModel.from_pretrained(self.folder, force_download=False)

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), use_multiprocessing=False, normalize=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)


def load_static(source: str | Path, device: str = "cpu", threads: int = 1) -> StaticEmbedding:
    """The static embedding distilled from the local model folder ``source``: from the cache root when
    there, else distilled now (once per machine) and cached. StaticRouteUnavailable when ``source`` is
    not a local folder."""
    source = Path(source)
    if not source.is_dir():
        raise StaticRouteUnavailable(
            f"the static route distils from a local model folder; {str(source)!r} is not one"
        )
    import time

    from karma.core.atomic import atomic_directory, atomic_write_text
    from karma.core.cache_health import file_records
    from karma.core.paths import cache_dir

    key = cache_key(source)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        folder = cache_dir(CACHE_KIND) / key
        seconds = 0.0
        if not _intact(folder):
            started = time.perf_counter()
            with atomic_directory(folder) as staging:
                _distill(source, staging, device, threads)
                names = [p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()]
                # written last: a folder without it is never taken as a finished distillation
                record = {
                    "source": str(source),
                    "key": key,
                    **recipe(),
                    "files": file_records(staging, names),
                }
                atomic_write_text(staging / RECORD_FILE, json.dumps(record, indent=2, sort_keys=True))
            seconds = time.perf_counter() - started
        embedding = StaticEmbedding(folder, key, seconds)
        _LOADED[key] = embedding
        return embedding
