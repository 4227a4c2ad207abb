"""A family of worlds: random rule sets drawn from a seed, on a base world's variables.

karma's shipped worlds each hold one hand-written rule set, so a builder or reader developed on them
can fit their rules. :func:`draw_family_world` draws a new rule set for every seed, in the forms other
data has: two numeric rules of unequal strength with random signs (counter-intuitive ones as often
as not), a state-valued key rule ("contrast rises -> the key is minor"), a state cause ("while the
performer is dancing, the key is major"), an action shift and an object appearance with a random
direction, and a planted **non-causal** co-movement (a hidden regime moving
colour saturation and a musical variable together), while one visual variable is left **independent**
of everything (no rule, no trend: a builder must not make it a cause). The base world (default:
``data/worlds/default.yaml``) gives the variables, labels and dynamics; the settings of
docs/synth.md ("Family settings": wording, units, timing) are the caller's.

The rule set depends only on the seed (``numpy`` generator of ``SeedSequence([seed, FAMILY_SALT])``),
so a world and a seed name one family member; ``karma synth --family --seed S`` generates it with the
same seed.
"""

from __future__ import annotations

import numpy as np

from karma.core.errors import InputError
from karma.synth.config import (
    ActionRule,
    ActionStateRule,
    KeyStateRule,
    NumericRule,
    ObjectRule,
    Rule,
    TrendConfig,
    WorldConfig,
)

FAMILY_SALT = 37
"""Second entropy word of the family's draws (the issue that asked for the family), so the rule
draws are not the generation's own streams."""
RULE_CAUSES = ("brightness", "contrast", "motion")
"""Visual variables numeric and key-state rules may draw as causes; saturation carries the trend."""
TREND_VISUAL = "saturation"
DEVELOPMENT_SEEDS = (11, 12, 13)
"""Seeds used while developing karma's reader and builder against the family."""
REPORTED_SEEDS = (101, 102, 103, 104, 105)
"""Seeds reported, never used while developing (benchmarks/bench_generalization.py --seeds report)."""


def _pick(rng: np.random.Generator, items: list[str] | tuple[str, ...]) -> str:
    return str(items[int(rng.integers(len(items)))])


def draw_family_world(base: WorldConfig, seed: int) -> WorldConfig:
    """``base`` with a rule set and trend drawn from ``seed`` (see the module doc).

    The result still has ``sign: random`` parts resolved at generation (``resolve_world``) from the
    generation seed; everything else is fixed here."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, FAMILY_SALT]))
    music = [name for name in ("loudness", "tempo", "valence", "arousal") if name in base.music]
    if len(music) < 3:
        raise InputError(f"world {base.name!r}: a family world needs three musical variables, got {music}")
    causes = list(RULE_CAUSES)
    rng.shuffle(causes)
    numeric_causes, state_cause, independent = causes[:2], causes[1], causes[2]
    effects = list(music)
    rng.shuffle(effects)
    rules: list[Rule] = []
    # Two numeric rules of unequal strength, signs from the generation seed (counter-intuitive half the time).
    strengths = sorted((round(float(rng.uniform(0.45, 0.7)), 2), round(float(rng.uniform(0.8, 1.1)), 2)))
    for cause, effect, strength in zip(numeric_causes, effects[:2], strengths, strict=True):
        rules.append(NumericRule(cause=cause, effect=effect, sign="random", strength=strength))
    # A state-valued key rule ("contrast rises -> the key is minor") on the second numeric cause.
    rules.append(
        KeyStateRule(
            cause=state_cause,
            when="up" if rng.random() < 0.5 else "down",
            state="minor" if rng.random() < 0.5 else "major",
            probability=round(float(rng.uniform(0.7, 0.9)), 2),
        )
    )
    labels = list(base.action.labels)
    rng.shuffle(labels)
    # A state cause: while the main action is a label, the key is in a mode.
    rules.append(
        ActionStateRule(
            action=labels[1],
            state="minor" if rng.random() < 0.5 else "major",
            probability=round(float(rng.uniform(0.7, 0.9)), 2),
        )
    )
    rules += _shift_rules(rng, base, labels[0], effects)
    trend = _hidden_trend(rng, base, music)
    trend_music = trend.music
    description = (
        f"Family world drawn from seed {seed} on {base.name!r}: numeric rules {numeric_causes[0]} -> "
        f"{effects[0]} and {numeric_causes[1]} -> {effects[1]} (random signs), {state_cause} sets the key, "
        f"so does the action being {labels[1]}; an action shift and an object move the music; {TREND_VISUAL} and {trend_music} share a hidden "
        f"regime (not causal); {independent} is independent of everything."
    )
    return base.model_copy(
        update={
            "name": f"family-{seed}",
            "description": description,
            "total_transitions": None,
            "rules": rules,
            "trends": [trend],
            "option_texts": {},
        }
    )


def _shift_rules(rng: np.random.Generator, base: WorldConfig, action: str, effects: list[str]) -> list[Rule]:
    """An action shift (to ``action`` from any action) and an object's appearance that move the music."""
    rules: list[Rule] = []
    action_effect = effects[2]
    cfg = base.music[action_effect]
    rules.append(
        ActionRule(
            form="target",
            to=action,
            effect=action_effect,
            direction="up" if rng.random() < 0.5 else "down",
            shift=round(float(cfg.scale * rng.uniform(1.4, 2.0)), 2),
            probability=round(float(rng.uniform(0.75, 0.95)), 2),
        )
    )
    object_effect = effects[3] if len(effects) > 3 else effects[0]
    cfg = base.music[object_effect]
    rules.append(
        ObjectRule(
            appears=_pick(rng, base.objects.labels),
            effect=object_effect,
            direction="up" if rng.random() < 0.5 else "down",
            shift=round(float(cfg.scale * rng.uniform(1.2, 1.8)), 2),
            probability=round(float(rng.uniform(0.75, 0.95)), 2),
        )
    )
    return rules


def _hidden_trend(rng: np.random.Generator, base: WorldConfig, music: list[str]) -> TrendConfig:
    """The planted non-causal co-movement: a hidden regime moving a visual and a musical variable."""
    trend_music = _pick(rng, music)
    return TrendConfig(
        name="hidden_regime",
        visual=TREND_VISUAL,
        music=trend_music,
        persistence=0.8,
        up_probability=0.35,
        down_probability=0.35,
        visual_shift=12.0,
        music_shift=round(float(base.music[trend_music].scale * 0.8 * (1 if rng.random() < 0.5 else -1)), 2),
        visual_lag=1 if rng.random() < 0.5 else 0,
    )
