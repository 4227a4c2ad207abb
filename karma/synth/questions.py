"""Three multiple-choice questions per transition, each answered by the world's rules.

* Evidence Reasoning (audio visible): a visual change happened; which musical change does it explain?
  Or (share ``effect_to_cause_probability``) a musical change happened; which on-screen change explains it?
* Predictive (current audio hidden): a visual change happened; which musical change should follow?
* Counterfactual: had a visual change gone another way, which musical change would it have caused?

Options are event titles from :mod:`karma.events` (``loudness increases``, ``mode shifts from major to
minor``), so a scorer without a model can match them to graph nodes. Distractors come from the same
vocabulary and are never a ground-truth effect (or cause) of the asked change. Question texts avoid the
words of the option vocabulary (numbers with arrows instead of "increases"), the position of the
answer is balanced by blocks of four, and the answer's length rank is steered so that "pick the longest
option" stays at chance.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from karma.core.events import parse_event_id
from karma.core.records import OPTION_LETTERS
from karma.synth.truth import GroundTruth, visual_event
from karma.synth.wording import Phraser, opposite_event

ASSOCIATION = "association"
"""Kind of a truth edge that is a known link but not a rule: kept out of every distractor pool, never an
answer (``karma.qa`` marks a graph's undirected associations and co-movements so)."""
UNITS = {"loudness": " dB", "tempo": " BPM", "valence": " (1-9 scale)", "arousal": " (1-9 scale)"}
VISUAL_NAMES = {
    "brightness": "brightness",
    "saturation": "colour saturation",
    "contrast": "contrast",
    "motion": "motion",
    "visual_intensity": "overall visual intensity",
}
# Paraphrases per question form. They name changes with numbers and arrows and never use a word of
# the option vocabulary (increases, shifts, loudness, brightness, ...), so word overlap guesses nothing.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "cause_to_effect": (
        "Across the cut between the past scene and the current scene, {seen}. "
        "Which change in the current scene's soundtrack does this on-screen change explain?",
        "Comparing the past scene with the current scene, {seen}. "
        "What change in the soundtrack is this on-screen change responsible for?",
        "At the cut into the current scene, {seen}. Which soundtrack change does this account for?",
    ),
    "effect_to_cause": (
        "Across the cut between the past scene and the current scene, the soundtrack's {heard}. "
        "Which on-screen change best explains this?",
        "Comparing the past scene with the current scene, the soundtrack's {heard}. "
        "What happened on screen that accounts for this?",
        "At the cut into the current scene, the soundtrack's {heard}. Which on-screen change is responsible?",
    ),
    "predictive": (
        "The current scene's audio is hidden. Across the cut between the past scene and the current scene, "
        "{seen}. Which change should the current scene's soundtrack most likely show?",
        "Without hearing the current scene: comparing the past scene with the current scene, {seen}. "
        "What change in the soundtrack should be expected?",
        "The current scene is silent here. At the cut into it, {seen}. Which soundtrack change is most likely?",
    ),
    "counterfactual": (
        "Across the cut between the past scene and the current scene, {happened}. Suppose {instead}. "
        "Which change would the current scene's soundtrack most likely have shown?",
        "Comparing the past scene with the current scene, {happened}. If {instead}, "
        "what change would the soundtrack most likely have shown?",
        "At the cut into the current scene, {happened}. Imagine {instead}: "
        "which soundtrack change would that have brought?",
    ),
}


@dataclass
class Cut:
    """What one transition looks like, in the terms the question templates need."""

    visual_before: dict[str, float]
    visual_after: dict[str, float]
    music_before: dict[str, float]
    music_after: dict[str, float]
    key_before: str
    key_after: str
    past_minor: bool
    action_before: str
    action_after: str
    objects_before: set[str]
    objects_after: set[str]
    visual_events: list[str]
    music_events: list[str]
    fired: list[tuple[str, str]]


@dataclass
class DraftQuestion:
    """A question plus its truth record (the part of question_truth.jsonl that is not ids)."""

    type: str
    question: str
    options: dict[str, str]
    answer: str
    explanation: str
    form: str
    cause_events: list[str]
    effect_event: str
    answer_event: str
    option_events: dict[str, str]

    def published(self) -> dict[str, object]:
        """The question as the published QA file holds it (type, question, options, answer, explanation)."""
        return {
            "type": self.type,
            "question": self.question,
            "options": self.options,
            "answer": self.answer,
            "explanation": self.explanation,
        }


@dataclass
class _LengthSteer:
    """Error diffusion that keeps 'the answer is the strictly longest option' at a 25% rate."""

    asked: int = 0
    longest: float = 0.0


@dataclass
class QuestionMaker:
    """Draws the questions of a world transition by transition (stateful: letter blocks, steering)."""

    truth: GroundTruth
    rng: random.Random
    music_vocab: list[str]
    visual_numeric_vocab: list[str]
    action_vocab: list[str]
    object_vocab: list[str]
    effect_to_cause_probability: float
    trap_probability: float
    max_traps: int
    visual_ranges: dict[str, tuple[float, float, float, float]]
    """visual variable -> (low, high, threshold, scale)."""
    texts: dict[str, str] = field(default_factory=dict)
    """The world's option texts (event id or ``...{label}`` pattern -> text); titles where absent."""
    where: str = "in this world"
    """Where the rules come from, as the explanations say it (``in graph fold2`` for real videos)."""
    answerable: frozenset[str] | None = None
    """Event ids a counterfactual may ask about (its cause and answer); None: every event of the truth.
    Questions about real videos leave out variables their features do not measure reliably."""
    letters_per_type: bool = False
    """Balance answer letters within each question type and over the whole set at once (not by blocks
    of four over the whole set): a small set (``karma qa make`` on a few videos) stays balanced type by
    type."""
    visual_decimals: int = 1
    """Decimals of the visual values the question texts quote (3 on 0-1 scales)."""
    phraser: Phraser | None = None
    """Free wording (``wording: free``, :mod:`karma.synth.wording`): options and question texts worded
    afresh per question, the opposite change among the distractors. None: titles and fixed templates."""
    _titles: dict[str, str] = field(default_factory=dict)
    _letters: list[str] = field(default_factory=list)
    _type_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    _steer: dict[str, _LengthSteer] = field(default_factory=dict)

    # -- vocabulary -----------------------------------------------------------------------------
    def title(self, event_id: str) -> str:
        title = self._titles.get(event_id)
        if title is None:
            title = self._titles[event_id] = (
                option_text(self.texts, event_id) or parse_event_id(event_id).title
            )
        return title

    def _next_letter(self, kind: str = "") -> str:
        if self.letters_per_type:
            # The letter least used in this type, then least used overall (ties at random): the counts of
            # a type stay within one of each other, and the overall counts close to it.
            per_type = self._type_counts.setdefault(kind.split("-")[0], dict.fromkeys(OPTION_LETTERS, 0))
            overall = self._type_counts.setdefault("", dict.fromkeys(OPTION_LETTERS, 0))
            low = min((per_type[x], overall[x]) for x in OPTION_LETTERS)
            letter = self.rng.choice([x for x in OPTION_LETTERS if (per_type[x], overall[x]) == low])
            per_type[letter] += 1
            overall[letter] += 1
            return letter
        if not self._letters:
            block = list(OPTION_LETTERS)
            self.rng.shuffle(block)
            self._letters = block
        return self._letters.pop()

    # -- text -----------------------------------------------------------------------------------
    @staticmethod
    def _fmt(value: float, decimals: int = 1) -> str:
        return f"{value:.{decimals}f}"

    def describe_visual(self, event_id: str, cut: Cut) -> str:
        _, variable, direction = event_id.split(":", 2)
        if variable == "action" and direction.startswith("is:"):
            return f"the main action is {direction[3:]}"
        if variable == "action":
            return f"the main action went {cut.action_before} → {cut.action_after}"
        if variable == "object":
            label = direction.split(":", 1)[1]
            return f"{_article(label)} {label} came into view"
        name = VISUAL_NAMES.get(variable, variable)
        before, after = cut.visual_before[variable], cut.visual_after[variable]
        d = self.visual_decimals
        return f"{name} went {self._fmt(before, d)} → {self._fmt(after, d)}"

    def describe_music(self, event_id: str, cut: Cut) -> str:
        _, variable, _ = event_id.split(":", 2)
        if variable == "mode":
            return f"key went {cut.key_before} → {cut.key_after}"
        before, after = cut.music_before[variable], cut.music_after[variable]
        return f"{variable} went {self._fmt(before)} → {self._fmt(after)}{UNITS.get(variable, '')}"

    # -- option sets ----------------------------------------------------------------------------
    def _options(
        self, kind: str, answer: str, pools: list[list[str]], traps: list[str], *, ordered: bool = False
    ) -> tuple[dict[str, str], dict[str, str], str]:
        """Pick three distractors from the first pool with enough distinct titles; place the answer."""
        answer_title = self.title(answer)
        pool: list[str] = []
        for candidate in pools:
            seen = {answer_title}
            pool = []
            for event_id in candidate:
                title = self.title(event_id)
                if title not in seen:
                    seen.add(title)
                    pool.append(event_id)
            if len(pool) >= 3:
                break
        if len(pool) < 3:
            raise ValueError(f"not enough distractors for {answer!r} (pool {pool})")
        if self.phraser is not None:
            return self._free_options(kind, answer, pool, traps, ordered=ordered)
        rng = self.rng
        titles = self._titles  # every pool entry was cached by the loop above
        size = {e: len(titles[e]) for e in pool}
        steer = self._steer.setdefault(kind, _LengthSteer())
        length = len(answer_title)
        want_longest = rng.random() < 0.25 * (steer.asked + 1) - steer.longest
        chosen: list[str] = []
        trap_pool = [t for t in traps if t in pool]
        if not ordered:
            rng.shuffle(trap_pool)
        if want_longest:
            trap_pool = [t for t in trap_pool if size[t] < length]
        for trap in trap_pool:
            if len(chosen) >= self.max_traps:
                break
            if rng.random() < self.trap_probability:
                chosen.append(trap)
        rest = [e for e in pool if e not in chosen]
        shorter = [e for e in rest if size[e] < length]
        if want_longest and len(shorter) >= 3 - len(chosen):
            chosen += rng.sample(shorter, 3 - len(chosen))
        else:
            if not any(size[e] > length for e in chosen):
                longer = [e for e in rest if size[e] > length]
                if longer:
                    chosen.append(rng.choice(longer))
            rest = [e for e in pool if e not in chosen]
            chosen += rng.sample(rest, 3 - len(chosen))
        lengths = [size[e] for e in chosen]
        top = max(lengths)
        if length > top:
            steer.longest += 1.0
        elif length == top:
            steer.longest += 1.0 / (1 + lengths.count(top))
        steer.asked += 1

        letter = self._next_letter(kind)
        rng.shuffle(chosen)
        others = iter(chosen)
        option_events = {x: (answer if x == letter else next(others)) for x in OPTION_LETTERS}
        options = {x: titles[e] for x, e in option_events.items()}
        return options, option_events, letter

    def _free_options(
        self, kind: str, answer: str, pool: list[str], traps: list[str], *, ordered: bool
    ) -> tuple[dict[str, str], dict[str, str], str]:
        """Free wording: the opposite change first (when it is a valid distractor), then traps, then the
        rest of the pool; every option worded afresh. The answer's wording is drawn so that it is the
        strictly longest option in about 25 % of the questions of each kind (error diffusion)."""
        rng, phraser = self.rng, self.phraser
        assert phraser is not None
        chosen: list[str] = []
        opposite = opposite_event(answer)
        if opposite is not None and opposite in pool:
            chosen.append(opposite)
        trap_pool = [t for t in traps if t in pool and t not in chosen]
        if not ordered:
            rng.shuffle(trap_pool)
        taken = 0
        for trap in trap_pool:
            if taken >= self.max_traps or len(chosen) >= 3:
                break
            if rng.random() < self.trap_probability:
                chosen.append(trap)
                taken += 1
        rest = [e for e in pool if e not in chosen]
        chosen += rng.sample(rest, 3 - len(chosen))
        texts: dict[str, str] = {}
        for event_id in chosen:
            text = phraser.option(event_id)
            for _ in range(10):
                if text not in texts.values():
                    break
                text = phraser.option(event_id)
            texts[event_id] = text
        steer = self._steer.setdefault(kind, _LengthSteer())
        want_longest = rng.random() < 0.25 * (steer.asked + 1) - steer.longest
        top = max(len(t) for t in texts.values())
        drafts = [phraser.option(answer) for _ in range(6)]
        drafts = [t for t in drafts if t not in texts.values()] or drafts
        fitting = [t for t in drafts if (len(t) > top) == want_longest]
        answer_text = (fitting or drafts)[0]
        lengths = [len(t) for t in texts.values()]
        if len(answer_text) > top:
            steer.longest += 1.0
        elif len(answer_text) == top:
            steer.longest += 1.0 / (1 + lengths.count(top))
        steer.asked += 1
        letter = self._next_letter(kind)
        rng.shuffle(chosen)
        others = iter(chosen)
        option_events = {x: (answer if x == letter else next(others)) for x in OPTION_LETTERS}
        options = {x: (answer_text if x == letter else texts[e]) for x, e in option_events.items()}
        return options, option_events, letter

    def _free_visual(self, event_id: str, cut: Cut) -> str:
        """Free wording of a visual change that happened, with its numbers half of the time."""
        assert self.phraser is not None
        text = self.phraser.clause(event_id, action_before=cut.action_before)
        if event_id.split(":")[1] in cut.visual_before and self.rng.random() < 0.5:
            text += f", as {self.describe_visual(event_id, cut)}"
        return text

    def _free_music(self, event_id: str, cut: Cut) -> str:
        """Free wording of a musical change that happened, with its numbers half of the time."""
        assert self.phraser is not None
        text = self.phraser.clause(event_id)
        if event_id.split(":")[1] in cut.music_before and self.rng.random() < 0.5:
            text += f", as {self.describe_music(event_id, cut)}"
        return text

    def _free_happened(self, cause: str, cut: Cut, happened: str) -> str:
        """Free wording of what the counterfactual's variable really did across the cut."""
        phraser = self.phraser
        assert phraser is not None
        _, variable, _ = cause.split(":", 2)
        if variable in cut.visual_before:
            moved = [e for e in cut.visual_events if e.split(":")[1] == variable]
            text = phraser.clause(moved[0]) if moved else phraser.stays(variable)
        elif variable == "action" and cause.split(":", 2)[2].startswith("is:"):
            return f"the performer is {cut.action_after}"
        elif variable == "action":
            if cut.action_after == cut.action_before:
                text = f"the performer keeps {cut.action_before}"
            else:
                text = phraser.clause(f"visual:action:{cut.action_before}->{cut.action_after}")
        else:
            return f"there is no {cause.rsplit(':', 1)[1]} in view"
        if variable in cut.visual_before and self.rng.random() < 0.5:
            text += f", as {happened}"
        return text

    # -- the three questions ----------------------------------------------------------------------
    def make(self, cut: Cut, *, require_counterfactual: bool = True) -> list[DraftQuestion]:
        """Evidential, predictive and counterfactual questions of ``cut`` (whose ``fired`` is not empty).

        Without ``require_counterfactual``, a cut where no counterfactual is possible gets two questions
        instead of an error."""
        rng = self.rng
        fired = cut.fired
        first = rng.choice(fired)
        others = [p for p in fired if p[0] != first[0]] or [p for p in fired if p != first] or [first]
        second = rng.choice(others)
        evidential = (
            self._effect_to_cause(first, cut)
            if rng.random() < self.effect_to_cause_probability
            else self._cause_to_effect(first, cut)
        )
        drafts = [evidential, self._predictive(second, cut)]
        if require_counterfactual or self._counterfactual_possible(cut):
            drafts.append(self._counterfactual(cut))
        return drafts

    def _strength(self, cause: str, effect: str) -> float:
        return self.truth.edge_of[(cause, effect)].strength

    def _cause_to_effect(self, pair: tuple[str, str], cut: Cut) -> DraftQuestion:
        cause, effect = pair
        excluded = set(self.truth.effects_of.get(cause, ()))
        pool = [e for e in self.music_vocab if e not in excluded]
        traps = [e for e in cut.music_events if e not in excluded]
        options, option_events, letter = self._options("evidential-ce", effect, [pool], traps)
        seen = self.describe_visual(cause, cut)
        if self.phraser is not None:
            text = self.phraser.question("cause_to_effect", seen=self._free_visual(cause, cut))
        else:
            text = self.rng.choice(TEMPLATES["cause_to_effect"]).format(seen=seen)
        explanation = (
            f"{_cap(seen)} ({self.title(cause)}). {_cap(self.where)} {self.title(cause)} causes "
            f"{self.title(effect)} (rule strength {self._strength(cause, effect):.2f}), and the current scene "
            f"shows it: {self.describe_music(effect, cut)}. The other options are not effects of this change."
        )
        if self.phraser is not None:
            explanation = self.phraser.explanation("cause_to_effect", cause, effect, cut.action_before)
        return DraftQuestion(
            "Evidence Reasoning", text, options, letter, explanation, "cause_to_effect",
            [cause], effect, effect, option_events,
        )  # fmt: skip

    def _effect_to_cause(self, pair: tuple[str, str], cut: Cut) -> DraftQuestion:
        cause, effect = pair
        excluded = set(self.truth.causes_of.get(effect, ())) | self.truth.proxies_of.get(effect, set())
        vocab = (
            self.visual_numeric_vocab
            + self.rng.sample(self.action_vocab, min(4, len(self.action_vocab)))
            + self.rng.sample(self.object_vocab, min(3, len(self.object_vocab)))
        )
        pool = [e for e in vocab if e not in excluded]
        partners = self.truth.trend_partners_of.get(effect, set())
        occurred = [
            e for e in cut.visual_events if e not in excluded and not e.startswith("visual:object:disappears")
        ]
        others = [e for e in occurred if e not in partners]
        self.rng.shuffle(others)
        traps = [e for e in occurred if e in partners] + others
        pool += [e for e in traps if e not in pool]
        options, option_events, letter = self._options("evidential-ec", cause, [pool], traps, ordered=True)
        heard = self.describe_music(effect, cut)
        if self.phraser is not None:
            text = self.phraser.question("effect_to_cause", heard=self._free_music(effect, cut))
        else:
            text = self.rng.choice(TEMPLATES["effect_to_cause"]).format(heard=heard)
        explanation = (
            f"{_cap(heard)} ({self.title(effect)}). Of the options only {self.title(cause)} causes "
            f"{self.title(effect)} {self.where} (rule strength {self._strength(cause, effect):.2f}), and it "
            f"happened: {self.describe_visual(cause, cut)}. The other options did not happen or do not cause it."
        )
        if self.phraser is not None:
            explanation = self.phraser.explanation("effect_to_cause", cause, effect, cut.action_before)
        return DraftQuestion(
            "Evidence Reasoning", text, options, letter, explanation, "effect_to_cause",
            [cause], effect, cause, option_events,
        )  # fmt: skip

    def _predictive(self, pair: tuple[str, str], cut: Cut) -> DraftQuestion:
        cause, effect = pair
        own = set(self.truth.effects_of.get(cause, ()))
        strict = own.union(*(self.truth.effects_of.get(v, ()) for v in cut.visual_events))
        pools = [
            [e for e in self.music_vocab if e not in strict],
            [e for e in self.music_vocab if e not in own],
        ]
        traps = [e for e in cut.music_events if e not in strict]
        options, option_events, letter = self._options("predictive", effect, pools, traps)
        seen = self.describe_visual(cause, cut)
        if self.phraser is not None:
            text = self.phraser.question("predictive", seen=self._free_visual(cause, cut))
        else:
            text = self.rng.choice(TEMPLATES["predictive"]).format(seen=seen)
        explanation = (
            f"{_cap(seen)} ({self.title(cause)}), which {self.where} causes {self.title(effect)} "
            f"(rule strength {self._strength(cause, effect):.2f}). The hidden audio indeed shows it: "
            f"{self.describe_music(effect, cut)}."
        )
        if self.phraser is not None:
            explanation = self.phraser.explanation("predictive", cause, effect, cut.action_before)
        return DraftQuestion(
            "Predictive", text, options, letter, explanation, "cause_to_effect",
            [cause], effect, effect, option_events,
        )  # fmt: skip

    def _counterfactual_candidates(self, cut: Cut) -> list[tuple[str, str, str]]:
        """(counterfactual cause event, text of what happened, text of the alternative)."""
        out: list[tuple[str, str, str]] = []
        for cause in self.truth.effects_of:
            if self.answerable is not None and cause not in self.answerable:
                continue
            _, variable, direction = cause.split(":", 2)
            if variable in self.visual_ranges:
                if visual_event(variable, direction) in cut.visual_events:
                    continue
                low, high, threshold, scale = self.visual_ranges[variable]
                before = cut.visual_before[variable]
                step = max(1.5 * threshold, scale)
                alternative = min(before + step, high) if direction == "up" else max(before - step, low)
                if abs(alternative - before) < threshold:
                    continue
                name = VISUAL_NAMES.get(variable, variable)
                d = self.visual_decimals
                after = self._fmt(cut.visual_after[variable], d)
                happened = f"{name} went {self._fmt(before, d)} → {after}"
                instead = f"{name} had instead gone {self._fmt(before, d)} → {self._fmt(alternative, d)}"
                out.append((cause, happened, instead))
            elif variable == "action" and direction.startswith("is:"):
                label = direction[3:]
                if cut.action_after == label:
                    continue
                happened = f"the main action was {cut.action_after}"
                instead = f"the main action had instead been {label}"
                out.append((cause, happened, instead))
            elif variable == "action":
                source, target = direction.split("->", 1)
                if source == "*":
                    # "Shift to target from any action": the action before must not be target already.
                    if cut.action_before == target or cut.action_after == target:
                        continue
                elif source != cut.action_before or cut.action_after == target:
                    continue
                happened = (
                    f"the main action stayed {cut.action_before}"
                    if cut.action_after == cut.action_before
                    else f"the main action went {cut.action_before} → {cut.action_after}"
                )
                instead = f"the main action had instead gone {cut.action_before} → {target}"
                out.append((cause, happened, instead))
            elif variable == "object":
                label = direction.split(":", 1)[1]
                if label in cut.objects_before or label in cut.objects_after:
                    continue
                out.append(
                    (cause, f"no {label} was in view", f"{_article(label)} {label} had come into view")
                )
        out.sort()
        return out

    def _feasible_effects(self, cause: str, cut: Cut) -> list[str]:
        effects = []
        for effect in self.truth.effects_of[cause]:
            if self.answerable is not None and effect not in self.answerable:
                continue
            if self.truth.edge_of[(cause, effect)].kind == ASSOCIATION:
                continue
            if effect == "music:mode:major_to_minor" and cut.past_minor:
                continue
            if effect == "music:mode:minor_to_major" and not cut.past_minor:
                continue
            if effect.startswith("music:mode:is:") and self._rival_state(cause, effect, cut):
                # Another change that did happen sets the other mode: the alternative's state is moot.
                continue
            effects.append(effect)
        return effects

    def _rival_state(self, cause: str, effect: str, cut: Cut) -> bool:
        variable = cause.split(":")[1]
        return any(
            other.startswith("music:mode:is:") and other != effect
            for event in cut.visual_events
            if event.split(":")[1] != variable
            for other in self.truth.effects_of.get(event, ())
        )

    def _counterfactual_possible(self, cut: Cut) -> bool:
        return any(self._feasible_effects(c[0], cut) for c in self._counterfactual_candidates(cut))

    def _counterfactual(self, cut: Cut) -> DraftQuestion:
        rng = self.rng
        candidates = [c for c in self._counterfactual_candidates(cut) if self._feasible_effects(c[0], cut)]
        if not candidates:
            raise ValueError("no counterfactual visual change is possible in this cut")
        cause, happened, instead = rng.choice(candidates)
        effect = rng.choice(self._feasible_effects(cause, cut))
        variable = cause.split(":")[1]
        own = set(self.truth.effects_of[cause])
        still = [v for v in cut.visual_events if v.split(":")[1] != variable]
        strict = own.union(*(self.truth.effects_of.get(v, ()) for v in still))
        pools = [
            [e for e in self.music_vocab if e not in strict],
            [e for e in self.music_vocab if e not in own],
        ]
        traps = [e for e in cut.music_events if e not in strict]
        options, option_events, letter = self._options("counterfactual", effect, pools, traps)
        if self.phraser is not None:
            text = self.phraser.question(
                "counterfactual",
                happened=self._free_happened(cause, cut, happened),
                instead=self.phraser.clause(cause, action_before=cut.action_before),
            )
        else:
            text = self.rng.choice(TEMPLATES["counterfactual"]).format(happened=happened, instead=instead)
        explanation = (
            f"The alternative would be {self.title(cause)}, which {self.where} causes {self.title(effect)} "
            f"(rule strength {self._strength(cause, effect):.2f}). The other options are not effects of that change."
        )
        if self.phraser is not None:
            explanation = self.phraser.explanation("counterfactual", cause, effect, cut.action_before)
        return DraftQuestion(
            "Counterfactual", text, options, letter, explanation, "counterfactual",
            [cause], effect, effect, option_events,
        )  # fmt: skip


def option_text(texts: dict[str, str], event_id: str) -> str | None:
    """The world's text for an event: an exact key, else a key with a ``{label}`` placeholder whose
    fixed parts match (``visual:action:*->{label}`` matches ``visual:action:*->running``)."""
    if event_id in texts:
        return texts[event_id]
    for key, text in texts.items():
        match = _placeholder_re(key).fullmatch(event_id) if "{" in key else None
        if match is not None:
            return text.replace(key[key.index("{") : key.index("}") + 1], match.group(1))
    return None


def _placeholder_re(key: str) -> re.Pattern[str]:
    start, end = key.index("{"), key.index("}")
    return re.compile(re.escape(key[:start]) + "(.+)" + re.escape(key[end + 1 :]))


def _article(label: str) -> str:
    return "an" if label[:1].lower() in "aeiou" else "a"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
