"""Prompt templates: versioned, hashed, validated, and features rendered with masking."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from karma.core.records import KEY_BRIGHTNESS, KEY_KEY, KEY_LOUDNESS, KEY_MOODS, KEY_TEMPO, SceneFeatures
from pipelines.prompts import TEMPLATE_DIR, features_lines, load_template


def test_packaged_templates_have_version_and_file_hash():
    for name in ("mcq_llm_v1", "mcq_vlm_v1"):
        template = load_template(name)
        path = TEMPLATE_DIR / f"{name}.yaml"
        assert template.version
        assert template.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert "{graph_block}" in template.user
        assert "ANSWER" in template.system_for("generate")
        assert "ANSWER" not in template.system_for("loglik") + template.answer_texts("loglik")["request"]


def test_edited_template_gets_a_new_hash(tmp_path: Path):
    source = (TEMPLATE_DIR / "mcq_llm_v1.yaml").read_text()
    edited = tmp_path / "edited.yaml"
    edited.write_text(source.replace("expert in music", "expert in songs"))
    assert load_template(edited).sha256 != load_template("mcq_llm_v1").sha256


def test_template_without_graph_slot_is_rejected(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text('name: x\nversion: "1"\nsystem: s\nuser: "{question}"\ngraph_block: "{facts}"\n')
    with pytest.raises(ValueError, match="graph_block"):
        load_template(bad)


def test_unknown_template_name_lists_packaged_ones():
    with pytest.raises(FileNotFoundError, match="mcq_llm_v1"):
        load_template("no_such_template")


def test_masking_hides_every_music_value_and_keeps_visuals():
    scene = SceneFeatures(
        **{
            KEY_BRIGHTNESS: 120.5,
            KEY_LOUDNESS: -14.2,
            KEY_KEY: "A minor",
            KEY_MOODS: [{"label": "sad", "score": 0.8}],
            KEY_TEMPO: 128.0,
            "Some New Audio Feature": 3.0,
        }
    )
    shown = "\n".join(features_lines(scene))
    assert "A minor" in shown and "-14.2" in shown and "sad (0.80)" in shown and "128" in shown
    masked = "\n".join(features_lines(scene, mask_audio=True, masked_value="HIDDEN"))
    assert "- Brightness: 120" in masked
    for leaked in ("A minor", "-14.2", "sad", "128", "3"):
        assert leaked not in masked.replace("Brightness: 120", "")
    # unknown extra keys are treated as music: hidden rather than leaked
    assert "- Some New Audio Feature: HIDDEN" in masked
    assert masked.count("HIDDEN") == 5
