"""Writes data/sample/: a few SYNTHETIC videos' worth of Karma-MV files, one per published variant.

Run: .venv/bin/python scripts/make_sample_data.py  (deterministic; the output is committed)
The numbers follow a simple hand-written rule set (brighter/faster scenes -> louder, faster music;
darker -> minor mode) so that the questions have a defensible answer; they are not real measurements.
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
            bright = min(220, max(30, bright + d_bright))
            motion = min(30, max(1, motion + d_motion))
            loud = min(-8, max(-36, loud + 0.12 * d_bright + rng.uniform(-1, 1)))
            tempo = min(170, max(70, tempo + 3.0 * d_motion + rng.uniform(-2, 2)))
            mode = "minor" if d_bright < -25 else ("major" if d_bright > 25 else mode)
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
# answer letters are balanced within each type (``LetterCycle``). Explanations are unchanged.
VOLUME = {"up": "it gets louder", "down": "it gets softer", "same": "it stays level", "off": "it goes silent"}
TEMPO = {"up": "it runs faster", "down": "it runs slower", "same": "it holds still", "off": "it stops fully"}
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
    seen = (
        f"brightness went {pf['Brightness']:.0f} \u2192 {cf['Brightness']:.0f} and motion "
        f"{pf['Motion']:.1f} \u2192 {cf['Motion']:.1f}"
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
            f"Loudness follows brightness in these videos; brightness {direction(d_bright)}, so loudness {loud_dir}.",
        ),
        mcq(
            "Predictive",
            f"The next scene's audio is hidden. On screen, motion went {pf['Motion']:.1f} \u2192 "
            f"{cf['Motion']:.1f}. What should its tempo do?",
            TEMPO,
            pace,
            f"Tempo tracks on-screen motion; motion {direction(d_motion)}, so tempo {tempo_dir}.",
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


def write_features(video_id: str, scenes: list[dict]) -> None:
    doc = {"Scenes": {s["name"][:-4]: s["features"] for s in scenes}}
    (OUT / f"{video_id}_causal_features.json").write_text(json.dumps(doc, indent=2) + "\n")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    rng.shuffle([LETTERS[i % 4] for i in range(400)])  # kept: the scenes' random draws stay as they were
    answers = LetterCycle(11)

    # 1. Standard layout.
    scenes = make_scenes(rng, 24)
    write_features("synthVid001", scenes)
    (OUT / "synthVid001_qa.json").write_text(
        json.dumps(transitions(rng, scenes, answers, False), indent=2) + "\n"
    )

    # 2. Scenes as plain strings, lower-case / variant type spellings.
    scenes = make_scenes(rng, 20)
    write_features("synthVid002", scenes)
    data = transitions(rng, scenes, answers, True)
    for tr in data:
        tr["questions"][0]["type"] = "evidence reasoning"
        tr["questions"][1]["type"] = "Prediction"
    (OUT / "synthVid002_qa.json").write_text(json.dumps(data, indent=2) + "\n")

    # 3. Several JSON values in one file: a Video_id header, then the list of transitions.
    scenes = make_scenes(rng, 20)
    write_features("synthVid003", scenes)
    body = (
        json.dumps({"Video_id": "synthVid003"})
        + "\n"
        + json.dumps(transitions(rng, scenes, answers, False), indent=2)
    )
    (OUT / "synthVid003_qa.json").write_text(body + "\n")

    # 4. Older 4-question layout: no "type"; position tells the kind (description first).
    scenes = make_scenes(rng, 16)
    write_features("synthVid004", scenes)
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
    (OUT / "synthVid004_qa.json").write_text(json.dumps(data, indent=2) + "\n")

    # 5. An object whose values are lists of transitions (one list per video key).
    scenes = make_scenes(rng, 16)
    write_features("synthVid005", scenes)
    (OUT / "synthVid005_qa.json").write_text(
        json.dumps({"synthVid005": transitions(rng, scenes, answers, False)}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
