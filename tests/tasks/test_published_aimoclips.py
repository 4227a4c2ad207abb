"""AImoclips in the published three-CSV format (GitHub ``HunRotation/AImoclips``: ``_crop.wav`` names in
the CSVs, ``music_clips/<Model>/<name>.wav`` audio, an incomplete grid), written by hand, not from
karma's output.

The neutrality index |m - 5| - |g - 5| on a fixture worked by hand. Two intents, both 2 from the
centre: happy (7, 7) and sad (3, 3). Two ratings per clip, valence = arousal:

| clip              | ratings | clip mean | per rating: |r-5|-2 | clip mean: |m-5|-2 |
|-------------------|---------|-----------|---------------------|--------------------|
| Suno_happy_1      | 1, 9    | 5         | +2, +2              | -2                 |
| Suno_happy_2      | 9, 9    | 9         | +2, +2              | +2                 |
| Suno_sad_1        | 1, 9    | 5         | +2, +2              | -2                 |
| MusicGen_happy_1  | 2, 8    | 5         | +1, +1              | -2                 |
| MusicGen_sad_1    | 4, 4    | 4         | -1, -1              | -1                 |

Per rating: 12 / 10 = +1.2 (looks like a bias *away* from neutrality). Clip means: -5 / 5 = -1.0.
System x intent cells: Suno/happy (5 + 9) / 2 = 7 -> 0, Suno/sad -2, MusicGen/happy -2, MusicGen/sad -1:
-5 / 4 = -1.25. Suno alone: per rating +2.0, clip means -2/3, cells (0 - 2) / 2 = -1.0. MusicGen alone:
per rating 0.0, clip means -1.5, cells -1.5. The listeners' clip means sit closer to the centre than
the intents (the paper's "bias toward emotional neutrality") although single ratings spread wider.
"""

from __future__ import annotations

import wave
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import get_task
from karma.tasks.affect_analysis import deviation_analysis
from karma.tasks.aimoclips import load_aimoclips

INTENTS = """quadrant,emotion,gt_valence,gt_arousal
hv_ha,happy,7,7
lv_la,sad,3,3
"""
CLIPS = """index,audio_file,model,emotion,file_index,valence,arousal,num_annotators
1,Suno_happy_1_crop.wav,Suno,happy,1,5.0,5.0,2
2,Suno_happy_2_crop.wav,Suno,happy,2,9.0,9.0,2
3,Suno_sad_1_crop.wav,Suno,sad,1,5.0,5.0,2
4,MusicGen_happy_1_crop.wav,MusicGen,happy,1,5.0,5.0,2
5,MusicGen_sad_1_crop.wav,MusicGen,sad,1,4.0,4.0,2
"""
RATINGS = """user,audio_file,valence,arousal
P1,Suno_happy_1_crop.wav,1,1
P2,Suno_happy_1_crop.wav,9,9
P1,Suno_happy_2_crop.wav,9,9
P3,Suno_happy_2_crop.wav,9,9
P2,Suno_sad_1_crop.wav,1,1
P3,Suno_sad_1_crop.wav,9,9
P4,MusicGen_happy_1_crop.wav,2,2
P5,MusicGen_happy_1_crop.wav,8,8
P4,MusicGen_sad_1_crop.wav,4,4
P5,MusicGen_sad_1_crop.wav,4,4
"""


def _wav(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)


def _release(root: Path, *, audio: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "emotion_intents_metadata.csv").write_text(INTENTS)
    (root / "clips_metadata.csv").write_text(CLIPS)
    (root / "ratings_metadata.csv").write_text(RATINGS)
    if audio:  # every rated clip but MusicGen_sad_1 has its WAV; one WAV has no row
        for name in ("Suno_happy_1", "Suno_happy_2", "Suno_sad_1", "MusicGen_happy_1", "Udio_calm_3"):
            _wav(root / "music_clips" / name.split("_")[0] / f"{name}.wav")
    return root


def test_neutrality_on_clip_and_cell_means_is_negative_where_per_rating_is_positive(tmp_path):
    result = deviation_analysis(load_aimoclips(_release(tmp_path / "aimoclips")), resamples=200)
    expected = {
        "overall": (1.2, -1.0, -1.25),
        "by_model/Suno": (2.0, -2 / 3, -1.0),
        "by_model/MusicGen": (0.0, -1.5, -1.5),
    }
    for where, (per_rating, clip_means, cell_means) in expected.items():
        stats = result["overall"] if where == "overall" else result["by_model"][where.split("/")[1]]
        for dim in ("valence", "arousal"):
            got = stats[dim]
            assert got["neutrality_index_per_rating"]["estimate"] == pytest.approx(per_rating), where
            assert got["neutrality_index_clip_means"]["estimate"] == pytest.approx(clip_means), where
            assert got["neutrality_index_cell_means"]["estimate"] == pytest.approx(cell_means), where
            assert "neutrality_index" not in got  # only labelled forms
    overall = result["overall"]["valence"]
    assert overall["neutrality_index_cell_means"]["n_cells"] == 4
    for key in ("neutrality_index_clip_means", "neutrality_index_cell_means"):
        assert overall[key]["ci_low"] <= overall[key]["estimate"] <= overall[key]["ci_high"]


def test_validation_reports_crop_renames_missing_cells_and_unmatched_audio(tmp_path):
    root = _release(tmp_path / "aimoclips")
    data = load_aimoclips(root)
    assert data.crop_renamed == 5 and data.missing_audio == ["MusicGen_sad_1.wav"]
    assert data.audio_without_rows == ["Udio/Udio_calm_3.wav"]
    assert data.missing_cells == ["MusicGen_happy_2", "MusicGen_sad_2", "Suno_sad_2"]
    task_data = get_task("aimoclips").load(root)
    assert not task_data.problems
    notes = [str(n) for n in task_data.notes]
    clips, audio = root / "clips_metadata.csv", root / "music_clips"
    assert notes == [
        f"{clips}, field audio_file: 5 clip names end in _crop.wav; matched to the audio's <name>.wav by "
        "dropping _crop",
        f"{clips}: 3 cells of the model x intent x index grid have no clip (never assumed): MusicGen_happy_2, "
        "MusicGen_sad_2, Suno_sad_2",
        f"{clips}, field audio_file: 1 rated clips have no WAV in music_clips/: MusicGen_sad_1.wav",
        f"{audio}: 1 WAVs have no row in clips_metadata.csv: Udio/Udio_calm_3.wav",
    ]
    result = deviation_analysis(data, resamples=20)
    assert result["data"]["audio_without_rows"] == ["Udio/Udio_calm_3.wav"]


def test_without_the_audio_folder_validation_says_audio_was_not_checked(tmp_path):
    root = _release(tmp_path / "aimoclips", audio=False)
    notes = [str(n) for n in get_task("aimoclips").load(root).notes]
    assert f"{root / 'music_clips'}: no such folder: audio not checked" in notes


@pytest.mark.parametrize(
    "name", ["emotion_intents_metadata.csv", "clips_metadata.csv", "ratings_metadata.csv"]
)
def test_a_header_only_csv_is_refused(tmp_path, name):
    root = _release(tmp_path / "aimoclips")
    path = root / name
    path.write_text(path.read_text().splitlines()[0] + "\n")
    with pytest.raises(InputError, match=rf"{name}: no data rows \(only a header\)"):
        load_aimoclips(root, lenient=True)
