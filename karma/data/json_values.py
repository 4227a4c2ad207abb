"""Reading a file that may hold one JSON document or several JSON values one after another."""

from __future__ import annotations

import json
import re
from pathlib import Path

from karma.core.errors import InputError
from karma.data.validation import MAX_JSON_DEPTH, json_depth_exceeds


class JsonReadError(InputError):
    """A file that is not (a sequence of) JSON values; message says where and why."""


def read_json_values(path: Path) -> list[object]:
    """Every top-level JSON value in the file, in order.

    Some published Karma-MV files hold a header object followed by a list (several values, not one
    document); ``json.load`` rejects those, so values are decoded one by one.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise JsonReadError(f"not UTF-8 text (byte {exc.start})") from exc
    decoder = json.JSONDecoder()
    values: list[object] = []
    pos = 0
    length = len(text)
    while True:
        while pos < length and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= length:
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except RecursionError:
            raise JsonReadError(_too_deep()) from None
        except json.JSONDecodeError as exc:
            if _truncated(text, exc):
                raise JsonReadError(
                    f"file ends in the middle of a JSON value (truncated?) at line {exc.lineno} "
                    f"column {exc.colno}"
                ) from exc
            raise JsonReadError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
        if json_depth_exceeds(value):
            raise JsonReadError(_too_deep())
        values.append(value)
    if not values:
        raise JsonReadError("file is empty")
    return values


def _too_deep() -> str:
    return f"JSON nested deeper than {MAX_JSON_DEPTH} levels (the Karma-MV formats need 6); refused"


def _truncated(text: str, exc: json.JSONDecodeError) -> bool:
    """True when decoding failed because the text ran out, not because of a bad character."""
    rest = text[exc.pos :].strip()
    if not rest or exc.msg.startswith("Unterminated string"):
        return True
    # A literal or number cut short at the very end of the file ("tru", "12.").
    return ("\n" not in rest and any(word.startswith(rest) for word in ("true", "false", "null"))) or bool(
        re.fullmatch(r"-?\d*\.?\d*[eE]?[+-]?\d*", rest)
    )
