"""Musical vocabulary shared by the synthesizer, the extractor and the graph: pitch classes and keys.

A key is written ``"<Tonic> major|minor"`` with sharps (``"C# minor"``), the spelling of the published
``Key`` feature. :func:`parse_key` also reads flats and Unicode accidentals (``"Db major"``,
``"B♭ minor"``) and folds them to the same pitch class.
"""

from __future__ import annotations

PITCH_CLASSES: tuple[str, ...] = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
"""Canonical tonic spelling (sharps), indexed by pitch class (0 = C)."""

MODES: tuple[str, ...] = ("major", "minor")
"""The two modes a key can have."""

_NATURALS: dict[str, int] = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_ACCIDENTALS: dict[str, int] = {"": 0, "#": 1, "♯": 1, "b": -1, "♭": -1}


def key_name(pitch_class: int, minor: bool) -> str:
    """The canonical key spelling: ``key_name(9, True) -> "A minor"`` (pitch class 0 = C)."""
    return f"{PITCH_CLASSES[pitch_class % 12]} {'minor' if minor else 'major'}"


def parse_key(key: str | None) -> tuple[int, str] | None:
    """``"A minor"`` / ``"C# major"`` / ``"Db major"`` -> (pitch class, mode); None if unparseable."""
    if not key:
        return None
    parts = key.strip().split()
    if len(parts) != 2 or parts[1].lower() not in MODES:
        return None
    tonic = parts[0].strip()
    natural, accidental = _NATURALS.get(tonic[:1].upper()), _ACCIDENTALS.get(tonic[1:])
    if natural is None or accidental is None:
        return None
    return (natural + accidental) % 12, parts[1].lower()
