"""The one error path of the ``karma`` command line.

Every command runs inside :class:`KarmaGroup.invoke`, which turns an exception into one line on
stderr and an exit code:

* exit 2 — the user's input or arguments: :class:`~karma.core.errors.InputError` (names file,
  record and field), a missing optional extra, usage errors (click), unreadable/missing files,
  undecodable or too deeply nested input;
* exit 1 — a run that started and failed: :class:`~karma.core.errors.RunError` (backend down or
  erroring, error rate exceeded), connection failures, and anything unexpected (a bug: the line
  says so and how to see the traceback). A plain ``ValueError`` is one of these: karma's own bad-input
  errors are :class:`~karma.core.errors.InputError` (a ``ValueError`` too), so a bare one means a
  broken invariant, and reporting it as bad input would send the user hunting in good data;
* exit 130 — interrupted with Ctrl-C.

No traceback is printed unless ``--debug`` is given (anywhere on the command line) or
``KARMA_DEBUG=1`` is set; then the exception propagates with its full traceback.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup
from typer.exceptions import TyperException

try:  # typer >= 0.2x carries its own click; its UsageError is what the parser raises
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import UsageError  # type: ignore[no-redef]

from karma.core.errors import KarmaError

DEBUG_FLAG = "--debug"
DEBUG_ENV = "KARMA_DEBUG"
MAX_MESSAGE = 600
"""Longest error line printed (a 5 MB field must not flood the terminal)."""


def _one_line(text: str) -> str:
    parts = [part.strip() for part in str(text).splitlines() if part.strip()]
    line = "; ".join(parts) if parts else ""
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def _oserror(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        where = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
        return f"{where}: {exc.strerror.lower()}"
    return str(exc)


def _validation(exc: Any) -> str:
    errors = exc.errors()
    first = errors[0] if errors else {}
    field = ".".join(str(p) for p in first.get("loc", ())) or exc.title
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{exc.title}: field {field}: {first.get('msg', exc)}{more}"


def _is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    module = type(exc).__module__
    return module.startswith(("httpx", "httpcore", "requests", "urllib3", "neo4j.exceptions"))


def describe(exc: BaseException) -> tuple[int, str]:
    """The exit code and the one-line message for an exception raised by a command."""
    from pydantic import ValidationError

    if isinstance(exc, KarmaError):
        return exc.exit_code, _one_line(str(exc))
    if isinstance(exc, KeyboardInterrupt):
        return 130, "interrupted"
    if isinstance(exc, RecursionError):
        return 2, "input nested too deeply to read (see docs/reliability.md for the depth limit)"
    if isinstance(exc, UnicodeDecodeError):
        return 2, f"input is not UTF-8 text (byte {exc.start}: {exc.reason})"
    if isinstance(exc, json.JSONDecodeError):
        return 2, _one_line(f"not valid JSON: {exc}")
    if isinstance(exc, ValidationError):
        return 2, _one_line(_validation(exc))
    if isinstance(exc, sqlite3.DatabaseError):
        return 2, _one_line(f"not a usable SQLite file: {exc}")
    if _is_connection_error(exc):
        return 1, _one_line(f"run failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, OSError):
        return 2, _one_line(_oserror(exc))
    if isinstance(exc, MemoryError):
        return 1, "run failed: out of memory"
    return 1, _one_line(
        f"internal error ({type(exc).__name__}: {exc}); rerun with {DEBUG_FLAG} for the traceback"
    )


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def strip_debug(args: Sequence[str]) -> tuple[list[str], bool]:
    """Remove ``--debug`` from the arguments (before any ``--``); return the rest and whether it was there."""
    out: list[str] = []
    found = False
    for position, arg in enumerate(args):
        if arg == "--":
            out.extend(args[position:])
            break
        if arg == DEBUG_FLAG:
            found = True
            continue
        out.append(arg)
    return out, found


class KarmaGroup(TyperGroup):
    """The top-level group: strips ``--debug`` and maps exceptions to one line and an exit code."""

    def main(self, args: Sequence[str] | None = None, *a: Any, **kw: Any) -> Any:
        rest, found = strip_debug(list(sys.argv[1:] if args is None else args))
        if not found:
            return self._main_one_line(rest, *a, **kw)
        before = os.environ.get(DEBUG_ENV)
        os.environ[DEBUG_ENV] = "1"
        try:
            return self._main_one_line(rest, *a, **kw)
        finally:  # in-process callers (tests, notebooks) get their environment back
            if before is None:
                os.environ.pop(DEBUG_ENV, None)
            else:
                os.environ[DEBUG_ENV] = before

    def _main_one_line(self, args: list[str], *a: Any, standalone_mode: bool = True, **kw: Any) -> Any:
        """Run the command; usage errors become one ``error:`` line (plus the --help hint), not a box."""
        if not standalone_mode:
            return super().main(args, *a, standalone_mode=False, **kw)
        try:
            code = super().main(args, *a, standalone_mode=False, **kw)
        except UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":
                exc.show()  # bare group: its help, as before
            else:
                # typer's choice check words its reason as a pydantic-style "Value error, ...": noise
                message = exc.format_message().replace("Value error, ", "")
                print(f"error: {_one_line(message)}", file=sys.stderr)
                if exc.ctx is not None:
                    print(f"(see `{exc.ctx.command_path} --help`)", file=sys.stderr)
            sys.exit(exc.exit_code)
        except TyperException as exc:  # other click exceptions (file errors, ...)
            print(f"error: {_one_line(str(exc))}", file=sys.stderr)
            sys.exit(int(getattr(exc, "exit_code", 1)))
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (TyperException, typer.Exit, typer.Abort):
            raise  # usage errors and explicit exits: typer prints and exits as usual
        except Exception as exc:
            if debug_enabled():
                raise
            code, message = describe(exc)
            print(f"error: {message}", file=sys.stderr, flush=True)
            raise typer.Exit(code) from None


def print_error(message: object) -> None:
    """One ``error:`` line on stderr (for commands that print and then exit with their own code)."""
    print(f"error: {_one_line(str(message))}", file=sys.stderr, flush=True)
