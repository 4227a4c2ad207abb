"""Writes data/sample/: a few SYNTHETIC videos' worth of Karma-MV files, one per published variant.

Run: .venv/bin/python scripts/make_sample_data.py  (deterministic; the output is committed)
The numbers follow a simple hand-written rule set chosen against a model's priors, as in
data/worlds/contrary.yaml (brighter scenes -> quieter music, more motion -> slower tempo, sharp
darkening -> major mode), so that a question's answer needs the causal graph built from the other
videos, not what a language model expects music to do; they are not real measurements.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "sample"
TONICS = ["C", "D", "E", "F", "G", "A", "B"]
LETTERS = "abcd"


def t(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def make_scenes(rng: random.Random, n: int) -> list[dict]:
    scenes = []
    bright, motion, loud, tempo = 110.0, 8.0, -20.0, 110.0
    mode = "major"
    start = 0.0
    for i in range(n):
        if i:
            d_bright = rng.choice([-45, -30, 30, 45]) + rng.uniform(-5, 5)
            d_motion = rng.choice([-6, -3, 3, 6]) + rng.uniform(-1, 1)
            # A step that would leave the range goes the other way, so every cut shows a clear change
            # (a clamped step showed "motion 1.0 -> 1.0" and left the tempo question to the noise).
            d_bright = d_bright if 30 <= bright + d_bright <= 220 else -d_bright
            d_motion = d_motion if 1 <= motion + d_motion <= 30 else -d_motion
            bright, motion = bright + d_bright, motion + d_motion
            # Against the priors (issue 39): brighter -> quieter, more motion -> slower, darker -> major.
            loud = min(-8, max(-36, loud - 0.12 * d_bright + rng.uniform(-1, 1)))
            tempo = min(170, max(70, tempo - 3.0 * d_motion + rng.uniform(-2, 2)))
            mode = "major" if d_bright < -25 else ("minor" if d_bright > 25 else mode)
        length = round(rng.uniform(2.0, 5.0), 3)
        sat = round(rng.uniform(60, 160), 2)
        contrast = round(rng.uniform(20, 60), 2)
        scenes.append(
            {
                "name": f"scene_{i + 1:03d}.mp4",
                "start": start,
                "end": start + length,
                "features": {
                    "Brightness": round(bright, 2),
                    "Total_Visual_Intensity": round(0.5 * motion + 0.3 * contrast + 0.2 * sat / 2.55, 2),
                    "Motion": round(motion, 2),
                    "Saturation": sat,
                    "Contrast": contrast,
                    "Average Loudness (dB)": round(loud, 2),
                    "Key": f"{rng.choice(TONICS)} {mode}",
                    "Moods": [
                        {
                            "label": "energetic" if tempo > 120 else "calm",
                            "score": round(rng.uniform(0.5, 0.9), 3),
                        }
                    ],
                    "Detected_Objects": [{"label": rng.choice(["person", "car", "guitar"]), "score": 0.8}],
                    "Action": [{"label": "dancing" if motion > 10 else "standing", "score": 0.7}],
                    "Tempo (BPM)": round(tempo, 1),
                },
            }
        )
        start += length
    return scenes


def direction(delta: float) -> str:
    return "increases" if delta > 0 else "decreases"


# Options of one question have the same length and share no word with its question, so neither "pick
# the longest option" nor "pick the option with the question's words" beats chance (issue 28, item 5);
# answer letters are balanced within each type (``LetterCycle``). Each option names one musical change
# in the words of the causal graph's events ("loudness decreases"), and no two options name the same
# change: the old options ("it gets softer" beside "it goes silent") left a fact "loudness decreases"
# fitting two options, so the graph could not decide the question (issue 39). With paraphrased options
# ("the mix quiets to a hush") the graph reader, reading them through aliases learned from only four
# sample videos, linked no evidential fact to its option.
VOLUME = {"up": "loudness increases", "down": "loudness decreases", "same": "loudness unchanged",
          "off": "key turns to minor"}  # fmt: skip
TEMPO = {
    "up": "tempo increases",
    "down": "tempo decreases",
    "same": "tempo unchanged",
    "off": "key turns major",
}
LIGHT = {"bright": "bright light", "dim": "dim lighting", "black": "a black void", "white": "a white void"}


class LetterCycle:
    """Answer letters per question type, in shuffled blocks of four (balanced within every type)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.blocks: dict[str, list[str]] = {}

    def next(self, qtype: str) -> str:
        block = self.blocks.setdefault(qtype, [])
        if not block:
            block.extend(LETTERS)
            self.rng.shuffle(block)
        return block.pop()


def place(correct: str, distractors: list[str], letter: str) -> dict[str, str]:
    options = list(distractors)
    options.insert(LETTERS.index(letter), correct)
    assert len({len(o) for o in options}) == 1, options
    return dict(zip(LETTERS, options, strict=True))


def questions_for(rng: random.Random, past: dict, cur: dict, letters: LetterCycle) -> list[dict]:
    pf, cf = past["features"], cur["features"]
    d_bright = cf["Brightness"] - pf["Brightness"]
    d_motion = cf["Motion"] - pf["Motion"]
    loud = "up" if cf["Average Loudness (dB)"] > pf["Average Loudness (dB)"] else "down"
    pace = "up" if cf["Tempo (BPM)"] > pf["Tempo (BPM)"] else "down"
    loud_dir, tempo_dir = direction(2 * (loud == "up") - 1), direction(2 * (pace == "up") - 1)

    # The change in words as well as in numbers ("went up", never the options' "increases"): a model
    # reads the direction from the words and finds the graph's fact about it.
    def way(delta: float) -> str:
        return "up" if delta > 0 else "down"

    seen = (
        f"brightness went {way(d_bright)} ({pf['Brightness']:.0f} \u2192 {cf['Brightness']:.0f}) and motion "
        f"went {way(d_motion)} ({pf['Motion']:.1f} \u2192 {cf['Motion']:.1f})"
    )

    def mcq(qtype: str, text: str, table: dict[str, str], correct: str, why: str) -> dict:
        letter = letters.next(qtype)
        distractors = [v for k, v in table.items() if k != correct]
        return {
            "type": qtype,
            "question": text,
            "options": place(table[correct], distractors, letter),
            "answer": letter,
            "explanation": why,
        }

    return [
        mcq(
            "Evidence Reasoning",
            f"Across the cut, {seen}. What happens to the soundtrack's volume because of this?",
            VOLUME,
            loud,
            f"Loudness moves against brightness in these videos; brightness {direction(d_bright)}, so loudness {loud_dir}.",
        ),
        mcq(
            "Predictive",
            f"The next scene's audio is hidden. On screen, motion went {way(d_motion)} ({pf['Motion']:.1f} "
            f"\u2192 {cf['Motion']:.1f}). What should the music's pace do?",
            TEMPO,
            pace,
            f"Tempo moves against on-screen motion; motion {direction(d_motion)}, so tempo {tempo_dir}.",
        ),
        mcq(
            "Counterfactual",
            f"Across the cut, {seen}. Suppose instead the picture had not changed at all: what would the "
            "soundtrack's volume have done?",
            VOLUME,
            "same",
            "Without the visual change there is no cause for a loudness change.",
        ),
    ]


def transitions(rng: random.Random, scenes: list[dict], answers: LetterCycle, as_strings: bool) -> list[dict]:
    out = []
    for past, cur in itertools.pairwise(scenes):

        def ref(s: dict) -> object:
            return (
                s["name"]
                if as_strings
                else {"name": s["name"], "start_time": t(s["start"]), "end_time": t(s["end"])}
            )

        out.append(
            {
                "current_scene": ref(cur),
                "past_scene": ref(past),
                "questions": questions_for(rng, past, cur, answers),
            }
        )
    return out


def write_features(out: Path, video_id: str, scenes: list[dict]) -> None:
    doc = {"Scenes": {s["name"][:-4]: s["features"] for s in scenes}}
    (out / f"{video_id}_causal_features.json").write_text(json.dumps(doc, indent=2) + "\n")


def main(out: Path = OUT) -> None:
    """Write every sample file into ``out`` (data/sample by default; a test regenerates elsewhere and
    compares)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    rng.shuffle([LETTERS[i % 4] for i in range(400)])  # kept: the scenes' random draws stay as they were
    answers = LetterCycle(11)

    # 1. Standard layout.
    scenes = make_scenes(rng, 24)
    write_features(out, "synthVid001", scenes)
    (out / "synthVid001_qa.json").write_text(
        json.dumps(transitions(rng, scenes, answers, False), indent=2) + "\n"
    )

    # 2. Scenes as plain strings, lower-case / variant type spellings.
    scenes = make_scenes(rng, 20)
    write_features(out, "synthVid002", scenes)
    data = transitions(rng, scenes, answers, True)
    for tr in data:
        tr["questions"][0]["type"] = "evidence reasoning"
        tr["questions"][1]["type"] = "Prediction"
    (out / "synthVid002_qa.json").write_text(json.dumps(data, indent=2) + "\n")

    # 3. Several JSON values in one file: a Video_id header, then the list of transitions.
    scenes = make_scenes(rng, 20)
    write_features(out, "synthVid003", scenes)
    body = (
        json.dumps({"Video_id": "synthVid003"})
        + "\n"
        + json.dumps(transitions(rng, scenes, answers, False), indent=2)
    )
    (out / "synthVid003_qa.json").write_text(body + "\n")

    # 4. Older 4-question layout: no "type"; position tells the kind (description first).
    scenes = make_scenes(rng, 16)
    write_features(out, "synthVid004", scenes)
    data = transitions(rng, scenes, answers, False)
    by_name = {s["name"]: s["features"] for s in scenes}
    for tr in data:
        cur = tr["current_scene"]["name"]
        letter = answers.next("Description")
        bright = by_name[cur]["Brightness"] >= 110
        correct = "bright" if bright else "dim"
        options = place(LIGHT[correct], [v for k, v in LIGHT.items() if k != correct], letter)
        tr["questions"].insert(
            0,
            {
                "question": f"What is shown in {cur}?",
                "options": options,
                "answer": letter,
                "explanation": f"The scene's brightness is {by_name[cur]['Brightness']}.",
            },
        )
        for q in tr["questions"]:
            q.pop("type", None)
    (out / "synthVid004_qa.json").write_text(json.dumps(data, indent=2) + "\n")

    # 5. An object whose values are lists of transitions (one list per video key).
    scenes = make_scenes(rng, 16)
    write_features(out, "synthVid005", scenes)
    (out / "synthVid005_qa.json").write_text(
        json.dumps({"synthVid005": transitions(rng, scenes, answers, False)}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
