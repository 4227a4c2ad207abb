"""One console: the command line prints through ``karma.cli.console`` only, so every command's output
has the same settings (issue 40, item 5). Found in the source, then the console itself is checked."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")
CONSOLE_MODULE = Path("karma/cli/console.py")
OUTSIDE_THE_CLI = {
    Path("karma/eval/runner.py"): "the library's progress bar; karma/eval may not import karma/cli",
}
"""Console objects allowed outside the CLI's console module, each with its reason."""


def test_no_console_is_made_outside_the_console_module() -> None:
    made = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative == CONSOLE_MODULE or relative in OUTSIDE_THE_CLI:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if re.search(r"\bConsole\(", line):
                    made.append(f"{relative}:{number}: {line.strip()}")
    assert not made, "make consoles with karma.cli.console:\n" + "\n".join(made)
    for path in OUTSIDE_THE_CLI:  # an exemption that is no longer needed goes
        assert "Console(" in (ROOT / path).read_text(encoding="utf-8")


def test_results_go_to_stdout_and_notes_to_stderr_as_plain_text() -> None:
    from karma.cli.console import stderr_console, stdout_console

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        stdout_console().print("node music:key:minor 3.0 :smile:")
        stderr_console().print("note: 2 videos")
    assert out.getvalue() == "node music:key:minor 3.0 :smile:\n"  # no emoji code replaced
    assert err.getvalue() == "note: 2 videos\n"
