"""The shared vocabulary of change events: what the synthesizer plants, the CKG builder detects,
the retrievers look up and the graph scorer matches.

An event id is ``<modality>:<variable>:<direction>``, for example ``visual:brightness:up`` or
``music:mode:major_to_minor``. Categorical changes carry their values in the direction part:
``visual:action:dancing->running`` or ``visual:object:appears:car``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Literal

from pydantic import BaseModel

from karma.core import records as r
from karma.core.features import registered_events, table_version

Modality = Literal["visual", "music"]


class LiveMapping(Mapping[str, str]):
    """A read-only mapping computed by ``compute`` and recomputed when the feature table changes
    (``karma.core.features.table_version``), so features registered after import are seen."""

    def __init__(self, compute: Callable[[], dict[str, str]]) -> None:
        self._compute = compute
        self._version = -1
        self._value: dict[str, str] = {}

    def _fresh(self) -> dict[str, str]:
        version = table_version()
        if version != self._version:
            self._value, self._version = self._compute(), version
        return self._value

    def __getitem__(self, name: str) -> str:
        return self._fresh()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fresh())

    def __len__(self) -> int:
        return len(self._fresh())

    def __contains__(self, name: object) -> bool:
        return name in self._fresh()

    def items(self):  # type: ignore[override]  # the dict's own views: as fast as a plain dict
        return self._fresh().items()

    def keys(self):  # type: ignore[override]
        return self._fresh().keys()

    def values(self):  # type: ignore[override]
        return self._fresh().values()

    def __repr__(self) -> str:
        return f"LiveMapping({self._fresh()!r})"


def _with_registered(modality: str, builtin: dict[str, str]) -> Callable[[], dict[str, str]]:
    """The built-in variables, then the numeric features of ``modality`` registered in the feature
    table (``karma.core.features.register_feature``)."""

    def compute() -> dict[str, str]:
        extra = {k: v for k, v in registered_events(modality).items() if k not in builtin}
        return {**builtin, **extra} if extra else builtin

    return compute


# Numeric visual variables: event variable name -> published feature key.
_VISUAL_BUILTIN: dict[str, str] = {
    "brightness": r.KEY_BRIGHTNESS,
    "saturation": r.KEY_SATURATION,
    "contrast": r.KEY_CONTRAST,
    "motion": r.KEY_MOTION,
    "visual_intensity": r.KEY_VISUAL_INTENSITY,
    "colorfulness": r.KEY_COLORFULNESS,
}
VISUAL_NUMERIC: Mapping[str, str] = LiveMapping(_with_registered("visual", _VISUAL_BUILTIN))
# Numeric musical variables: event variable name -> feature key.
_MUSIC_BUILTIN: dict[str, str] = {
    "loudness": r.KEY_LOUDNESS,
    "tempo": r.KEY_TEMPO,
    "onset_rate": r.KEY_ONSET_RATE,
    "spectral_centroid": r.KEY_SPECTRAL_CENTROID,
    "valence": r.KEY_VALENCE,
    "arousal": r.KEY_AROUSAL,
}
MUSIC_NUMERIC: Mapping[str, str] = LiveMapping(_with_registered("music", _MUSIC_BUILTIN))
# Human-readable names used in node titles and prompts.
READABLE: dict[str, str] = {
    "brightness": "brightness",
    "saturation": "colour saturation",
    "contrast": "contrast",
    "motion": "motion",
    "visual_intensity": "visual intensity",
    "colorfulness": "colourfulness",
    "loudness": "loudness",
    "tempo": "tempo",
    "onset_rate": "note onset rate",
    "spectral_centroid": "spectral brightness",
    "valence": "musical valence (positivity)",
    "arousal": "musical arousal (energy)",
    "key": "key",
    "mode": "mode",
    "action": "action",
    "object": "objects on screen",
    "mood": "mood",
}
NUMERIC_DIRECTIONS = ("up", "down")
MODE_DIRECTIONS = ("major_to_minor", "minor_to_major")


class ChangeEvent(BaseModel):
    """A change across one transition (past scene -> current scene)."""

    modality: Modality
    """visual or music."""
    variable: str
    """Variable name from the vocabulary above (brightness, loudness, mode, action, ...)."""
    direction: str
    """up / down, major_to_minor / minor_to_major, changed, ``X->Y`` or ``appears:X``."""

    @property
    def id(self) -> str:
        return f"{self.modality}:{self.variable}:{self.direction}"

    @property
    def title(self) -> str:
        """Readable title, e.g. ``brightness increases``."""
        name = READABLE.get(self.variable, self.variable.replace("_", " "))
        if self.direction == "up":
            return f"{name} increases"
        if self.direction == "down":
            return f"{name} decreases"
        if self.direction in MODE_DIRECTIONS:
            a, b = self.direction.split("_to_")
            return f"mode shifts from {a} to {b}"
        if self.direction == "changed":
            return f"{name} changes"
        if self.direction.startswith("appears:"):
            return f"{self.direction.split(':', 1)[1]} appears"
        if self.direction.startswith("disappears:"):
            return f"{self.direction.split(':', 1)[1]} disappears"
        if self.direction.startswith("is:"):
            # A state after the cut (music:mode:is:minor), not a change.
            return f"{name} is {self.direction[3:]}"
        if "->" in self.direction:
            a, b = self.direction.split("->", 1)
            # ``*->Y``: a shift to Y from any other value (events aggregated by target).
            return f"{name} shifts to {b}" if a == "*" else f"{name} shifts from {a} to {b}"
        return f"{name} {self.direction}"


def parse_event_id(event_id: str) -> ChangeEvent:
    """Parse ``modality:variable:direction`` back into a ChangeEvent."""
    parts = event_id.split(":", 2)
    if len(parts) != 3 or parts[0] not in ("visual", "music"):
        raise ValueError(f"not an event id (modality:variable:direction): {event_id!r}")
    return ChangeEvent(modality=parts[0], variable=parts[1], direction=parts[2])  # type: ignore[arg-type]


def split_key(key: str | None) -> tuple[str, str] | None:
    """Split a published key string (``A minor``, ``C# major``) into (tonic, mode)."""
    if not key:
        return None
    parts = key.strip().split()
    if len(parts) != 2 or parts[1].lower() not in ("major", "minor"):
        return None
    return parts[0], parts[1].lower()
