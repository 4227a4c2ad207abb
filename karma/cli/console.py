"""The one console of the ``karma`` command line: every command prints through these two.

Results go to stdout, progress and notes to stderr, both with the same settings, so a command's
output reads the same whichever command prints it: no syntax highlighting (numbers and paths keep
the terminal's colour), no emoji codes (node ids like ``music:key:...`` stay text), and stdout lines
wrapped by the terminal, not cut by rich (long paths and facts stay copyable). Errors do not print
here: they are raised as :class:`~karma.core.errors.KarmaError` and printed once by
:mod:`karma.cli.errors`.

rich is imported on first use so that ``karma --help`` starts without it. A console is made per
call: it writes to whatever ``sys.stdout``/``sys.stderr`` is at that moment (a test runner swaps
them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def stdout_console() -> Console:
    """The console for a command's results (stdout)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, emoji=False)


def stderr_console() -> Console:
    """The console for progress bars and notes (stderr); results never go here."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False)
