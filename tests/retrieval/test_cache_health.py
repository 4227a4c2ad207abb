"""Retrieval caches that know their own health (issue 38, item 5): a corrupt or replaced cache file is
named on stderr and rebuilt, never trusted, and never breaks a later call.

* query vectors (the Embedder's disk cache, the static+rerank route's ``query_vectors/``): sealed with
  a sha256 over their file name and bytes;
* index files (``node_vectors.npy``, ``edges.ann``, ...): size and sha256 recorded in ``meta.json``;
* the distilled static model: size and sha256 of every file in ``karma_static.json``.

Real components: the packaged MiniLM, FAISS, model2vec (the distillation test is slow: it distils).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from karma.core import cache_health
from retrieval import embed
from retrieval.ann import IndexConfig
from retrieval.embed import Embedder
from retrieval.graph_view import GraphView
from retrieval.index import GraphIndex, load_or_build_index

TEXTS = ["brightness increases across the cut", "tempo decreases", "the key changes"]


@pytest.fixture(autouse=True)
def _fresh_notes(monkeypatch):
    """Each test sees its own notes (they are said once per process)."""
    monkeypatch.setattr(cache_health, "_NOTED", set())


def _fresh_process(monkeypatch) -> None:
    monkeypatch.setattr(embed, "_CACHES", {})  # no vectors in memory: the disk cache is read


def test_seal_binds_bytes_to_their_key():
    sealed = cache_health.seal("a.vec", b"\x00\x01\x02\x03")
    assert cache_health.unseal("a.vec", sealed) == b"\x00\x01\x02\x03"
    assert cache_health.unseal("b.vec", sealed) is None  # another key's value
    assert cache_health.unseal("a.vec", sealed[:-1]) is None  # truncated
    assert cache_health.unseal("a.vec", sealed[:-1] + b"\x07") is None  # altered in place
    assert cache_health.unseal("a.vec", b"\x93NUMPY\x01\x00" + b"x" * 60) is None  # an old .npy


def test_replaced_and_random_query_vectors_are_named_and_recomputed(tmp_path, monkeypatch, capsys):
    _fresh_process(monkeypatch)
    first = Embedder(disk_cache=tmp_path).encode(TEXTS)
    files = {text: Embedder(disk_cache=tmp_path)._disk_path(text) for text in TEXTS}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in files.values())
    # Replaced: the second text's file now holds the first text's (valid, sealed) vector file.
    files[TEXTS[1]].write_bytes(files[TEXTS[0]].read_bytes())
    # Random bytes (what used to give an ``allow_pickle`` error on every later retrieve).
    files[TEXTS[2]].write_bytes(np.random.default_rng(0).bytes(1600))
    capsys.readouterr()
    _fresh_process(monkeypatch)
    again = Embedder(disk_cache=tmp_path).encode(TEXTS)
    assert np.array_equal(again, first)  # scores unchanged: the bad files were not used
    err = capsys.readouterr().err
    for text in TEXTS[1:]:
        assert f"note: cache: {files[text]}: a cached query vector that fails its checksum; recomputed" in err
    assert str(files[TEXTS[0]]) not in err
    # Rewritten sealed: the next process reads all three from disk without the model, silently.
    _fresh_process(monkeypatch)
    fresh = Embedder(disk_cache=tmp_path)
    monkeypatch.setattr(fresh, "_load", lambda: pytest.fail("the model was loaded: a vector was not reused"))
    assert np.array_equal(fresh.encode(TEXTS), first)
    assert "note:" not in capsys.readouterr().err


def _graph_view(graph_factory) -> GraphView:
    return GraphView.of(graph_factory())


@pytest.mark.parametrize("target", ["node_vectors.npy", "edges.ann"])
def test_corrupt_index_files_are_named_and_rebuilt(tmp_path, graph_factory, embedder, capsys, target):
    view = _graph_view(graph_factory)
    config = IndexConfig(exact_max=0)  # an HNSW structure, so edges.ann exists
    folder = tmp_path / "idx"
    built = load_or_build_index(view, embedder, folder, config)
    assert (folder / target).is_file() and "files" in json.loads((folder / "meta.json").read_text())
    reread = load_or_build_index(view, embedder, folder, config)
    assert reread.loaded_from_disk
    size = (folder / target).stat().st_size
    raw = bytearray((folder / target).read_bytes())
    raw[-40:] = bytes(40)  # the same size, other bytes (FAISS could crash on them; numpy would use them)
    (folder / target).write_bytes(bytes(raw))
    assert (folder / target).stat().st_size == size
    capsys.readouterr()
    rebuilt = load_or_build_index(view, embedder, folder, config)
    err = capsys.readouterr().err
    assert not rebuilt.loaded_from_disk
    assert f"note: cache: retrieval index {folder / target}: its sha256 differs" in err and "; rebuilt" in err
    assert np.array_equal(rebuilt.node_vectors, built.node_vectors)
    assert np.array_equal(rebuilt.edge_vectors, built.edge_vectors)
    assert load_or_build_index(view, embedder, folder, config).loaded_from_disk  # healthy again


def test_an_index_without_checksums_is_rebuilt_not_trusted(tmp_path, graph_factory, embedder, capsys):
    view = _graph_view(graph_factory)
    folder = tmp_path / "idx"
    load_or_build_index(view, embedder, folder)
    meta = json.loads((folder / "meta.json").read_text())
    del meta["files"]  # what an index written before checksums holds
    (folder / "meta.json").write_text(json.dumps(meta))
    np.save(folder / "node_vectors.npy", np.zeros_like(np.load(folder / "node_vectors.npy")))
    assert GraphIndex.load(folder, view, embedder.model_id) is None
    assert "no checksums recorded" in capsys.readouterr().err
    index = load_or_build_index(view, embedder, folder)
    assert not index.loaded_from_disk and np.abs(index.node_vectors).sum() > 0


def test_a_corrupt_distilled_model_is_named_and_not_trusted(tmp_path, capsys):
    """The record check alone (no distillation): a same-size altered file fails it, naming the file."""
    from retrieval import static_embed

    folder = tmp_path / "static"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights" * 100)
    (folder / "tokenizer.json").write_text("{}")
    record = {"files": cache_health.file_records(folder, ["model.safetensors", "tokenizer.json"])}
    (folder / static_embed.RECORD_FILE).write_text(json.dumps(record))
    assert static_embed._intact(folder)
    (folder / "model.safetensors").write_bytes(b"WEIGHTS" * 100)
    assert not static_embed._intact(folder)
    err = capsys.readouterr().err
    assert f"distilled static model {folder / 'model.safetensors'}: its sha256 differs" in err
    assert "distilled again" in err
    (folder / static_embed.RECORD_FILE).write_text(json.dumps({"key": "from an older karma"}))
    assert not static_embed._intact(folder)
    assert "no checksums recorded" in capsys.readouterr().err


@pytest.mark.slow
def test_a_corrupt_distilled_model_is_distilled_again(tmp_path, monkeypatch, capsys):
    """The real thing: distil into a fresh cache root, corrupt the weights, load again."""
    from retrieval import static_embed
    from retrieval.embed import resolve_model

    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(static_embed, "_LOADED", {})
    source = Path(resolve_model(None))
    first = static_embed.load_static(source)
    vectors = first.encode(TEXTS)
    weights = next(first.folder.rglob("*.safetensors"))
    shutil.copyfile(weights, tmp_path / "good.safetensors")
    raw = bytearray(weights.read_bytes())
    raw[-64:] = bytes(64)
    weights.write_bytes(bytes(raw))
    monkeypatch.setattr(static_embed, "_LOADED", {})
    capsys.readouterr()
    again = static_embed.load_static(source)
    assert f"distilled static model {weights}: its sha256 differs" in capsys.readouterr().err
    assert again.distill_seconds > 0  # distilled, not read back
    assert np.allclose(again.encode(TEXTS), vectors, atol=1e-6)
    assert weights.read_bytes() == (tmp_path / "good.safetensors").read_bytes()


def test_a_corrupt_derived_clip_is_named_and_written_again(tmp_path, capsys):
    """Derived clips (silent-audio mp4s, 16 kHz wavs) are content-addressed and reused: a reuse checks
    the sha256 written beside the file, so a corrupt cached clip is never sent to a model."""
    from pipelines.media import derive_audio_wav, derive_clip, probe, read_wav
    from pipelines.tiny_models import write_clip

    def read_wav_bytes(raw: bytes, folder: Path) -> np.ndarray:
        (folder / "first.wav").write_bytes(raw)
        return read_wav(folder / "first.wav")[0]

    source = write_clip(tmp_path / "clip.mp4", tone_hz=440.0, shade=90)
    cache = tmp_path / "cache"
    silent, wav = derive_clip(source, "silence", cache), derive_audio_wav(source, cache)
    good = {silent: silent.read_bytes(), wav: wav.read_bytes()}
    for path in good:
        assert path.with_name(path.name + ".sha256").is_file()
        raw = bytearray(path.read_bytes())
        raw[len(raw) // 2 : len(raw) // 2 + 16] = bytes(16)  # same size, other bytes
        path.write_bytes(bytes(raw))
    capsys.readouterr()
    assert derive_clip(source, "silence", cache) == silent and derive_audio_wav(source, cache) == wav
    err = capsys.readouterr().err
    for path in good:
        assert f"note: cache: {path}: its sha256 differs" in err
        assert cache_health.reusable(path)  # written again, and its record with it
    assert silent.read_bytes() == good[silent]  # video packets copied: byte-identical
    again, rate = read_wav(wav)  # the resampler may move a last float bit
    assert rate == 16_000 and np.allclose(again, read_wav_bytes(good[wav], tmp_path), atol=1e-5)
    probe(silent)
    path = silent.with_name(silent.name + ".sha256")
    path.unlink()  # a write killed before its record: not trusted, written again without a word
    assert derive_clip(source, "silence", cache) == silent and path.is_file()
    assert "note:" not in capsys.readouterr().err
