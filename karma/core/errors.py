"""One base class for every error karma raises on purpose.

The CLI turns a :class:`KarmaError` into one line on stderr and an exit code (``exit_code``); any
other exception is a bug and keeps its traceback under ``--debug``.
"""

from __future__ import annotations


class KarmaError(Exception):
    """An error that karma explains to the user in one line."""

    exit_code: int = 2
    """2 for bad user input or arguments, 1 for a run that failed."""


class InputError(KarmaError, ValueError):
    """A file, record or field that karma cannot accept (names file, record and field)."""

    exit_code = 2


class RunError(KarmaError, RuntimeError):
    """A run that started and failed (backend down, error rate exceeded, ...)."""

    exit_code = 1


class MissingExtraError(KarmaError, ImportError):
    """An optional dependency that is not installed; the message names the pip extra."""

    exit_code = 2


class MediaError(InputError, RuntimeError):
    """A media file that cannot be read or written (missing, truncated, no video stream); the
    message names the file. Raised by :mod:`karma.core.media` for synth, extraction and the VLM path."""

    exit_code = 2
