"""scikit-learn and mir-eval are the optional extra ``av-metrics``: pyproject.toml declares them there
(not as core dependencies), scripts/setup.sh installs the extra for the suite, and without them the
metrics module still imports, its numpy metrics still run, and a metric that needs one of them says
which extra to install (a MissingExtraError, exit 2 through the CLI) instead of an ImportError."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# The libraries are made absent the way Python itself honours: a None entry in sys.modules makes
# `import sklearn` raise ImportError (the boundary: this machine has them installed).
WITHOUT = """
import sys
for name in ("sklearn", "sklearn.metrics", "mir_eval", "mir_eval.separation"):
    sys.modules[name] = None
import numpy as np
import karma.tasks.metrics.av as av
from karma.core.errors import MissingExtraError
print("ciou", av.ciou(np.ones((2, 2)), np.ones((2, 2)), 0.5))
for call in (lambda: av.top1_accuracy([1], [1]), lambda: av.slavc_auc([1], [0.5]),
             lambda: av.separation_metrics(np.ones((1, 8)), np.ones((1, 8)))):
    try:
        call()
    except MissingExtraError as exc:
        print("refused", exc.exit_code, exc)
"""


def test_the_module_imports_and_names_the_extra_without_scikit_learn_and_mir_eval() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ciou 1.0"
    refused = lines[1:]
    assert len(refused) == 3 and all(line.startswith("refused 2 ") for line in refused), lines
    assert all('pip install -e ".[av-metrics]"' in line for line in refused)
    assert "scikit-learn" in refused[0] and "scikit-learn" in refused[1] and "mir-eval" in refused[2]


def test_pyproject_declares_them_as_the_extra_and_setup_installs_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {dep.split("==")[0] for dep in project["dependencies"]}
    assert not core & {"scikit-learn", "mir-eval"}
    extra = {dep.split("==")[0] for dep in project["optional-dependencies"]["av-metrics"]}
    assert extra == {"scikit-learn", "mir-eval"}
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    installs = [line for line in setup.splitlines() if "install -q -e" in line]
    assert installs and all("av-metrics" in line for line in installs)


def test_no_other_library_module_imports_them() -> None:
    # The extra stays optional only while the metrics module is the one place that reaches for it
    # (and it does so through _optional, by name, inside the metric).
    import ast

    found = []
    for package in ("karma", "graph", "retrieval", "pipelines"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno}"
                    for n in names
                    if n.split(".")[0] in {"sklearn", "mir_eval"}
                ]
    assert found == []
