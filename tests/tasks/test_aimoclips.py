"""AImoclips: the three published CSVs (synthetic values), the `_crop` names and the incomplete grid,
the deviation analysis against hand-worked values, and karma's audio VA estimate vs listener means.

Fixture design (tests/tasks/fixtures/aimoclips): intents happy (9, 7), angry (1, 7), sad (1, 3),
calm (9, 3); each clip's listener centre is 5 + 0.5 (g - 5) + shift on valence (Suno +1, MusicGen -1)
and 5 + 0.5 (g - 5) on arousal; two raters at centre -1 and +1 on both axes. So, per system: signed
valence deviation = shift, arousal deviation 0, shrinkage slope 0.5, neutrality index -2 (valence)
and -1 (arousal), quadrant hit 3/8. Suno_happy has clips 1 and 3 (no 2): an incomplete grid.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from karma.core.errors import InputError
from karma.tasks import get_task
from karma.tasks.affect_analysis import agreement, ccc, deviation_analysis, estimate_clip_affect
from karma.tasks.aimoclips import load_aimoclips

FIXTURE = Path(__file__).parent / "fixtures" / "aimoclips"


def test_loads_the_three_csvs_with_crop_names_and_the_incomplete_grid():
    data = load_aimoclips(FIXTURE)
    assert len(data.clips) == 16 and data.crop_renamed == 16 and not data.problems
    assert "Suno_happy_3.wav" in data.clips and all("_crop" not in n for n in data.clips)
    # grid inferred from the largest file_index (3): 2 models x 4 intents x 3 = 24 cells, 16 present
    assert len(data.missing_cells) == 8 and "Suno_happy_2" in data.missing_cells
    assert "Suno_happy_3" not in data.missing_cells
    assert get_task("aimoclips").load(FIXTURE).rows_seen == 16


@pytest.mark.parametrize(
    ("file", "row", "column", "value", "message"),
    [
        ("ratings_metadata.csv", 1, "valence", "10", "ratings_metadata.csv, row 1, field valence: not an integer rating 1-9"),
        ("ratings_metadata.csv", 2, "arousal", "4.5", "ratings_metadata.csv, row 2, field arousal: not an integer"),
        ("clips_metadata.csv", 3, "model", "Jukebox", "clips_metadata.csv, row 3, field model: 'Jukebox' is not one"),
        ("clips_metadata.csv", 1, "valence", "6.5", "clips_metadata.csv, row MusicGen_happy_1.wav, field valence: 6.5 but the ratings average 6.0000"),
        ("clips_metadata.csv", 2, "num_annotators", "3", "field num_annotators: 3 but 2 rows"),
        ("emotion_intents_metadata.csv", 4, "quadrant", "hv_xx", "emotion_intents_metadata.csv, row 4, field quadrant"),
    ],
)  # fmt: skip
def test_a_broken_file_is_named_by_file_row_and_field(tmp_path, file, row, column, value, message):
    root = tmp_path / "aimo"
    shutil.copytree(FIXTURE, root)
    with (root / file).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[row - 1][column] = value
    with (root / file).open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(InputError) as info:
        load_aimoclips(root)
    assert message in str(info.value)
    lenient = load_aimoclips(root, lenient=True)
    assert lenient.problems and message in str(lenient.problems[0])


def test_deviation_analysis_recovers_the_built_in_deviations():
    result = deviation_analysis(load_aimoclips(FIXTURE), resamples=300)
    for model, shift in (("Suno", 1.0), ("MusicGen", -1.0)):
        stats = result["by_model"][model]
        assert stats["n_clips"] == 8 and stats["n_ratings"] == 16
        assert stats["valence"]["signed_deviation"]["estimate"] == pytest.approx(shift)
        assert stats["arousal"]["signed_deviation"]["estimate"] == pytest.approx(0.0)
        for dim in ("valence", "arousal"):
            assert stats[dim]["shrinkage_slope"]["estimate"] == pytest.approx(0.5)
        assert stats["valence"]["neutrality_index_per_rating"]["estimate"] == pytest.approx(-2.0)
        assert stats["arousal"]["neutrality_index_per_rating"]["estimate"] == pytest.approx(-1.0)
        assert stats["quadrant_hit"]["estimate"] == pytest.approx(3 / 8)
        low, high = (
            stats["valence"]["signed_deviation"]["ci_low"],
            stats["valence"]["signed_deviation"]["ci_high"],
        )
        assert low <= shift <= high
    # per intent the deviation is shift - 0.5 (g - 5): Suno happy 1 - 2 = -1, Suno angry 1 + 2 = +3
    by_cell = result["by_model_quadrant"]
    assert by_cell["Suno/hv_ha"]["valence"]["signed_deviation"]["estimate"] == pytest.approx(-1.0)
    assert by_cell["Suno/lv_ha"]["valence"]["signed_deviation"]["estimate"] == pytest.approx(3.0)
    assert result["by_quadrant"]["hv_ha"]["n_clips"] == 4
    assert result["data"]["missing_cells"] == load_aimoclips(FIXTURE).missing_cells


def test_agreement_metrics_match_hand_worked_values():
    data = load_aimoclips(FIXTURE)
    names = sorted(data.clips)[:3]
    human = [(data.clips[n].valence, data.clips[n].arousal) for n in names]
    predicted = {n: (v + 1.0, a + 1.0) for n, (v, a) in zip(names, human, strict=True)}
    result = agreement(predicted, data)
    values = np.array([h[0] for h in human])
    expected_ccc = 2 * values.var() / (2 * values.var() + 1.0)  # a constant offset of 1
    assert result["valence"]["mae"] == pytest.approx(1.0) and result["arousal"]["mae"] == pytest.approx(1.0)
    assert result["valence"]["ccc"] == pytest.approx(expected_ccc)
    assert ccc([1, 2, 3], [2, 3, 4]) == pytest.approx(4 / 7)  # 2 (2/3) / (2/3 + 2/3 + 1)


def _click_track(path: Path, bpm: float, amplitude: float, seconds: float = 4.0, rate: int = 22_050) -> None:
    import soundfile

    rng = np.random.default_rng(int(bpm))
    signal = np.zeros(int(seconds * rate), np.float32)
    burst = (rng.standard_normal(int(0.03 * rate)) * np.hanning(int(0.03 * rate))).astype(np.float32)
    for start in np.arange(0, seconds, 60.0 / bpm):
        i = int(start * rate)
        signal[i : i + burst.size] += burst[: signal.size - i]
    signal += 0.02 * np.sin(2 * np.pi * 220 * np.arange(signal.size) / rate).astype(np.float32)
    soundfile.write(path, amplitude * signal / np.abs(signal).max(), rate)


@pytest.mark.slow
def test_karma_arousal_tracks_listener_means_from_a_known_mapping(tmp_path):
    """Six WAVs from quiet-and-slow to loud-and-fast; listener arousal means are made from the
    known mapping arousal = 2 + level (levels 0..5, two raters at +-1), valence fixed at 5."""
    root = tmp_path / "aimo"
    root.mkdir()
    shutil.copy(FIXTURE / "emotion_intents_metadata.csv", root)
    clips, ratings = [], []
    for level in range(6):
        name = f"MusicGen_happy_{level + 1}_crop.wav"
        (root / "music_clips" / "MusicGen").mkdir(parents=True, exist_ok=True)
        _click_track(
            root / "music_clips" / "MusicGen" / name.replace("_crop", ""),
            60 + 30 * level,
            0.05 + 0.18 * level,
        )
        clips.append([level + 1, name, "MusicGen", "happy", level + 1, "5.0", f"{2 + level:.1f}", 2])
        ratings += [["P1", name, 4, 1 + level], ["P2", name, 6, 3 + level]]
    for file, header, rows in (
        ("clips_metadata.csv", ["index", "audio_file", "model", "emotion", "file_index", "valence", "arousal", "num_annotators"], clips),
        ("ratings_metadata.csv", ["user", "audio_file", "valence", "arousal"], ratings),
    ):  # fmt: skip
        with (root / file).open("w", newline="") as fh:
            csv.writer(fh).writerows([header, *rows])
    data = load_aimoclips(root)
    assert not data.missing_audio and all(c.audio is not None for c in data.clips.values())
    predicted = {name: estimate_clip_affect(clip.audio) for name, clip in data.clips.items()}
    result = agreement(predicted, data)
    assert result["arousal"]["pearson_r"] > 0.8, result
    assert -1.0 <= result["arousal"]["ccc"] <= 1.0 and result["arousal"]["mae"] >= 0.0
    assert 0.0 <= result["quadrant_agreement"] <= 1.0
