"""No committed file holds a machine path (issue 38, item 6): what the repository says must hold on
any machine, so an absolute path of the machine a run or a doc was written on (under the root folders
work, home, root or tmp) has no place in a tracked file; runs keep such paths out of ``results/``
through ``scripts/run_evidence.py`` (relative to ``$WORK``, or dropped). A relative path that happens to
contain such a folder name (the Neo4j home under ``.cache``) is not one. (This file spells its examples
in parts, so that the issue's own ``git grep`` finds nothing in it either.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MACHINE_PATH = re.compile(r"(?<![\w.$~}/-])/(?:work|home|root|tmp)/")
"""The issue's ``git grep`` for those four root folders, less relative paths that contain their names."""


def _tracked() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_holds_a_machine_path():
    found = []
    for path in _tracked():
        if not path.is_file() or path.suffix in {".png", ".gz", ".mp4", ".wav", ".jpg", ".gguf"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for match in MACHINE_PATH.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: {text[match.start() : match.start() + 50]!r}")
    assert found == []


def _absolute(root: str, rest: str) -> str:
    return "/" + root + "/" + rest


def test_the_pattern_finds_machine_paths_and_skips_relative_ones():
    assert MACHINE_PATH.search(f'"data": "{_absolute("work", "runs/contrary1k")}"')
    assert MACHINE_PATH.search(f"--out {_absolute('tmp', 'h15/run')}")
    assert MACHINE_PATH.search(_absolute("root", ".cache/karma/models"))
    assert not MACHINE_PATH.search("`.cache/neo4j" + _absolute("home", "logs/console.log`"))
    assert not MACHINE_PATH.search("$WORK/contrary1k") and not MACHINE_PATH.search(
        "~" + _absolute("work", "x")
    )
