"""``karma synth``: synthetic music-video worlds with known causes (features, QA, ground truth, media).

A world config (YAML/JSON) holds every variable, dynamic and causal rule; :func:`generate` simulates it
and writes the published Karma-MV files plus the ground truth a graph builder and scorers check against.
"""

from karma.synth.config import WorldConfig, WorldConfigError, load_world, resolve_world
from karma.synth.definitions import (
    MOOD_ANCHORS,
    TONICS,
    key_name,
    mood_scores,
    moods_from_valence_arousal,
    total_visual_intensity,
)
from karma.synth.dynamics import WorldTooQuietError
from karma.synth.generate import SynthSummary, generate
from karma.synth.truth import GroundTruth, build_ground_truth

__all__ = [
    "MOOD_ANCHORS",
    "TONICS",
    "GroundTruth",
    "SynthSummary",
    "WorldConfig",
    "WorldConfigError",
    "WorldTooQuietError",
    "build_ground_truth",
    "generate",
    "key_name",
    "load_world",
    "mood_scores",
    "moods_from_valence_arousal",
    "resolve_world",
    "total_visual_intensity",
]
