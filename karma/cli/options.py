"""``KEY=VALUE`` command-line options shared by several commands (``karma ask``, ``karma eval``)."""

from __future__ import annotations

import json
from typing import Any

import typer


def key_values(values: list[str], flag: str, *, lower_keys: bool = False) -> dict[str, str]:
    """``["k=v", ...]`` as a dict; a value without ``=`` or with an empty key is a usage error naming ``flag``."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=flag)
        out[key.strip().lower() if lower_keys else key.strip()] = text
    return out


def json_or_text(text: str) -> Any:
    """Numbers, booleans and JSON lists/objects decoded; anything else stays text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def backend_options(values: list[str], flag: str) -> dict[str, Any]:
    """Backend constructor options from repeated ``KEY=VALUE`` flags, values read as JSON when they parse."""
    return {key: json_or_text(text) for key, text in key_values(values, flag).items()}
