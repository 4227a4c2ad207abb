"""Text relations from the questions' explanations, each traceable to its source questions.

An explanation is linked to the events actually detected across its transition: when it names the
variable of a detected visual event and the variable of a detected musical event (``...the scene gets
brighter, so the music grows louder``), the pair gets a ``text_relation`` vote from that question. The
direction of each event comes from the features, not from parsing prose, so wording does not have to be
understood -- only which variables the explanation talks about.
"""

from __future__ import annotations

import re

# Variable -> word stems that mention it (matched at word starts, case-insensitive).
VARIABLE_WORDS: dict[str, tuple[str, ...]] = {
    "brightness": ("bright", "dark", "dim", "lighting", "luminan"),
    "saturation": ("saturat", "vivid", "washed", "desaturat"),
    "contrast": ("contrast",),
    "motion": ("motion", "movement", "moving", "static", "still"),
    "visual_intensity": ("intensity", "intense", "visual energy"),
    "colorfulness": ("colourful", "colorful", "colourfulness", "colorfulness"),
    "loudness": ("loud", "volume", "quiet", "soft", "db", "dynamics"),
    "tempo": ("tempo", "bpm", "faster", "slower", "pace", "speeds up", "slows down"),
    "onset_rate": ("onset", "note density", "rhythmic density", "busier"),
    "spectral_centroid": ("timbre", "spectral"),
    "valence": ("valence", "positiv", "negativ"),
    "arousal": ("arousal", "energ", "calm"),
    "key": ("key", "modulat"),
    "mode": ("major", "minor", "mode"),
    "mood": ("mood",),
    "action": ("action",),
    "object": ("object", "appear"),
}

_PATTERN = re.compile(
    "|".join(
        f"(?P<{variable}>" + "|".join(r"\b" + re.escape(word) for word in words) + ")"
        for variable, words in VARIABLE_WORDS.items()
    ),
    re.IGNORECASE,
)


def mentioned_variables(text: str, labels: dict[str, set[str]] | None = None) -> set[str]:
    """Variables an explanation talks about. ``labels`` adds category labels (action, object, mood
    names seen across the transition) that count as mentions of their variable."""
    found = {match.lastgroup for match in _PATTERN.finditer(text) if match.lastgroup}
    if labels:
        lowered = text.lower()
        for variable, names in labels.items():
            if any(name and name in lowered for name in names):
                found.add(variable)
    return found
