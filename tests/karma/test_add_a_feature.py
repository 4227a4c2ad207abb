"""Adding a visual feature is a change to the feature table plus its extractor.

The test registers a new picture feature ("Edge Density": the share of pixels on a strong luma edge)
and its frame extractor, and nothing else; then the extractor computes it, the loader reads it under
an alias, the validator checks its range, the CKG's change detection and the retrieval query see its
changes, and the prompt shows it as a picture feature (not hidden with the music).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from karma.core.features import FeatureKind, FeatureSpec, register_feature, unregister_feature

KEY = "Edge Density"


def edge_density(rgb: np.ndarray, y: np.ndarray) -> float:
    """Share of pixels whose horizontal or vertical luma step exceeds 32."""
    gx = np.abs(np.diff(y, axis=1)) > 32
    gy = np.abs(np.diff(y, axis=0)) > 32
    return float((gx[:-1, :] | gy[:, :-1]).mean())


@pytest.fixture
def edge_feature() -> Iterator[str]:
    from graph.extract.visual import FRAME_EXTRACTORS, register_frame_extractor

    register_feature(
        FeatureSpec(
            key=KEY,
            kind=FeatureKind.number,
            unit="fraction",
            minimum=0,
            maximum=1,
            aliases=("edges", "edge_density"),
            description="share of pixels on a strong luma edge",
            modality="visual",
            event="edge_density",
        )
    )
    register_frame_extractor(KEY, edge_density)
    try:
        yield KEY
    finally:
        FRAME_EXTRACTORS.pop(KEY, None)
        unregister_feature(KEY)


def _frame(checker: int) -> np.ndarray:
    """A 64x64 grey frame; ``checker`` > 0 paints a black/white checkerboard of that cell size."""
    if checker == 0:
        return np.full((64, 64, 3), 128, dtype=np.uint8)
    cells = (np.indices((64, 64)) // checker).sum(axis=0) % 2
    return np.repeat((cells * 255).astype(np.uint8)[..., None], 3, axis=2)


def test_the_extractor_computes_the_registered_feature(edge_feature: str) -> None:
    from graph.extract.visual import frame_stats, scene_visual

    flat = scene_visual([frame_stats(i, _frame(0)) for i in range(3)]).values
    busy = scene_visual([frame_stats(i, _frame(4)) for i in range(3)]).values
    assert flat[edge_feature] == 0.0
    assert 0.3 < busy[edge_feature] <= 1.0
    assert "Brightness" in busy  # the built-in features are still there


def test_loader_validator_ckg_retrieval_and_prompt_read_it_from_the_table(
    edge_feature: str, tmp_path: Path
) -> None:
    from graph.ckg.detect import detect_events
    from karma.data import load_features_file
    from pipelines.prompts.features_text import features_text
    from retrieval import observed_visual_events

    path = tmp_path / "vidE_causal_features.json"
    path.write_text(
        json.dumps(
            {
                "Scenes": {
                    "scene_001": {"Brightness": 100.0, "edges": 0.05, "Average Loudness (dB)": -20.0},
                    "scene_002": {"Brightness": 101.0, "edges": 0.60, "Average Loudness (dB)": -12.0},
                    "scene_003": {"Brightness": 99.0, "edges": 3.5},
                }
            }
        )
    )
    result = load_features_file(path)
    assert result.features is not None
    past, current = result.features.scenes["scene_001"], result.features.scenes["scene_002"]
    assert past.to_published()[edge_feature] == 0.05  # the alias was read as the canonical key
    # The table's range (0..1) is checked: 3.5 is refused with file, scene and field named.
    bad = [str(p) for p in result.problems if edge_feature in str(p) or "edges" in str(p)]
    assert bad and "scene_003" in " ".join(bad), [str(p) for p in result.problems]

    events = {e.id for e in detect_events(past, current, {"edge_density": 0.2, "brightness": 5.0})}
    assert "visual:edge_density:up" in events and not any(e.startswith("visual:brightness") for e in events)
    assert "visual:edge_density:up" in observed_visual_events(past, current, {"edge_density": 0.2})

    masked = features_text(current, mask_audio=True)  # a predictive question hides the music only
    assert f"- {edge_feature}: 0.6" in masked
    assert "- Average Loudness (dB): hidden" in masked


def test_without_registration_the_key_is_an_unknown_extra(tmp_path: Path) -> None:
    from karma.core.events import VISUAL_NUMERIC
    from karma.core.features import resolve_feature_key

    assert resolve_feature_key("edges") is None and "edge_density" not in VISUAL_NUMERIC
