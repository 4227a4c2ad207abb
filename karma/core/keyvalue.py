"""``KEY=VALUE`` option lists (``--backend-opt``, ``-T``/``--task-opt``, ``--option``) read into dicts.

Kept on the ground floor so that library code reading such lists (the HarmonySet-OE judge's own
command line) needs nothing from ``karma.cli``; the CLI re-exports these with typer's usage errors.
"""

from __future__ import annotations

import json
from typing import Any

from karma.core.errors import InputError


class KeyValueError(InputError):
    """An item of a ``KEY=VALUE`` list that is not one (no ``=``, or an empty key)."""

    def __init__(self, flag: str, detail: str) -> None:
        super().__init__(f"{flag}: {detail}")
        self.flag = flag
        """The option the item was given to (``--backend-opt``)."""
        self.detail = detail
        """What is wrong with it, without the flag."""


def key_values(values: list[str], flag: str, *, lower_keys: bool = False) -> dict[str, str]:
    """``["k=v", ...]`` as a dict (the last of a repeated key wins); a value without ``=`` or with
    an empty key is a :class:`KeyValueError` naming ``flag``."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise KeyValueError(flag, f"expected KEY=VALUE, got {value!r}")
        out[key.strip().lower() if lower_keys else key.strip()] = text
    return out


def json_or_text(text: str) -> Any:
    """Numbers, booleans and JSON lists/objects decoded; anything else stays text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def backend_options(values: list[str], flag: str) -> dict[str, Any]:
    """Constructor options from repeated ``KEY=VALUE`` flags, values read as JSON when they parse."""
    return {key: json_or_text(text) for key, text in key_values(values, flag).items()}
