"""Scene-by-scene simulation of a world, vectorised over videos with numpy.

Every array has shape ``(videos, max_scenes)``; column ``s`` holds scene ``s`` and, for change arrays,
the change across the cut from scene ``s-1`` into scene ``s`` (column 0 of a change array is unused).
A cut is drawn for all videos at once; cuts in which no rule fired (or in which no rule cause is left
for a counterfactual) are redrawn, so every transition carries at least one observable cause -> effect
pair and one possible alternative cause for its questions. Visual steps are drawn
independently of everything that happened before, so a true cause never depends on earlier music.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from karma.core.errors import InputError
from karma.synth.config import (
    ActionRule,
    ActionStateRule,
    KeyStateRule,
    ModeRule,
    NumericRule,
    ObjectRule,
    WorldConfig,
    require_resolved,
)
from karma.synth.truth import build_ground_truth

MAX_RESTARTS = 20
"""How often a video stuck in a cut where no rule fires is simulated again from its first scene."""


class WorldTooQuietError(InputError, RuntimeError):
    """No rule fires in some cut even after many redraws: the world's thresholds or steps don't fit."""


@dataclass
class Simulation:
    """The simulated values of every scene of every video."""

    n_scenes: np.ndarray
    """(V,) scenes per video."""
    start_ms: np.ndarray
    """(V, S+1) scene boundaries in milliseconds; scene s spans [start_ms[s], start_ms[s+1])."""
    visual: dict[str, np.ndarray]
    """Numeric visual variable -> (V, S) values (rounded as written)."""
    visual_dir: dict[str, np.ndarray]
    """Numeric visual variable -> (V, S) change direction across the cut into s (+1, 0, -1)."""
    action: np.ndarray
    """(V, S) index into ``world.action.labels``."""
    action_score: np.ndarray
    """(V, S) tagger score of the main action."""
    second_action: np.ndarray
    """(V, S) index of a weaker runner-up action label."""
    second_score: np.ndarray
    """(V, S) score of the runner-up."""
    objects: np.ndarray
    """(V, S, K) presence of each object label."""
    object_score: np.ndarray
    """(V, S, K) detector score of each object (meaningful where present)."""
    music: dict[str, np.ndarray]
    """Numeric musical variable -> (V, S) values."""
    music_dir: dict[str, np.ndarray]
    """Numeric musical variable -> (V, S) change direction."""
    tonic: np.ndarray
    """(V, S) pitch class of the key's tonic (0 = C)."""
    minor: np.ndarray
    """(V, S) True for a minor key."""
    mode_dir: np.ndarray
    """(V, S) +1 minor -> major, -1 major -> minor, 0 none."""
    regimes: list[np.ndarray]
    """Per trend, (V, S) regime of the cut into s (+1 up, 0 flat, -1 down); column 0: before the video."""
    redraws: int
    """How many cuts had to be redrawn because no rule fired in them."""


def _direction(new: np.ndarray, old: np.ndarray, threshold: float) -> np.ndarray:
    delta = new - old
    return (delta >= threshold).astype(np.int8) - (delta <= -threshold).astype(np.int8)


def _scene_counts(world: WorldConfig, n_videos: int, rng: np.random.Generator) -> np.ndarray:
    low, high = world.scenes_per_video.min - 1, world.scenes_per_video.max - 1
    n_trans = rng.integers(low, high + 1, size=n_videos)
    if world.total_transitions is not None:
        target = round(world.total_transitions * n_videos / world.videos)
        if not low * n_videos <= target <= high * n_videos:
            raise ValueError(
                f"total_transitions={world.total_transitions} cannot be met with {n_videos} videos of "
                f"{world.scenes_per_video.min}-{world.scenes_per_video.max} scenes"
            )
        diff = target - int(n_trans.sum())
        while diff != 0:
            eligible = np.nonzero(n_trans < high if diff > 0 else n_trans > low)[0]
            pick = rng.choice(eligible, size=min(abs(diff), eligible.size), replace=False)
            n_trans[pick] += 1 if diff > 0 else -1
            diff += -pick.size if diff > 0 else pick.size
    return n_trans + 1


def simulate(world: WorldConfig, n_videos: int, rng: np.random.Generator) -> Simulation:
    """Simulate ``n_videos`` videos of ``world``."""
    require_resolved(world)
    sim = _Simulator(world, n_videos, rng)
    # A video can get stuck where no rule is able to fire (say, the cause at one bound and its effect at
    # the other); such videos are simulated again from their first scene.
    stuck, redraws = sim.run(np.arange(n_videos))
    for _ in range(MAX_RESTARTS):
        if stuck.size == 0:
            break
        stuck, more = sim.run(stuck)
        redraws += more
    if stuck.size:
        raise WorldTooQuietError(
            f"world {world.name!r}: no rule fired in some cut of {stuck.size} video(s) even after "
            f"{world.questions.max_redraws} redraws per cut and {MAX_RESTARTS} restarts; raise step sizes, "
            "widen the ranges or lower the thresholds"
        )
    return sim.finish(redraws)


@dataclass
class _Cut:
    """One cut being drawn: into scene ``s`` for videos ``idx``, with the action and objects on both sides."""

    idx: np.ndarray
    s: int
    prev_action: np.ndarray
    new_action: np.ndarray
    prev_objects: np.ndarray
    new_objects: np.ndarray


def _sign(direction: str, up: str) -> int:
    """+1 when ``direction`` is ``up`` (the rule's name for the upward direction), else -1."""
    return 1 if direction == up else -1


class _Simulator:
    """The arrays of one simulation and the draws that fill them, a cut at a time for many videos.

    The random draws happen in one fixed order (first scenes, then per cut: regimes, visual steps,
    action and objects, music, key), so a world and a seed give the same videos."""

    def __init__(self, world: WorldConfig, n_videos: int, rng: np.random.Generator) -> None:
        self.world, self.rng, self.n_videos = world, rng, n_videos
        self.n_scenes = _scene_counts(world, n_videos, rng)
        self.n_max = int(self.n_scenes.max())
        shape = self.shape = (n_videos, self.n_max)
        seconds = rng.uniform(world.scene_seconds.min, world.scene_seconds.max, size=shape)
        self.start_ms = np.zeros((n_videos, self.n_max + 1), dtype=np.int64)
        self.start_ms[:, 1:] = np.cumsum(np.round(seconds * 1000).astype(np.int64), axis=1)
        self.visual = {name: np.zeros(shape) for name in world.visual}
        self.visual_dir = {name: np.zeros(shape, dtype=np.int8) for name in world.visual}
        self.music = {name: np.zeros(shape) for name in world.music}
        self.music_dir = {name: np.zeros(shape, dtype=np.int8) for name in world.music}
        self.n_labels = len(world.action.labels)
        self.action = np.zeros(shape, dtype=np.int64)
        self.n_objects = len(world.objects.labels)
        self.objects = np.zeros((*shape, self.n_objects), dtype=bool)
        self.tonic = np.zeros(shape, dtype=np.int64)
        self.minor = np.zeros(shape, dtype=bool)
        self.mode_dir = np.zeros(shape, dtype=np.int8)
        self.regimes = [np.zeros(shape, dtype=np.int8) for _ in world.trends]
        # timing: the previous ordinary visual step (visual_drift) and the share of each musical change
        # still to show up at the next cut (music_lag); both stay zero in karma's own worlds.
        self.drift = world.timing.visual_drift
        self.lag = world.timing.music_lag
        self.visual_step = {name: np.zeros(shape) for name in world.visual}
        self.pending = {name: np.zeros(shape) for name in world.music}
        self.label_index = {label: i for i, label in enumerate(world.action.labels)}
        self.effects_of = build_ground_truth(world).effects_of
        self.object_index = {label: i for i, label in enumerate(world.objects.labels)}

    def draw_first_scene(self, idx: np.ndarray) -> None:
        world, rng, n = self.world, self.rng, idx.size
        for name, cfg in world.visual.items():
            first = np.clip(rng.normal(cfg.mean, cfg.sd, n), cfg.low, cfg.high)
            self.visual[name][idx, 0] = np.round(first, cfg.decimals)
        for name, cfg in world.music.items():
            first = np.clip(rng.normal(cfg.mean, cfg.sd, n), cfg.low, cfg.high)
            self.music[name][idx, 0] = np.round(first, cfg.decimals)
        self.action[idx, 0] = rng.integers(0, self.n_labels, n)
        self.objects[idx, 0] = rng.random((n, self.n_objects)) < world.objects.initial_probability
        self.tonic[idx, 0] = rng.integers(0, 12, n)
        self.minor[idx, 0] = rng.random(n) >= world.key.major_probability
        for k, trend in enumerate(world.trends):
            self.regimes[k][idx, 0] = _draw_regime(trend, n, rng)

    def draw_cut(self, idx: np.ndarray, s: int) -> np.ndarray:
        """Draw the cut into scene ``s`` for videos ``idx``; return which of them had a rule fire."""
        self._draw_regimes(idx, s)
        self._draw_visual(idx, s)
        cut = self._draw_action_objects(idx, s)
        self._draw_music(cut)
        self._draw_key(idx, s)
        return self._fired(cut) & self.counterfactual_possible(cut)

    def _draw_regimes(self, idx: np.ndarray, s: int) -> None:
        n = idx.size
        for k, trend in enumerate(self.world.trends):
            keep = self.rng.random(n) < trend.persistence
            self.regimes[k][idx, s] = np.where(
                keep, self.regimes[k][idx, s - 1], _draw_regime(trend, n, self.rng)
            )

    def _draw_visual(self, idx: np.ndarray, s: int) -> None:
        """Visual steps: noise, jumps, and the trends' shifts (never the music)."""
        rng, n = self.rng, idx.size
        for name, cfg in self.world.visual.items():
            step = rng.normal(0.0, cfg.step_sd, n)
            if self.drift > 0:
                # An AR(1) step with the same spread: it tends to continue the previous one.
                step = self.drift * self.visual_step[name][idx, s - 1] + np.sqrt(1 - self.drift**2) * step
            if cfg.jump_probability > 0:
                jump = rng.random(n) < cfg.jump_probability
                step = np.where(jump, rng.normal(0.0, cfg.jump_sd, n), step)
            for k, trend in enumerate(self.world.trends):
                if trend.visual == name:
                    step = step + trend.visual_shift * self.regimes[k][idx, s - trend.visual_lag]
            prev = self.visual[name][idx, s - 1]
            new = np.round(np.clip(prev + step, cfg.low, cfg.high), cfg.decimals)
            if self.drift > 0:
                # The realised change carries on, so a walk that hits a bound loses its momentum there.
                self.visual_step[name][idx, s] = new - prev
            self.visual[name][idx, s] = new
            self.visual_dir[name][idx, s] = _direction(new, prev, cfg.threshold)

    def _draw_action_objects(self, idx: np.ndarray, s: int) -> _Cut:
        world, rng, n = self.world, self.rng, idx.size
        prev_action = self.action[idx, s - 1]
        switch = rng.random(n) < world.action.switch_probability
        offset = rng.integers(1, self.n_labels, n)
        new_action = np.where(switch, (prev_action + offset) % self.n_labels, prev_action)
        self.action[idx, s] = new_action
        prev_objects = self.objects[idx, s - 1]
        u = rng.random((n, self.n_objects))
        new_objects = np.where(
            prev_objects, u >= world.objects.disappear_probability, u < world.objects.appear_probability
        )
        self.objects[idx, s] = new_objects
        return _Cut(idx, s, prev_action, new_action, prev_objects, new_objects)

    def _action_happened(self, cut: _Cut, to: str) -> np.ndarray:
        target = self.label_index[to]
        return (cut.new_action == target) & (cut.prev_action != target)

    def _object_appeared(self, cut: _Cut, label: str) -> np.ndarray:
        j = self.object_index[label]
        return cut.new_objects[:, j] & ~cut.prev_objects[:, j]

    def _draw_music(self, cut: _Cut) -> None:
        """Music steps: noise, the rules' effects of this cut's visual changes, the trends' shifts."""
        world, rng, idx, s, n = self.world, self.rng, cut.idx, cut.s, cut.idx.size
        deltas = {name: rng.normal(0.0, cfg.noise_sd, n) for name, cfg in world.music.items()}
        for rule in world.rules:
            if isinstance(rule, NumericRule):
                cause_cfg = world.visual[rule.cause]
                change = self.visual[rule.cause][idx, s] - self.visual[rule.cause][idx, s - 1]
                effect_scale = world.music[rule.effect].scale
                deltas[rule.effect] += (
                    rule.sign * rule.strength * effect_scale * change / cause_cfg.change_scale
                )
            elif isinstance(rule, ActionRule | ObjectRule):
                if isinstance(rule, ActionRule):
                    happened = self._action_happened(cut, rule.to)
                else:
                    happened = self._object_appeared(cut, rule.appears)
                applied = happened & (rng.random(n) < rule.probability)
                deltas[rule.effect] += np.where(
                    applied, rule.shift if rule.direction == "up" else -rule.shift, 0
                )
        for k, trend in enumerate(world.trends):
            deltas[trend.music] += trend.music_shift * self.regimes[k][idx, s]
        if self.lag > 0:
            # The music answers late: part of this cut's change shows up at the next cut.
            for name in world.music:
                change = deltas[name]
                deltas[name] = (1 - self.lag) * change + self.pending[name][idx, s - 1]
                self.pending[name][idx, s] = self.lag * change
        for name, cfg in world.music.items():
            prev = self.music[name][idx, s - 1]
            new = np.round(np.clip(prev + deltas[name], cfg.low, cfg.high), cfg.decimals)
            self.music[name][idx, s] = new
            self.music_dir[name][idx, s] = _direction(new, prev, cfg.threshold)

    def _draw_key(self, idx: np.ndarray, s: int) -> None:
        """Mode flips (noise and the mode / key-state rules), then modulations."""
        world, rng, n = self.world, self.rng, idx.size
        prev_minor = self.minor[idx, s - 1]
        flip_mode = rng.random(n) < world.key.mode_flip_noise
        for rule in world.rules:
            if isinstance(rule, ModeRule):
                cause_happened = self.visual_dir[rule.cause][idx, s] == _sign(rule.when, "up")
                source_ok = prev_minor if rule.direction == "minor_to_major" else ~prev_minor
                flip_mode |= cause_happened & source_ok & (rng.random(n) < rule.probability)
            elif isinstance(rule, KeyStateRule):
                # The rule sets the mode: a flip when the past scene was in the other mode, else none.
                cause_happened = self.visual_dir[rule.cause][idx, s] == _sign(rule.when, "up")
                applied = cause_happened & (rng.random(n) < rule.probability)
                flip_mode = np.where(applied, prev_minor != (rule.state == "minor"), flip_mode)
            elif isinstance(rule, ActionStateRule):
                # While the action holds, the rule sets the mode (the action of scene s is drawn already).
                holds = self.action[idx, s] == self.label_index[rule.action]
                applied = holds & (rng.random(n) < rule.probability)
                flip_mode = np.where(applied, prev_minor != (rule.state == "minor"), flip_mode)
        new_minor = prev_minor ^ flip_mode
        # A mode flip goes to the relative key (C major <-> A minor): three semitones down or up.
        new_tonic = self.tonic[idx, s - 1] + np.where(flip_mode, np.where(prev_minor, 3, -3), 0)
        modulate = ~flip_mode & (rng.random(n) < world.key.modulation_probability)
        interval = rng.choice(np.array([2, 5, 7, 10]), size=n)
        self.tonic[idx, s] = np.where(modulate, new_tonic + interval, new_tonic) % 12
        self.minor[idx, s] = new_minor
        self.mode_dir[idx, s] = np.where(flip_mode, np.where(prev_minor, 1, -1), 0)

    def _fired(self, cut: _Cut) -> np.ndarray:
        """Which videos show some rule's cause and its effect across this cut."""
        idx, s = cut.idx, cut.s
        fired = np.zeros(idx.size, dtype=bool)
        for rule in self.world.rules:
            if isinstance(rule, NumericRule):
                cause_dir = self.visual_dir[rule.cause][idx, s]
                fired |= (cause_dir != 0) & (self.music_dir[rule.effect][idx, s] == cause_dir * rule.sign)
            elif isinstance(rule, ActionRule | ObjectRule):
                if isinstance(rule, ActionRule):
                    happened = self._action_happened(cut, rule.to)
                else:
                    happened = self._object_appeared(cut, rule.appears)
                fired |= happened & (self.music_dir[rule.effect][idx, s] == _sign(rule.direction, "up"))
            elif isinstance(rule, ModeRule):
                cause_happened = self.visual_dir[rule.cause][idx, s] == _sign(rule.when, "up")
                fired |= cause_happened & (self.mode_dir[idx, s] == _sign(rule.direction, "minor_to_major"))
            elif isinstance(rule, KeyStateRule):
                cause_happened = self.visual_dir[rule.cause][idx, s] == _sign(rule.when, "up")
                fired |= cause_happened & (self.minor[idx, s] == (rule.state == "minor"))
            elif isinstance(rule, ActionStateRule):
                holds = self.action[idx, s] == self.label_index[rule.action]
                fired |= holds & (self.minor[idx, s] == (rule.state == "minor"))
        return fired

    def counterfactual_possible(self, cut: _Cut) -> np.ndarray:
        """Whether some rule cause did *not* happen and could have (the counterfactual question needs one).

        Mirrors the candidates of ``QuestionMaker._counterfactual_candidates`` exactly.
        """
        possible = np.zeros(cut.idx.size, dtype=bool)
        for cause, effects in self.effects_of.items():
            _, variable, direction = cause.split(":", 2)
            if variable in self.world.visual:
                possible |= self._visual_cause_possible(cut, variable, direction, effects)
            elif variable == "action" and direction.startswith("is:"):
                # "Had the action been X": possible where it is not X, unless a rival sets the other mode.
                label = direction[3:]
                effect_ok = np.zeros(cut.idx.size, dtype=bool)
                for effect in effects:
                    effect_ok |= ~self.rival_state(cut.idx, cut.s, "action", effect.rsplit(":", 1)[1])
                possible |= (cut.new_action != self.label_index[label]) & effect_ok
            elif variable == "action":
                source, target = direction.split("->", 1)
                if source == "*":
                    # "Shift to target from any action": possible wherever the action is not target yet.
                    target_row = self.label_index[target]
                    possible |= (cut.prev_action != target_row) & (cut.new_action != target_row)
                else:
                    possible |= (cut.prev_action == self.label_index[source]) & (
                        cut.new_action != self.label_index[target]
                    )
            elif variable == "object":
                j = self.object_index[direction.split(":", 1)[1]]
                possible |= ~cut.prev_objects[:, j] & ~cut.new_objects[:, j]
        return possible

    def _visual_cause_possible(self, cut: _Cut, variable: str, direction: str, effects: Any) -> np.ndarray:
        """Where a visual cause did not happen, had room to, and one of its effects could have followed."""
        idx, s = cut.idx, cut.s
        cfg = self.world.visual[variable]
        prev = self.visual[variable][idx, s - 1]
        prev_minor = self.minor[idx, s - 1]
        step = max(1.5 * cfg.threshold, cfg.change_scale)
        if direction == "up":
            room = np.abs(np.minimum(prev + step, cfg.high) - prev) >= cfg.threshold
            happened = self.visual_dir[variable][idx, s] == 1
        else:
            room = np.abs(np.maximum(prev - step, cfg.low) - prev) >= cfg.threshold
            happened = self.visual_dir[variable][idx, s] == -1
        effect_ok = np.zeros(idx.size, dtype=bool)
        for effect in effects:
            if effect == "music:mode:major_to_minor":
                effect_ok |= ~prev_minor
            elif effect == "music:mode:minor_to_major":
                effect_ok |= prev_minor
            elif effect.startswith("music:mode:is:"):
                effect_ok |= ~self.rival_state(idx, s, variable, effect.rsplit(":", 1)[1])
            else:
                effect_ok[:] = True
        return room & ~happened & effect_ok

    def rival_state(self, idx: np.ndarray, s: int, variable: str, state: str) -> np.ndarray:
        """Where a key-state rule on another variable fired its cause towards the other mode (mirrors
        ``QuestionMaker._rival_state``)."""
        rival = np.zeros(idx.size, dtype=bool)
        for rule in self.world.rules:
            if isinstance(rule, KeyStateRule) and rule.cause != variable and rule.state != state:
                rival |= self.visual_dir[rule.cause][idx, s] == _sign(rule.when, "up")
            elif isinstance(rule, ActionStateRule) and variable != "action" and rule.state != state:
                rival |= self.action[idx, s] == self.label_index[rule.action]
        return rival

    def run(self, videos: np.ndarray) -> tuple[np.ndarray, int]:
        """Simulate ``videos`` from their first scene; return the ones stuck in a cut where no rule can fire."""
        self.draw_first_scene(videos)
        stuck = np.zeros(self.n_videos, dtype=bool)
        redrawn = 0
        for s in range(1, self.n_max):
            todo = videos[(self.n_scenes[videos] > s) & ~stuck[videos]]
            for _ in range(self.world.questions.max_redraws):
                if todo.size == 0:
                    break
                fired = self.draw_cut(todo, s)
                todo = todo[~fired]
                redrawn += todo.size
            stuck[todo] = True
        return np.nonzero(stuck)[0], redrawn

    def finish(self, redraws: int) -> Simulation:
        """The taggers' scores (drawn last) and every array as a :class:`Simulation`."""
        rng, shape, n_labels = self.rng, self.shape, self.n_labels
        action_score = np.round(rng.uniform(0.55, 0.95, shape), 3)
        second_action = (self.action + rng.integers(1, n_labels, shape)) % n_labels
        second_score = np.round(rng.uniform(0.02, 1.0, shape) * (1.0 - action_score) * 0.9, 3)
        object_score = np.round(rng.uniform(0.5, 0.99, (*shape, self.n_objects)), 3)
        return Simulation(
            n_scenes=self.n_scenes,
            start_ms=self.start_ms,
            visual=self.visual,
            visual_dir=self.visual_dir,
            action=self.action,
            action_score=action_score,
            second_action=second_action,
            second_score=second_score,
            objects=self.objects,
            object_score=object_score,
            music=self.music,
            music_dir=self.music_dir,
            tonic=self.tonic,
            minor=self.minor,
            mode_dir=self.mode_dir,
            regimes=self.regimes,
            redraws=redraws,
        )


def _draw_regime(trend, n: int, rng: np.random.Generator) -> np.ndarray:  # type: ignore[no-untyped-def]
    u = rng.random(n)
    return np.where(
        u < trend.up_probability, 1, np.where(u < trend.up_probability + trend.down_probability, -1, 0)
    ).astype(np.int8)
