"""Text relations from the questions' explanations, each traceable to its source questions.

An explanation is linked to the events actually detected across its transition: when it names the
variable of a detected visual event and the variable of a detected musical event (``...the scene gets
brighter, so the music grows louder``), the pair gets a ``text_relation`` vote from that question. The
direction of each event comes from the features, not from parsing prose, so wording does not have to be
understood -- only which variables the explanation talks about.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Variable -> word stems that mention it (a word starting with the stem counts).
VARIABLE_WORDS: dict[str, tuple[str, ...]] = {
    "brightness": ("bright", "dark", "dim", "lighting", "luminan"),
    "saturation": ("saturat", "vivid", "washed", "desaturat"),
    "contrast": ("contrast",),
    "motion": ("motion", "movement", "moving", "static"),
    "visual_intensity": ("intensity", "intense", "visual energy"),
    "colorfulness": ("colourful", "colorful"),
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
_VARIABLE_OF_STEM: dict[str, str] = {
    word: variable for variable, words in VARIABLE_WORDS.items() for word in words
}
# One alternation, longest stems first, anchored at a word start; the text is lower-cased first.
_STEM_RE = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted(_VARIABLE_OF_STEM, key=len, reverse=True)) + ")"
)


@lru_cache(maxsize=65536)
def _base_mentions(lowered: str) -> frozenset[str]:
    # Explanations are often templated, so caching by text saves work on big corpora.
    return frozenset(_VARIABLE_OF_STEM[m] for m in _STEM_RE.findall(lowered))


def mentioned_variables(text: str, labels: dict[str, set[str]] | None = None) -> set[str]:
    """Variables an explanation talks about. ``labels`` adds category labels (action, object, mood
    names seen across the transition) that count as mentions of their variable."""
    lowered = text.lower()
    found = set(_base_mentions(lowered))
    if labels:
        for variable, names in labels.items():
            if variable not in found and any(name and name in lowered for name in names):
                found.add(variable)
    return found
