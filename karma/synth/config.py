"""World configuration for ``karma synth``: every variable, dynamic and causal rule lives here, none in code.

A world file is YAML or JSON validated by :class:`WorldConfig`. Variable names are the event variable
names of :mod:`karma.events` (``brightness``, ``loudness``, ...), so the ground-truth edges the
generator writes use exactly the ids the CKG builder and the scorers use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from karma.core import events as ev
from karma.core.errors import InputError

# Visual variables the generator simulates directly; visual_intensity is derived from them.
SIMULATED_VISUAL = ("brightness", "saturation", "contrast", "motion")
# Musical numeric variables the generator can simulate (keys of the feature file in karma.core.records).
SIMULATED_MUSIC = ("loudness", "tempo", "valence", "arousal")
REQUIRED_VISUAL = SIMULATED_VISUAL
REQUIRED_MUSIC = ("loudness",)


class WorldConfigError(InputError):
    """A world file that cannot be read or does not validate; the message names the file and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Range(_Strict):
    """An inclusive numeric range."""

    min: float
    """Lower bound."""
    max: float
    """Upper bound."""

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class IntRange(_Strict):
    """An inclusive integer range."""

    min: int = Field(ge=1)
    """Lower bound."""
    max: int = Field(ge=1)
    """Upper bound."""

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class VisualVariable(_Strict):
    """A numeric visual variable evolving scene to scene as a clipped random walk with occasional jumps."""

    mean: float
    """Mean of the first scene's value."""
    sd: float = Field(ge=0)
    """Standard deviation of the first scene's value."""
    low: float
    """Smallest value (the walk is clipped, so a step never flips direction, it only shrinks)."""
    high: float
    """Largest value."""
    step_sd: float = Field(ge=0)
    """Standard deviation of an ordinary scene-to-scene step."""
    jump_probability: float = Field(default=0.0, ge=0, le=1)
    """Probability that a cut brings a jump instead of an ordinary step."""
    jump_sd: float = Field(default=0.0, ge=0)
    """Standard deviation of a jump."""
    threshold: float = Field(gt=0)
    """A change of at least this much (absolute) across a cut is an up/down event."""
    scale: float | None = Field(default=None, gt=0)
    """Typical change used to normalise rule strengths (default: step_sd)."""
    decimals: int = Field(default=2, ge=0, le=6)
    """Rounding of the written value (events are computed from the rounded values)."""

    @property
    def change_scale(self) -> float:
        return self.scale if self.scale is not None else max(self.step_sd, 1e-9)

    @model_validator(mode="after")
    def _bounds(self) -> VisualVariable:
        if self.low >= self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        return self


class MusicVariable(_Strict):
    """A numeric musical variable: its change across a cut is the sum of rule effects, trends and noise."""

    mean: float
    """Mean of the first scene's value."""
    sd: float = Field(ge=0)
    """Standard deviation of the first scene's value."""
    low: float
    """Smallest value (clipped)."""
    high: float
    """Largest value (clipped)."""
    noise_sd: float = Field(ge=0)
    """Standard deviation of the change that no rule explains."""
    threshold: float = Field(gt=0)
    """A change of at least this much (absolute) across a cut is an up/down event."""
    scale: float = Field(gt=0)
    """Change produced by a numeric rule of strength 1 when its cause moves by its own scale."""
    decimals: int = Field(default=2, ge=0, le=6)
    """Rounding of the written value."""

    @model_validator(mode="after")
    def _bounds(self) -> MusicVariable:
        if self.low >= self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        return self


class ActionConfig(_Strict):
    """The categorical on-screen action (one main label per scene)."""

    labels: list[str] = Field(min_length=2)
    """Action vocabulary (single words read best in event ids)."""
    switch_probability: float = Field(ge=0, le=1)
    """Probability that the main action changes at a cut (the new one is uniform among the others)."""


class ObjectsConfig(_Strict):
    """Detected objects: each label is independently present or absent per scene."""

    labels: list[str] = Field(min_length=1)
    """Object vocabulary."""
    initial_probability: float = Field(ge=0, le=1)
    """Probability that an object is present in the first scene."""
    appear_probability: float = Field(ge=0, le=1)
    """Probability that an absent object appears at a cut."""
    disappear_probability: float = Field(ge=0, le=1)
    """Probability that a present object disappears at a cut."""


class KeyConfig(_Strict):
    """Key and mode of the soundtrack."""

    major_probability: float = Field(default=0.6, ge=0, le=1)
    """Probability that a video starts in a major key."""
    modulation_probability: float = Field(default=0.03, ge=0, le=1)
    """Probability of a tonic change that keeps the mode (no visual cause)."""
    mode_flip_noise: float = Field(default=0.02, ge=0, le=1)
    """Probability of a mode flip that no rule explains."""


class NumericRule(_Strict):
    """A numeric visual variable drives a numeric musical variable across the same cut."""

    kind: Literal["numeric"] = "numeric"
    cause: str
    """Visual variable (brightness, saturation, contrast, motion)."""
    effect: str
    """Musical variable (loudness, tempo, valence, arousal)."""
    sign: Literal[1, -1, "random"] = 1
    """+1: the effect moves in the cause's direction; -1: the opposite one; random: drawn from the seed."""
    strength: float | tuple[float, float]
    """Effect change = sign * strength * effect.scale * cause change / cause.scale; a [min, max] pair is
    drawn uniformly from the seed."""

    @model_validator(mode="after")
    def _strength(self) -> NumericRule:
        low, high = self.strength if isinstance(self.strength, tuple) else (self.strength, self.strength)
        if not 0 < low <= high <= 5:
            raise ValueError(
                f"strength must be in (0, 5] (a [min, max] pair with min <= max), got {self.strength}"
            )
        return self


class ActionRule(_Strict):
    """A shift of the main action to a label moves a musical variable."""

    kind: Literal["action"] = "action"
    to: str
    """Action label the shift goes to (from any other label)."""
    effect: str
    """Musical variable."""
    direction: Literal["up", "down"]
    """Direction of the effect."""
    shift: float = Field(gt=0)
    """Size of the effect change (in the effect's units)."""
    probability: float = Field(gt=0, le=1)
    """Probability that the effect is applied when the shift happens."""
    form: Literal["pairs", "target"] = "pairs"
    """How the truth, the questions and the option vocabulary name the cause. ``pairs``: one true edge
    per source label (``visual:action:dancing->running``, ...); ``target``: one edge from the aggregated
    event "the action shifts to running from any other" (``visual:action:*->running``). All action rules
    of a world use the same form."""


class ObjectRule(_Strict):
    """An object appearing on screen moves a musical variable."""

    kind: Literal["object"] = "object"
    appears: str
    """Object label."""
    effect: str
    """Musical variable."""
    direction: Literal["up", "down"]
    """Direction of the effect."""
    shift: float = Field(gt=0)
    """Size of the effect change."""
    probability: float = Field(gt=0, le=1)
    """Probability that the effect is applied when the object appears."""


class ModeRule(_Strict):
    """An up/down event of a visual variable flips the mode (to the relative key)."""

    kind: Literal["mode"] = "mode"
    cause: str
    """Visual variable."""
    when: Literal["up", "down"]
    """Direction of the cause event."""
    direction: Literal["major_to_minor", "minor_to_major"]
    """The mode flip it causes (only possible when the past scene is in the source mode)."""
    probability: float = Field(gt=0, le=1)
    """Probability of the flip when the cause event happens in the source mode."""


class KeyStateRule(_Strict):
    """An up/down event of a visual variable leaves the key in a mode: a state-valued effect.

    "Contrast rises -> the key is minor": when the cause happens the next scene is in ``state`` with
    ``probability`` (a flip to the relative key when the past scene was in the other mode, no change
    when it already was). The true edge's effect is the state event ``music:mode:is:<state>``, not a
    change; a world with key-state rules names the mode by states in its questions and options.
    """

    kind: Literal["key_state"] = "key_state"
    cause: str
    """Visual variable."""
    when: Literal["up", "down"]
    """Direction of the cause event."""
    state: Literal["major", "minor"]
    """The mode the current scene is in after the cut."""
    probability: float = Field(gt=0, le=1)
    """Probability that the rule sets the mode when its cause happens."""


class ActionStateRule(_Strict):
    """A state cause: while the main action is a label, the key is in a mode (a state-valued effect).

    "While the performer is dancing, the key is minor": in a scene whose main action is ``action``, the
    scene is in ``state`` with ``probability`` (a flip to the relative key when the past scene was in
    the other mode, nothing when it already was). The true edge joins the state events
    ``visual:action:is:<action>`` and ``music:mode:is:<state>``: neither needs a change across the cut,
    so a test of "the effect follows the cause's change" cannot see it; a state test can.
    """

    kind: Literal["action_state"] = "action_state"
    action: str
    """Action label (the cause is the current scene's main action being it)."""
    state: Literal["major", "minor"]
    """The mode the scene is in while the action holds."""
    probability: float = Field(gt=0, le=1)
    """Probability that the rule sets the mode in a scene with that action."""


Rule = Annotated[
    NumericRule | ActionRule | ObjectRule | ModeRule | KeyStateRule | ActionStateRule,
    Field(discriminator="kind"),
]


class TrendConfig(_Strict):
    """A hidden common driver: a persistent regime that moves a visual and a musical variable together.

    It causes neither variable from the other. With ``visual_lag: 1`` the visual side follows the regime
    of the previous cut, so the musical change tends to come one transition *before* the visual one:
    co-occurrence counts see an association, a time-precedence test sees none (or the reverse).
    """

    name: str
    """Name, for the ground-truth file."""
    visual: str
    """Visual variable it drives (must not be the cause of any rule)."""
    music: str
    """Musical variable it drives."""
    persistence: float = Field(ge=0, lt=1)
    """Probability that the regime (up, flat, down) carries over to the next cut."""
    up_probability: float = Field(default=0.35, ge=0, le=1)
    """Probability of the up regime when it is redrawn."""
    down_probability: float = Field(default=0.35, ge=0, le=1)
    """Probability of the down regime when it is redrawn (the rest is flat)."""
    visual_shift: float
    """Change added to the visual variable per cut in the up regime (negated in the down regime)."""
    music_shift: float
    """Change added to the musical variable per cut in the up regime (its sign sets the pairing)."""
    visual_lag: Literal[0, 1] = 1
    """0: both follow the current regime; 1: the visual side follows the previous cut's regime."""

    @model_validator(mode="after")
    def _probabilities(self) -> TrendConfig:
        if self.up_probability + self.down_probability > 1:
            raise ValueError("up_probability + down_probability must be at most 1")
        return self


class TimingConfig(_Strict):
    """When a musical change shows up relative to its visual cause (docs/synth.md, "Family settings").

    The defaults are karma's own worlds: every rule's effect lands in the transition of its cause
    (music changes exactly at the cut, as in cut-aligned clips) and visual steps are independent from
    cut to cut."""

    music_lag: float = Field(default=0.0, ge=0, le=0.9)
    """Share of every musical change (rule effects, trends and noise alike) that shows up one transition
    later: the music answers the cut late, so a scene's measured music is part old, part new. 0: at
    the cut."""
    visual_drift: float = Field(default=0.0, ge=0, le=0.95)
    """Correlation of a visual variable's ordinary step with its previous step (the step's spread is
    kept): a video that gets brighter tends to keep getting brighter, so a cause at one cut often had
    happened at the cut before too, and so had its effect. A time-precedence test then sees less
    precedence for true causes. 0: independent steps."""


class QuestionConfig(_Strict):
    """How questions are drawn."""

    effect_to_cause_probability: float = Field(default=0.4, ge=0, le=1)
    """Share of evidential questions asking for the visual cause of an observed musical change."""
    trap_probability: float = Field(default=0.8, ge=0, le=1)
    """Probability of including each available trap: a distractor that did happen in the cut but is not
    caused by (or, for effect-to-cause questions, does not cause) the asked change."""
    max_traps: int = Field(default=2, ge=0, le=3)
    """At most this many traps per question."""
    max_redraws: int = Field(default=200, ge=1)
    """How often a cut is redrawn when no rule fired in it (every transition needs a fired rule)."""


class WorldConfig(_Strict):
    """A synthetic music-video world with known causes (see docs/synth.md)."""

    name: str
    """World name (written into the ground truth)."""
    description: str = ""
    """Free text."""
    videos: int = Field(default=2682, ge=1)
    """Number of videos generated when ``--videos`` is not given."""
    total_transitions: int | None = Field(default=None, ge=1)
    """Exact number of transitions over ``videos`` videos (scaled for other counts); None: no target."""
    scenes_per_video: IntRange
    """Number of scenes per video (transitions = scenes - 1); minimum 2."""
    scene_seconds: Range
    """Scene duration in seconds."""
    visual: dict[str, VisualVariable]
    """Numeric visual variables: brightness, saturation, contrast and motion."""
    action: ActionConfig
    """The on-screen action."""
    objects: ObjectsConfig
    """Detected objects."""
    music: dict[str, MusicVariable]
    """Numeric musical variables: loudness (required), tempo, valence, arousal."""
    key: KeyConfig = Field(default_factory=KeyConfig)
    """Key and mode."""
    rules: list[Rule] = Field(min_length=1)
    """The causal rules (the ground truth)."""
    trends: list[TrendConfig] = Field(default_factory=list)
    """Planted non-causal co-movements."""
    questions: QuestionConfig = Field(default_factory=QuestionConfig)
    """Question drawing."""
    feature_keys: dict[str, str] = Field(default_factory=dict)
    """Canonical feature key -> the spelling written into the feature files instead (``"Brightness":
    "luma"``). Every spelling must be an alias the feature table (karma.core.features) resolves to that
    key, so a reader that resolves aliases sees the same values; one that does not loses the variable."""
    option_texts: dict[str, str] = Field(default_factory=dict)
    """Event id -> the text its answer options show instead of the event title (``music:loudness:up``:
    ``"the mix swells"``). A key may hold one placeholder for the label part of a categorical event:
    ``visual:action:*->{label}``, ``visual:object:appears:{label}``. Events without a text keep their
    title."""

    units: Literal["luma", "published", "unit"] = "luma"
    """Scales of the visual features written. ``luma`` (karma's own): brightness, saturation 0-255,
    contrast the luma spread, motion the mean absolute luma difference between frames. ``published``:
    the same, but motion in pixels per frame (a quarter of the luma difference). ``unit``: brightness,
    saturation, contrast and motion divided by 255 (0-1 scales). The config's visual numbers are in
    luma units either way; the generator scales them (:func:`apply_units`)."""
    timing: TimingConfig = Field(default_factory=TimingConfig)
    """When musical changes show up relative to their causes."""
    wording: Literal["templated", "free"] = "templated"
    """How questions and options are worded. ``templated``: options are event titles (or
    ``option_texts``) and questions come from three fixed templates per form; ``free``: every question
    and option is worded afresh from a paraphrase grammar (``karma.synth.wording``), and the
    distractors include the opposite change of the answer (docs/synth.md, "Family settings")."""

    @property
    def action_form(self) -> str:
        """``target`` when the world's action rules name their cause as "shift to X from any action"."""
        forms = {rule.form for rule in self.rules if isinstance(rule, ActionRule)}
        return "target" if "target" in forms else "pairs"

    @property
    def mode_form(self) -> str:
        """``state`` when the world's key rules have state-valued effects (``music:mode:is:minor``)."""
        states = (KeyStateRule, ActionStateRule)
        return "state" if any(isinstance(rule, states) for rule in self.rules) else "change"

    @model_validator(mode="after")
    def _consistent(self) -> WorldConfig:
        problems: list[str] = []
        if self.scenes_per_video.min < 2:
            problems.append("scenes_per_video.min must be at least 2 (a transition needs two scenes)")
        if self.scene_seconds.min <= 0:
            problems.append("scene_seconds.min must be positive")
        for name in self.visual:
            if name not in SIMULATED_VISUAL:
                problems.append(f"visual.{name}: unknown visual variable (use {', '.join(SIMULATED_VISUAL)})")
        for name in REQUIRED_VISUAL:
            if name not in self.visual:
                problems.append(f"visual.{name}: missing (the published features need it)")
        for name in self.music:
            if name not in SIMULATED_MUSIC:
                problems.append(f"music.{name}: unknown musical variable (use {', '.join(SIMULATED_MUSIC)})")
        for name in REQUIRED_MUSIC:
            if name not in self.music:
                problems.append(f"music.{name}: missing (the published features need it)")
        if len(self.music) < 2:
            # Questions need three distractors from the musical vocabulary besides the asked effects.
            problems.append("music: at least two musical variables are needed (e.g. loudness and tempo)")
        if len(set(self.action.labels)) != len(self.action.labels):
            problems.append("action.labels: duplicate label")
        if len(set(self.objects.labels)) != len(self.objects.labels):
            problems.append("objects.labels: duplicate label")
        rule_causes: set[str] = set()
        for i, rule in enumerate(self.rules):
            where = f"rules[{i}]"
            if isinstance(rule, NumericRule | ModeRule | KeyStateRule):
                rule_causes.add(rule.cause)
                if rule.cause not in self.visual:
                    problems.append(f"{where}.cause: {rule.cause!r} is not a visual variable of this world")
            if isinstance(rule, NumericRule | ActionRule | ObjectRule) and rule.effect not in self.music:
                problems.append(f"{where}.effect: {rule.effect!r} is not a musical variable of this world")
            if isinstance(rule, ActionRule) and rule.to not in self.action.labels:
                problems.append(f"{where}.to: {rule.to!r} is not in action.labels")
            if isinstance(rule, ActionStateRule) and rule.action not in self.action.labels:
                problems.append(f"{where}.action: {rule.action!r} is not in action.labels")
            if isinstance(rule, ObjectRule) and rule.appears not in self.objects.labels:
                problems.append(f"{where}.appears: {rule.appears!r} is not in objects.labels")
        for i, trend in enumerate(self.trends):
            where = f"trends[{i}]"
            if trend.visual not in self.visual:
                problems.append(f"{where}.visual: {trend.visual!r} is not a visual variable of this world")
            if trend.music not in self.music:
                problems.append(f"{where}.music: {trend.music!r} is not a musical variable of this world")
            if trend.visual in rule_causes:
                # A trend on a rule's cause would make that cause depend on earlier musical changes.
                problems.append(
                    f"{where}.visual: {trend.visual!r} is also a rule cause; pick another variable"
                )
        action_forms = {rule.form for rule in self.rules if isinstance(rule, ActionRule)}
        if len(action_forms) > 1:
            problems.append("rules: action rules mix form 'pairs' and 'target'; use one form per world")
        kinds = {type(rule) for rule in self.rules}
        if ModeRule in kinds and (KeyStateRule in kinds or ActionStateRule in kinds):
            problems.append(
                "rules: 'mode' (change) and 'key_state' / 'action_state' (state) rules in one world; "
                "use one convention"
            )
        problems += _feature_key_problems(self.feature_keys)
        for key in self.option_texts:
            if not _option_key_ok(key):
                problems.append(
                    f"option_texts.{key}: not an event id (modality:variable:direction, "
                    "optionally with one {label} placeholder)"
                )
        for name in (*self.visual, *self.music):
            if name not in ev.READABLE:
                problems.append(f"{name}: not in the karma.events vocabulary")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _feature_key_problems(feature_keys: dict[str, str]) -> list[str]:
    from karma.core.features import FEATURE_BY_KEY, resolve_feature_key

    problems = []
    for canonical, spelling in feature_keys.items():
        if canonical not in FEATURE_BY_KEY:
            problems.append(f"feature_keys.{canonical}: not a canonical feature key")
        elif resolve_feature_key(spelling) != canonical:
            problems.append(
                f"feature_keys.{canonical}: {spelling!r} is not a spelling the feature table resolves "
                f"to {canonical!r}"
            )
    return problems


def _option_key_ok(key: str) -> bool:
    parts = key.split(":", 2)
    if len(parts) != 3 or parts[0] not in ("visual", "music") or not parts[1] or not parts[2]:
        return False
    return key.count("{") == key.count("}") <= 1


def resolve_world(world: WorldConfig, rng: np.random.Generator) -> WorldConfig:
    """Draw the seed-dependent parts of the rules (``sign: random``, ``strength: [min, max]``).

    The result has only fixed values; it is what ``world.json`` records and what the ground truth says.
    """
    rules: list[Rule] = []
    for rule in world.rules:
        if isinstance(rule, NumericRule):
            update: dict[str, object] = {}
            if rule.sign == "random":
                update["sign"] = 1 if rng.random() < 0.5 else -1
            if isinstance(rule.strength, tuple):
                update["strength"] = round(float(rng.uniform(*rule.strength)), 3)
            rule = rule.model_copy(update=update)
        rules.append(rule)
    return world.model_copy(update={"rules": rules})


UNIT_FACTORS: dict[str, dict[str, float]] = {
    "luma": {},
    "published": {"motion": 0.25},
    "unit": dict.fromkeys(("brightness", "saturation", "contrast", "motion"), 1 / 255),
}
"""``units`` -> visual variable -> factor from luma units to the written scale."""
UNIT_DECIMALS = {"luma": None, "published": None, "unit": 4}
"""``units`` -> decimals of the written visual values (None: the config's)."""


def intensity_factor(world: WorldConfig) -> float:
    """Factor of Total_Visual_Intensity (and its event threshold) on the world's scale: the formula is
    linear, so on 0-1 scales it is the luma-unit value / 255."""
    return 1 / 255 if world.units == "unit" else 1.0


def apply_units(world: WorldConfig) -> WorldConfig:
    """The world with its visual variables (and the trends' visual shifts) on the ``units`` scale.

    The simulation runs on the result, so every written value, threshold and event is on that scale."""
    factors = UNIT_FACTORS[world.units]
    if not factors:
        return world
    decimals = UNIT_DECIMALS[world.units]
    visual = {}
    for name, cfg in world.visual.items():
        f = factors.get(name, 1.0)
        update: dict[str, object] = {
            key: getattr(cfg, key) * f
            for key in ("mean", "sd", "low", "high", "step_sd", "jump_sd", "threshold")
        }
        if cfg.scale is not None:
            update["scale"] = cfg.scale * f
        if decimals is not None:
            update["decimals"] = max(cfg.decimals, decimals)
        visual[name] = cfg.model_copy(update=update)
    trends = [
        t.model_copy(update={"visual_shift": t.visual_shift * factors.get(t.visual, 1.0)})
        for t in world.trends
    ]
    return world.model_copy(update={"visual": visual, "trends": trends})


def dump_world(world: WorldConfig) -> dict[str, object]:
    """The config as ``world.json`` records it. Options added after the first worlds (an action rule's
    ``form``, ``feature_keys``, ``option_texts``) are left out at their defaults, so older worlds keep
    byte-identical files."""
    data = world.model_dump(mode="json")
    for rule in data["rules"]:
        if rule.get("kind") == "action" and rule.get("form") == "pairs":
            del rule["form"]
    for name in ("feature_keys", "option_texts"):
        if not data[name]:
            del data[name]
    if data["wording"] == "templated":
        del data["wording"]
    if data["units"] == "luma":
        del data["units"]
    if data["timing"] == TimingConfig().model_dump(mode="json"):
        del data["timing"]
    return data


def require_resolved(world: WorldConfig) -> None:
    """Raise if a rule still has a seed-dependent part (call :func:`resolve_world` first)."""
    for i, rule in enumerate(world.rules):
        if isinstance(rule, NumericRule) and (rule.sign == "random" or isinstance(rule.strength, tuple)):
            raise ValueError(
                f"world {world.name!r}: rules[{i}] is not resolved; call resolve_world(world, rng) first"
            )


def load_world(path: str | Path) -> WorldConfig:
    """Read and validate a world file (``.yaml``/``.yml`` or ``.json``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise WorldConfigError(f"{path}: not a world file: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise WorldConfigError(f"{path}: cannot read world file: {exc}") from exc
    try:
        raw = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise WorldConfigError(f"{path}: not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}") from exc
    if not isinstance(raw, dict):
        raise WorldConfigError(f"{path}: a world file must hold a mapping, got {type(raw).__name__}")
    try:
        return WorldConfig.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise WorldConfigError(f"{path}: invalid world config: {details}") from exc
