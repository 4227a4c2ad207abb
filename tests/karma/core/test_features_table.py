"""The feature table: every alias resolves, keys match the records' constants, ranges are usable."""

from __future__ import annotations

import pytest

import karma.core.records as r
from karma.core.features import (
    FEATURE_BY_KEY,
    FEATURES,
    FeatureKind,
    alias_table,
    feature_spec,
    fold_key,
    resolve_feature_key,
    suggest_feature_key,
    value_in_range,
)


def test_records_constants_are_in_the_table() -> None:
    keys = [getattr(r, name) for name in dir(r) if name.startswith("KEY_")]
    assert keys and all(key in FEATURE_BY_KEY for key in keys), [k for k in keys if k not in FEATURE_BY_KEY]


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Tempo", "Tempo (BPM)"),
        ("BPM", "Tempo (BPM)"),
        ("tempo_bpm", "Tempo (BPM)"),
        ("TempoBpm", "Tempo (BPM)"),
        ("Loudness", "Average Loudness (dB)"),
        ("loudness_db", "Average Loudness (dB)"),
        ("average loudness", "Average Loudness (dB)"),
        ("total visual intensity", "Total_Visual_Intensity"),
        ("detected objects", "Detected_Objects"),
        ("actions", "Action"),
        ("BRIGHTNESS", "Brightness"),
    ],
)
def test_documented_spellings_resolve(raw: str, canonical: str) -> None:
    assert resolve_feature_key(raw) == canonical


def test_every_alias_of_every_feature_resolves_to_it() -> None:
    for spec in FEATURES:
        assert resolve_feature_key(spec.key) == spec.key
        for alias in spec.aliases:
            assert resolve_feature_key(alias) == spec.key, alias
            assert resolve_feature_key(alias.upper()) == spec.key, alias
    assert len(set(alias_table().values())) == len(FEATURES)


def test_unknown_keys_get_a_close_suggestion_or_none() -> None:
    assert resolve_feature_key("Brigthness") is None
    assert suggest_feature_key("Brigthness") == "Brightness"
    assert suggest_feature_key("completely unrelated") is None
    assert fold_key("Spectral-Centroid (Hz)") == "spectral centroid hz"


def test_ranges() -> None:
    brightness = feature_spec("brightness")
    assert brightness is not None and brightness.kind is FeatureKind.number
    assert value_in_range(brightness, 0) and value_in_range(brightness, 255)
    assert not value_in_range(brightness, 300) and not value_in_range(brightness, -1)
    loudness = FEATURE_BY_KEY["Average Loudness (dB)"]
    assert value_in_range(loudness, -23.0) and not value_in_range(loudness, 500.0)


def test_the_documented_table_lists_every_key_and_spelling() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "real-data.md").read_text()
    section = doc[doc.index("## 8. Feature keys") :]
    for spec in FEATURES:
        assert f"| `{spec.key}` |" in section, spec.key
        for alias in spec.aliases:
            assert f"`{alias}`" in section, (spec.key, alias)
