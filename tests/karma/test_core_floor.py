"""The ground floor's shared vocabulary: one canonical hash, one music module, one media probe."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from karma.core.errors import InputError, MediaError
from karma.core.hashing import canonical_hash, canonical_json, file_sha256
from karma.core.media import probe
from karma.core.music import PITCH_CLASSES, key_name, parse_key


def test_canonical_hash_keeps_the_values_karma_wrote_before() -> None:
    # The formula the eval cache, prompt hashes and graph hashes used before karma.core existed.
    payload = {"b": [1, 2.5, None], "a": "Scène · ♯", "c": {"z": True, "y": "x"}}
    old = hashlib.sha256(
        json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()
    assert canonical_hash(payload) == old
    assert canonical_hash(payload, 16) == old[:16]
    assert canonical_json({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert canonical_hash({"a": 1}) != canonical_hash({"a": 2})


def test_prompt_and_graph_hashes_come_from_the_canonical_hash() -> None:
    from graph.model import CausalGraph, CkgNode
    from pipelines.answering import request_hash
    from pipelines.backends.base import ChatMessage, ChatRequest

    request = ChatRequest(messages=[ChatMessage(role="user", content="Which? é")], max_tokens=4)
    assert request_hash(request) == canonical_hash(request.model_dump(mode="json"))
    node = CkgNode(id="visual:brightness:up", kind="visual_change", title="brightness up")
    graph = CausalGraph(nodes={node.id: node})
    assert graph.content_hash() == canonical_hash({"nodes": [node.model_dump()], "edges": []}, 16)


def test_file_sha256(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 5000  # > 1 MiB: several blocks
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_one_key_spelling_round_trips_all_24_keys() -> None:
    for pc in range(12):
        for minor in (False, True):
            name = key_name(pc, minor)
            assert parse_key(name) == (pc, "minor" if minor else "major")
    assert key_name(13, True) == "C# minor"
    assert parse_key("Db major") == parse_key("C♯ major") == (1, "major")
    assert parse_key("H major") is None and parse_key("A dorian") is None and parse_key(None) is None
    assert len(PITCH_CLASSES) == 12


def test_media_errors_are_input_errors_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=r"nope\.mp4"):
        probe(tmp_path / "nope.mp4")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42 not really a video")
    with pytest.raises(MediaError, match=r"broken\.mp4") as info:
        probe(broken)
    assert isinstance(info.value, InputError) and info.value.exit_code == 2
    assert isinstance(info.value, RuntimeError)  # older handlers catch RuntimeError


def test_every_package_uses_the_one_media_error() -> None:
    import graph.extract
    import pipelines.media

    assert graph.extract.MediaError is MediaError
    assert pipelines.media.MediaError is MediaError


def test_backends_are_registered_by_name_with_help() -> None:
    from pipelines.backends import BACKENDS, backend_class

    assert list(BACKENDS)[:1] == ["llamacpp"] and "qwen-omni" in BACKENDS
    assert all(entry.help for entry in BACKENDS.entries())
    assert backend_class("openai").__name__ == "OpenAIBackend"
    with pytest.raises(InputError, match="unknown backend 'gpt'; choose one of: llamacpp"):
        backend_class("gpt")


def test_a_registered_name_with_a_missing_module_names_the_extra() -> None:
    from karma.core.errors import MissingExtraError
    from karma.core.registry import Registry

    registry = Registry("backend")
    registry.register("ghost", "karma_no_such_module_xyz:Ghost", help="never installed", extra="ghost")
    with pytest.raises(MissingExtraError, match=r'pip install -e "\.\[ghost\]"'):
        registry.load("ghost")
