"""``pip install -e ".[vllm]"`` resolves: karma's pins and vLLM's requirements are one dependency set.

Runs pip's resolver for real against PyPI (``--dry-run``, nothing is installed) for a scratch
virtual environment that has nothing in it, so the answer does not depend on this machine's venv.
Marked ``pypi``: it needs the package index (CI has it) and takes one to ten minutes (metadata and some wheels are downloaded; 11 min measured on this 2-core machine under a load average of 20).
It also checks that the CPU suite runs on the versions a vLLM user gets: every core pin is what the
resolver picks with the extra.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

pytestmark = [pytest.mark.pypi, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^;\s]+)", requirement.strip())
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_vllm_extra_resolves_with_the_core_pins(tmp_path: Path) -> None:
    scratch = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(scratch)
    report = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "pip", "--python", str(scratch / "bin" / "python"), "install",
        "--dry-run", "--quiet", "--ignore-installed", "--report", str(report), f"{ROOT}[vllm]",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1700)
    assert done.returncode == 0, f"the [vllm] extra does not resolve:\n{done.stderr[-4000:]}"
    chosen = {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (vllm_pin,) = project["optional-dependencies"]["vllm"]
    assert chosen["vllm"] == vllm_pin.split("==")[1]
    differing = {name: (pin, chosen.get(name)) for name, pin in _pins().items() if chosen.get(name) != pin}
    assert not differing, f"core pins the vLLM install would change: {differing}"
    for name in ("torch", "transformers", "numpy", "numba"):
        assert name in _pins(), f"{name} must be pinned in the core dependencies"
