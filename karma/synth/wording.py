"""Free wording: every question and answer option worded afresh from a paraphrase grammar.

A world with ``wording: free`` (or ``karma synth --wording free``) does not show event titles
("loudness increases") as options. Each option is phrased anew for each question, the way questions
written one at a time by a language model read: a subject from the variable's words ("the track",
"the mix"), a predicate from the direction's words ("gets louder", "swells"), an optional degree or
manner adverb ("noticeably", "a little"), an optional tail ("right after the cut", "as the scene
changes"), as a clause or a noun phrase ("a louder mix"), in a sentence frame, capitalised or not. So
exact option strings rarely repeat, and a reader that learned answers by their exact text finds
little to learn: it has to read the option's meaning.

None of the grammar's words is an event title of :mod:`karma.core.events`, and the change verbs of
the titles ("increases", "decreases", "shifts") never appear. The distractors of a free-worded
question include the opposite change of the right answer where that is not itself a right answer
(``karma.synth.questions``), so reading the variable without its direction is not enough.

Everything is drawn from the :class:`Phraser`'s own ``random.Random``, seeded from the world's seed
(``karma.synth.generate``), so a world and a seed give the same words.
"""

from __future__ import annotations

import random

# Subjects per variable (each reads with every predicate of that variable).
SUBJECTS: dict[str, tuple[str, ...]] = {
    "loudness": ("the track", "the mix", "the music", "the sound", "the song", "the soundtrack"),
    "tempo": ("the beat", "the rhythm", "the pace of the music", "the song", "the groove", "the percussion"),
    "valence": ("the music", "the song", "the melody", "the soundtrack", "the tune"),
    "arousal": ("the music", "the track", "the song", "the soundtrack", "the performance"),
    "mode": ("the harmony", "the song", "the music", "the accompaniment", "the tune"),
    "brightness": ("the picture", "the image", "the scene", "the lighting", "the shot", "the frame"),
    "saturation": ("the colours", "the hues", "the colour tones", "the colours on screen"),
    "contrast": ("the image", "the picture", "the shot", "the lighting", "the frame"),
    "motion": ("the footage", "the camera work", "the shot", "the movement on screen", "the scene"),
    "visual_intensity": ("the visuals", "the images", "the on-screen visuals", "the pictures"),
}
# Clause predicates per (variable, direction). ``{more}`` takes a degree adverb before a comparative
# ("a little ", "much "), ``{how}`` a manner adverb before a verb ("suddenly "); either may be empty.
PREDICATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("loudness", "up"): ("gets {more}louder", "{how}swells", "grows {more}louder", "{how}gets pumped up",
                         "becomes {more}more forceful", "{how}rises in volume", "turns {more}louder"),
    ("loudness", "down"): ("gets {more}quieter", "{how}softens", "grows {more}quieter", "{how}drops in volume",
                           "becomes {more}more hushed", "{how}fades down", "turns {more}softer"),
    ("tempo", "up"): ("{how}speeds up", "{how}quickens", "gets {more}faster", "{how}picks up",
                      "becomes {more}more rapid", "{how}hurries along"),
    ("tempo", "down"): ("{how}slows down", "gets {more}slower", "{how}slackens", "{how}drags",
                        "becomes {more}more sluggish", "{how}eases off"),
    ("valence", "up"): ("turns {more}happier", "sounds {more}more cheerful", "{how}takes a sunnier turn",
                        "becomes {more}more joyful", "gets {more}more positive in feel"),
    ("valence", "down"): ("turns {more}sadder", "sounds {more}gloomier", "{how}takes a melancholy turn",
                          "becomes {more}more sorrowful", "gets {more}more downcast"),
    ("arousal", "up"): ("gets {more}more energetic", "becomes {more}more intense", "{how}heats up",
                        "grows {more}more excited", "sounds {more}more agitated"),
    ("arousal", "down"): ("{how}calms down", "becomes {more}more relaxed", "{how}mellows out",
                          "grows {more}more subdued", "sounds {more}more laid-back"),
    ("mode", "major_to_minor"): ("{how}turns minor", "{how}slips into a minor key", "{how}takes a minor turn",
                                 "{how}moves from a major to a minor key", "{how}goes minor"),
    ("mode", "minor_to_major"): ("{how}turns major", "{how}lifts into a major key", "{how}resolves into major",
                                 "{how}moves from a minor to a major key", "{how}goes major"),
    ("mode", "is:minor"): ("is in a minor key", "sits in minor", "plays in a minor key", "sounds minor",
                           "stays in a minor tonality"),
    ("mode", "is:major"): ("is in a major key", "sits in major", "plays in a major key", "sounds major",
                           "stays in a major tonality"),
    ("brightness", "up"): ("gets {more}brighter", "{how}lights up", "becomes {more}lighter",
                           "turns {more}brighter", "grows {more}more luminous"),
    ("brightness", "down"): ("gets {more}darker", "{how}dims", "becomes {more}dimmer", "turns {more}darker",
                             "{how}sinks into shadow"),
    ("saturation", "up"): ("get {more}more vivid", "become {more}richer", "{how}intensify",
                           "turn {more}more saturated", "look {more}more vibrant"),
    ("saturation", "down"): ("{how}fade", "{how}wash out", "become {more}more muted", "turn {more}duller",
                             "look {more}paler"),
    ("contrast", "up"): ("gets {more}punchier", "looks {more}harsher", "becomes {more}more dramatic in its tones",
                         "gains {more}stronger shadows and highlights"),
    ("contrast", "down"): ("looks {more}flatter", "gets {more}softer in its tones", "{how}flattens out",
                           "becomes {more}more washed-out in its tones"),
    ("motion", "up"): ("gets {more}busier", "becomes {more}more hectic", "{how}livens up",
                       "turns {more}more frantic", "gets {more}more restless"),
    ("motion", "down"): ("{how}steadies", "becomes {more}stiller", "{how}settles", "gets {more}calmer on screen",
                         "turns {more}more static"),
    ("visual_intensity", "up"): ("feel {more}more intense overall", "become {more}more striking",
                                 "get {more}more overwhelming", "turn {more}more forceful overall"),
    ("visual_intensity", "down"): ("feel {more}less intense overall", "become {more}tamer",
                                   "get {more}more restrained", "turn {more}gentler overall"),
}  # fmt: skip
# Noun phrases per (variable, direction), the form an option often takes ("a slower beat").
NOUNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("loudness", "up"): ("a {more}louder mix", "a rise in volume", "a {more}louder track", "more volume"),
    ("loudness", "down"): ("a {more}quieter mix", "a drop in volume", "a {more}softer track", "less volume"),
    ("tempo", "up"): ("a {more}faster beat", "a quicker pace", "a {more}faster rhythm", "a speed-up"),
    ("tempo", "down"): ("a {more}slower beat", "a slower pace", "a {more}slower rhythm", "a slow-down"),
    ("valence", "up"): ("a {more}happier mood in the music", "a more cheerful tune", "a sunnier sound"),
    ("valence", "down"): ("a {more}sadder mood in the music", "a gloomier tune", "a more melancholy sound"),
    ("arousal", "up"): (
        "a {more}more energetic sound",
        "more excitement in the music",
        "a more intense feel",
    ),
    ("arousal", "down"): ("a {more}calmer sound", "less energy in the music", "a more relaxed feel"),
    ("mode", "major_to_minor"): ("a turn to a minor key", "a move into minor", "a minor-key turn"),
    ("mode", "minor_to_major"): ("a turn to a major key", "a move into major", "a major-key turn"),
    ("mode", "is:minor"): ("a minor key", "minor harmony", "a minor tonality"),
    ("mode", "is:major"): ("a major key", "major harmony", "a major tonality"),
    ("brightness", "up"): ("a {more}brighter picture", "more light in the shot", "a lighter image"),
    ("brightness", "down"): ("a {more}darker picture", "less light in the shot", "a dimmer image"),
    ("saturation", "up"): ("{more}more vivid colours", "richer colours", "a more vibrant palette"),
    ("saturation", "down"): ("{more}more muted colours", "paler colours", "a washed-out palette"),
    ("contrast", "up"): ("a {more}punchier image", "harsher shadows and highlights", "a more dramatic look"),
    ("contrast", "down"): ("a {more}flatter image", "softer shadows and highlights", "a duller look"),
    ("motion", "up"): ("{more}more movement on screen", "busier footage", "a more hectic shot"),
    ("motion", "down"): ("{more}less movement on screen", "stiller footage", "a more static shot"),
    ("visual_intensity", "up"): ("{more}more intense visuals", "a more striking look overall"),
    ("visual_intensity", "down"): ("{more}less intense visuals", "a tamer look overall"),
}
DEGREE = ("", "", "a little ", "noticeably ", "much ", "slightly ", "a bit ", "clearly ")
MANNER = ("", "", "suddenly ", "noticeably ", "gradually ", "sharply ", "gently ", "quickly ")
TAILS = (
    "", "", "", " right after the cut", " as the scene changes", " in the new scene", " once the shot changes",
    " at the cut", " from this scene on", " compared with the previous scene", " in the current scene",
)  # fmt: skip
ACTION_PAIR = (
    "the performer goes from {a} to {b}", "the person stops {a} and starts {b}", "{a} gives way to {b}",
    "the main activity switches from {a} to {b}", "someone who was {a} is now {b}",
    "the on-screen activity changes from {a} to {b}",
)  # fmt: skip
ACTION_TARGET = (
    "the performer starts {b}", "someone begins {b}", "the person switches to {b}", "{b} takes over on screen",
    "the on-screen activity becomes {b}", "we now see someone {b}",
)  # fmt: skip
ACTION_STATE = (
    "the performer is {b}", "someone on screen is {b}", "the person in the shot is {b}",
    "the main activity is {b}", "we see someone {b}",
)  # fmt: skip
OBJECT_APPEARS = (
    "{an} {x} comes into view", "{an} {x} shows up in the shot", "{an} {x} enters the frame",
    "we now see {an} {x}", "{an} {x} turns up on screen", "{an} {x} pops into the picture",
)  # fmt: skip
OBJECT_LEAVES = ("the {x} leaves the frame", "the {x} is no longer visible", "the {x} drops out of the shot")
# Question frames per question form. ``{seen}`` / ``{heard}`` is a clause about the asked change.
QUESTION_FRAMES: dict[str, tuple[str, ...]] = {
    "cause_to_effect": (
        "{Seen}{tail}. Which change in the music does this explain?",
        "Between the previous scene and this one, {seen}. What does that do to the soundtrack?",
        "{Seen}{tail}. How does the music respond?",
        "Watching the cut: {seen}. Which musical change is a result of it?",
        "{Seen}{tail}. Which of these changes in the audio follows from that?",
    ),
    "effect_to_cause": (
        "{Heard}{tail}. What on screen explains it?",
        "Between the previous scene and this one, {heard}. Which visual change is behind it?",
        "{Heard}{tail}. What happened in the video to cause this?",
        "Listening across the cut: {heard}. Which on-screen change accounts for it?",
    ),
    "predictive": (
        "Without the audio of the new scene: {seen}{tail}. What should the music do?",
        "The sound of the current scene is muted. {Seen}{tail}. Which musical change do you expect?",
        "{Seen}{tail}, but we cannot hear the new scene. How is the music likely to change?",
        "Imagine the soundtrack of this scene is unknown. {Seen}. What would you predict for the music?",
    ),
    "counterfactual": (
        "{Happened}. Suppose instead that {instead}. How would the music most likely have changed?",
        "{Happened}. What if {instead} instead? Which change in the soundtrack would that bring?",
        "{Happened}. Had it gone differently, so that {instead}, what would the music have done?",
        "Picture the cut again: {happened}. Imagine {instead}. Which musical change would follow?",
    ),
}
# Explanation frames per question form: the rule in the grammar's words, never an event title.
EXPLANATION_FRAMES: dict[str, tuple[str, ...]] = {
    "cause_to_effect": (
        "{Cause}, and in these videos that is why {effect}.",
        "Because {cause}, {effect}; the other changes are not caused by it.",
        "{Cause}. Here that change is followed by this: {effect}, and this scene shows it.",
    ),
    "effect_to_cause": (
        "{Effect} because {cause}; the other options did not happen or do not do that.",
        "Of the options only this one explains it: {cause}, and that is why {effect}.",
        "{Cause}, and in these videos that is why {effect}.",
    ),
    "predictive": (
        "{Cause}, and in these videos that means {effect}, as the hidden audio confirms.",
        "Since {cause}, expect that {effect}.",
        "{Cause}; that change is followed by this: {effect}.",
    ),
    "counterfactual": (
        "Had it happened that {cause}, then {effect}; the other options are not what that change brings.",
        "In these videos, when {cause}, {effect}.",
        "The alternative would have mattered: in these videos, when {cause}, {effect}.",
    ),
}
STAYS = ("stays about the same", "barely changes", "hardly moves", "holds steady")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _article(label: str) -> str:
    return "an" if label[:1].lower() in "aeiou" else "a"


def opposite_event(event_id: str) -> str | None:
    """The opposite change of an event (``music:tempo:up`` -> ``music:tempo:down``, a mode flip the
    other way, the other mode state, an action shift reversed); None when it has none."""
    modality, variable, direction = event_id.split(":", 2)
    swap = {"up": "down", "down": "up", "major_to_minor": "minor_to_major", "minor_to_major": "major_to_minor",
            "is:major": "is:minor", "is:minor": "is:major"}  # fmt: skip
    if direction in swap:
        return f"{modality}:{variable}:{swap[direction]}"
    if variable == "action" and "->" in direction:
        a, b = direction.split("->", 1)
        return None if a == "*" else f"{modality}:{variable}:{b}->{a}"
    return None


class Phraser:
    """Words events as options and question clauses, afresh at each call (see the module doc)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _fill(self, template: str) -> str:
        rng = self.rng
        return template.replace("{more}", rng.choice(DEGREE)).replace("{how}", rng.choice(MANNER))

    def clause(self, event_id: str, *, action_before: str | None = None) -> str:
        """A lower-case clause stating the change (``the mix noticeably swells``)."""
        rng = self.rng
        _, variable, direction = event_id.split(":", 2)
        if variable == "action" and direction.startswith("is:"):
            return rng.choice(ACTION_STATE).format(b=direction[3:])
        if variable == "action" and "->" in direction:
            a, b = direction.split("->", 1)
            if a == "*" and action_before is not None and action_before != b:
                a = action_before
            if a == "*":
                return rng.choice(ACTION_TARGET).format(b=b)
            return rng.choice(ACTION_PAIR).format(a=a, b=b)
        if variable == "object" and ":" in direction:
            kind, label = direction.split(":", 1)
            pool = OBJECT_APPEARS if kind == "appears" else OBJECT_LEAVES
            return rng.choice(pool).format(an=_article(label), x=label)
        predicates = PREDICATES.get((variable, direction))
        if predicates is None:
            name = variable.replace("_", " ")
            word = {"up": "goes up", "down": "goes down"}.get(direction, direction.replace("_", " "))
            return f"the {name} {word}"
        return f"{rng.choice(SUBJECTS[variable])} {self._fill(rng.choice(predicates))}"

    def option(self, event_id: str) -> str:
        """An option text: a clause or a noun phrase, with an optional tail, in a random case."""
        rng = self.rng
        _, variable, direction = event_id.split(":", 2)
        nouns = NOUNS.get((variable, direction))
        use_noun = bool(nouns) and rng.random() < 0.3
        text = self._fill(rng.choice(nouns)) if use_noun else self.clause(event_id)  # type: ignore[arg-type]
        text += rng.choice(TAILS)
        if rng.random() < 0.6:
            text = _cap(text)
        if rng.random() < 0.2:
            text += "."
        return text

    def stays(self, variable: str) -> str:
        """A clause saying a numeric variable did not move across the cut."""
        subjects = SUBJECTS.get(variable, (f"the {variable.replace('_', ' ')}",))
        return f"{self.rng.choice(subjects)} {self.rng.choice(STAYS)}"

    def explanation(self, form: str, cause: str, effect: str, action_before: str | None = None) -> str:
        """Why the answer is right, in the grammar's words (the builder's text relations get no titles)."""
        frame = self.rng.choice(EXPLANATION_FRAMES[form])
        cause_text = self.clause(cause, action_before=action_before)
        effect_text = self.clause(effect)
        return frame.format(
            cause=cause_text, Cause=_cap(cause_text), effect=effect_text, Effect=_cap(effect_text)
        )

    def question(self, form: str, **parts: str) -> str:
        """A question of ``form`` from its frame; ``parts`` fill ``seen`` / ``heard`` / ``happened`` /
        ``instead`` (capitalised where a frame starts with them)."""
        frame = self.rng.choice(QUESTION_FRAMES[form])
        values = {"tail": self.rng.choice(TAILS[:6])}
        for key, value in parts.items():
            values[key] = value
            values[_cap(key)] = _cap(value)
        return frame.format(**values)
