"""Taggers load real model families from local folders and fill the published keys.

No tagger weights ship on PyPI, so the models here are tiny *randomly initialised* instances of the
real architectures (AST for audio, VideoMAE for video), saved with ``save_pretrained``: they exercise
the real loading and inference code; their labels mean nothing.
"""

from __future__ import annotations

import importlib.util

import pytest

from graph.extract import ExtractOptions, TaggerError, extract_video, load_tagger
from karma.core.records import KEY_ACTION, KEY_MOODS, KEY_NOT_COMPUTED, KEY_OBJECTS, SceneFeatures
from karma.synth.media import render_scene_clip


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from transformers import (
        ASTConfig,
        ASTFeatureExtractor,
        ASTForAudioClassification,
        VideoMAEConfig,
        VideoMAEForVideoClassification,
        VideoMAEImageProcessor,
    )

    root = tmp_path_factory.mktemp("tiny_taggers")
    moods = {0: "calm", 1: "energetic", 2: "sad"}
    ast = ASTConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_length=100,
        num_mel_bins=16,
        id2label=moods,
        label2id={v: k for k, v in moods.items()},
    )
    ASTForAudioClassification(ast).save_pretrained(root / "moods")
    ASTFeatureExtractor(num_mel_bins=16, max_length=100).save_pretrained(root / "moods")
    actions = {0: "dancing", 1: "walking"}
    vmae = VideoMAEConfig(
        image_size=32,
        patch_size=16,
        num_frames=4,
        tubelet_size=2,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        id2label=actions,
        label2id={v: k for k, v in actions.items()},
    )
    VideoMAEForVideoClassification(vmae).save_pretrained(root / "action")
    VideoMAEImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(
        root / "action"
    )
    return root


def test_taggers_fill_their_keys_and_the_rest_stays_declared_not_computed(tiny_models, tmp_path):
    features = SceneFeatures.model_validate(
        {"Brightness": 120, "Key": "D major", "Average Loudness (dB)": -18}
    )
    clip = render_scene_clip(tmp_path / "clip.mp4", features, 1.5)
    taggers = [load_tagger(f"moods:{tiny_models / 'moods'}"), load_tagger(f"action:{tiny_models / 'action'}")]
    extraction = extract_video(clip.path, ExtractOptions(clips="none"), taggers=taggers)
    scene = extraction.features["scene_001"]
    assert {item["label"] for item in scene[KEY_MOODS]} == {"calm", "energetic", "sad"}
    assert {item["label"] for item in scene[KEY_ACTION]} == {"dancing", "walking"}
    assert all(0.0 <= item["score"] <= 1.0 for item in scene[KEY_MOODS] + scene[KEY_ACTION])
    assert scene[KEY_NOT_COMPUTED] == [KEY_OBJECTS]


def test_tagger_specs_fail_clearly(tmp_path):
    with pytest.raises(TaggerError, match="weights not found"):
        load_tagger(f"action:{tmp_path / 'missing'}")
    with pytest.raises(TaggerError, match="KIND:PATH"):
        load_tagger("just-a-path")
    if importlib.util.find_spec("ultralytics") is None:
        weights = tmp_path / "yolo.pt"
        weights.write_bytes(b"")
        with pytest.raises(TaggerError, match="ultralytics"):
            load_tagger(f"objects:{weights}")
