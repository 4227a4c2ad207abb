"""Sharded extraction: each shard writes a manifest; merging checks the shards add up.

``karma extract VIDEOS --out OUT --shard I/N`` extracts the videos of shard I (see
:mod:`karma.core.shard`; the unit is the video id, the file name without extension) and writes
``OUT/extract_shard-I-of-N.json``: the shard, the ids of every input video (the universe, so a merge
can tell a missing shard from a smaller input), its own videos, their outcomes and the options hash.
``karma merge extract --out MERGED SHARD_OUT...`` refuses a missing, repeated or mismatched shard and
a video claimed twice, then gathers every video's files (features, transitions, manifest, clips)
into MERGED (nothing is copied when a shard already wrote there).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from graph.extract.options import ExtractOptions
from graph.extract.runner import VideoOutcome, features_path, write_json_atomic
from karma.core.errors import InputError
from karma.core.hashing import canonical_hash
from karma.core.shard import ShardSpec, check_complete

MANIFEST_PREFIX = "extract_shard-"
MERGE_FILE = "extract_merge.json"


def manifest_name(shard: ShardSpec) -> str:
    return f"{MANIFEST_PREFIX}{shard.index}-of-{shard.count}.json"


def shard_sources(sources: list[Path], shard: ShardSpec) -> list[Path]:
    """The input videos of ``shard`` (by video id), input order kept."""
    return shard.select(sources, lambda p: p.stem)


def write_manifest(
    out_dir: Path,
    shard: ShardSpec,
    universe: list[Path],
    outcomes: list[VideoOutcome],
    options: ExtractOptions,
) -> Path:
    """Record what this shard did (atomically)."""
    path = Path(out_dir) / manifest_name(shard)
    write_json_atomic(
        path,
        {
            "shard": str(shard),
            "options_hash": canonical_hash(options.model_dump(mode="json"), 16),
            "universe": sorted(p.stem for p in universe),
            "videos": sorted(o.video_id for o in outcomes),
            "outcomes": {o.video_id: o.status for o in sorted(outcomes, key=lambda o: o.video_id)},
        },
    )
    return path


def _manifests(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{MANIFEST_PREFIX}*.json"))


def merge_extractions(out: str | Path, shard_dirs: list[str | Path]) -> dict[str, Any]:
    """Check the shards' manifests and gather their files into ``out``; return the merge summary."""
    out = Path(out)
    found: list[tuple[ShardSpec, str, dict[str, Any], Path]] = []
    seen_paths: set[Path] = set()
    for folder in (Path(d) for d in shard_dirs):
        if not folder.is_dir():
            raise InputError(f"{folder}: no such folder")
        paths = _manifests(folder)
        if not paths:
            raise InputError(
                f"{folder}: no {MANIFEST_PREFIX}I-of-N.json (was it extracted with --shard I/N?)"
            )
        for path in paths:
            if path.resolve() in seen_paths:
                continue
            seen_paths.add(path.resolve())
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
                spec = ShardSpec.parse(manifest["shard"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputError(f"{path}: not a shard manifest ({type(exc).__name__}: {exc})") from None
            found.append((spec, str(path), manifest, folder))
    check_complete([(spec, where) for spec, where, _, _ in found])
    first = found[0][2]
    owner: dict[str, str] = {}
    for _spec, where, manifest, _ in found:
        for field in ("options_hash", "universe"):
            if manifest.get(field) != first.get(field):
                raise InputError(
                    f"{where}: field {field!r} differs from {found[0][1]} (shards of different runs)"
                )
        for video in manifest["videos"]:
            if video in owner:
                raise InputError(f"video {video} is in two shards: {owner[video]} and {where}")
            owner[video] = where
    missing = sorted(set(first["universe"]) - set(owner))
    if missing:
        raise InputError(f"{len(missing)} videos are in no shard: {', '.join(missing[:5])}")
    failed: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    for _spec, _where, manifest, folder in found:
        for video in manifest["videos"]:
            if manifest["outcomes"].get(video) == "error" or not features_path(folder, video).is_file():
                failed.append(video)
                continue
            if folder.resolve() == out.resolve():
                continue
            for name in (
                f"{video}_causal_features.json",
                f"{video}_transitions.json",
                f"{video}_extraction.json",
            ):
                if (folder / name).is_file():
                    shutil.copy2(folder / name, out / name)
            clips = folder / "clips" / video
            if clips.is_dir():
                shutil.copytree(clips, out / "clips" / video, dirs_exist_ok=True)
    summary = {
        "shards": sorted(str(s) for s, _, _, _ in found),
        "videos": len(owner),
        "failed": sorted(failed),
        "options_hash": first["options_hash"],
    }
    write_json_atomic(out / MERGE_FILE, summary)
    return summary
