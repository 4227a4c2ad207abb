"""Render scene variables into real mp4 media (H.264 video + AAC audio) whose measurable
properties follow the scene's feature values.

Public API (stable; ``karma synth --media`` calls it):

- ``render_video(qa_path, features_path, out_dir, options) -> MediaResult`` renders one video:
  ``out_dir/clips/<video_id>/scene_NNN.mp4`` for every scene referenced by the QA file and
  ``out_dir/videos/<video_id>.mp4``, the scenes concatenated in time order with hard cuts at the
  times listed in ``MediaResult.cut_times``. Scene durations come from the QA start/end times
  (``options.default_scene_seconds`` when a scene has no times); durations are rounded to whole
  frames, so the full video's cut times are multiples of ``1/fps``.
- ``render_scene_clip(path, features, duration_s, options, *, scene_index=0) -> SceneClip`` renders
  one clip (used by tests and by ``render_video``).
- ``MediaOptions`` (size, fps, audio rate, default duration, seed) and the result records.

What the pictures carry (definitions match ``graph.extract``; all on luma ``Y = 0.299 R + 0.587 G +
0.114 B`` of 8-bit RGB):

- ``Brightness`` -> mean luma (0-255) of every frame, exact up to H.264 rounding.
- ``Contrast`` -> standard deviation of luma within the frame: the frame is a soft checkerboard
  texture with unit standard deviation scaled by the contrast, so mean and std are set directly.
  Brightness +- 1.2 x Contrast should stay within 0-255 or the texture clips.
- ``Saturation`` -> mean HSV saturation (0-255): every pixel gets the scene's hue at that
  saturation; pixels too bright for that hue and saturation are desaturated just enough to keep
  their luma (so brightness stays exact and saturation is approximate on very bright scenes).
- ``Motion`` -> mean absolute luma difference between consecutive frames: the texture translates
  at a constant speed chosen from a calibration curve of difference vs. shift. Motion can reach
  about 1.8 x Contrast at most (half a texture period per frame); higher targets saturate there.
- The hue of each scene is chosen (seeded) at least 90 degrees away from the previous scene's
  hue, so hard cuts are visible to a content-based cut detector.

What the sound carries (stereo, identical channels):

- ``Key`` (``"<Tonic> major|minor"``) -> a chord progression I-IV-V-I (minor: i-iv-V-i with the
  harmonic-minor leading tone), two beats per chord, arpeggiated chord tones over a sustained pad
  and a tonic pedal bass, so a chroma key estimator sees the key. Unparseable or missing keys
  fall back to C major.
- ``Tempo (BPM)`` -> note onsets exactly on the beats (accented downbeats); default 110 BPM.
- ``Average Loudness (dB)`` -> the stereo signal is scaled to that integrated loudness in LUFS
  (ITU-R BS.1770-4 via pyloudnorm; clips shorter than 0.4 s are measured on a looped copy).
  Targets above about -8 LUFS clip at full scale. Default -20 LUFS.

The frames and the audio are deterministic for a given seed, video id and scene name. The H.264
bitstream is written with one encoder thread from frames converted to 4:2:0 here; it is usually
byte-identical between runs but x264 does not guarantee it, so compare decoded content.
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from karma.core.errors import InputError
from karma.core.media_write import Mp4Writer
from karma.core.music import parse_key
from karma.core.records import KEY_TEMPO, SceneFeatures, seconds_to_time
from karma.core.visual import LUMA_WEIGHTS

DEFAULT_KEY = "C major"
DEFAULT_TEMPO = 110.0
DEFAULT_LOUDNESS = -20.0
_CHECKER_SHARPNESS = 3.0  # tanh slope: soft edges survive 4:2:0 chroma and H.264 without ringing


class MediaOptions(BaseModel):
    """How media are rendered."""

    width: int = Field(default=320, ge=32, multiple_of=2)
    """Frame width in pixels (even: 4:2:0 chroma)."""
    height: int = Field(default=180, ge=32, multiple_of=4)
    """Frame height in pixels (a multiple of 4: 4:2:0 chroma planes are packed two rows per row)."""
    fps: int = Field(default=24, ge=1, le=120)
    """Frames per second."""
    sample_rate: int = Field(default=22050, ge=8000)
    """Audio sample rate in Hz."""
    default_scene_seconds: float = Field(default=3.0, gt=0)
    """Duration of a scene whose QA entry has no start/end times."""
    seed: int = 0
    """Seed for hues, textures and directions (same seed -> same media)."""
    crf: int = Field(default=18, ge=0, le=51)
    """x264 constant rate factor (lower = closer to the rendered values)."""
    write_full_video: bool = True
    """Also write ``videos/<video_id>.mp4`` (the concatenation with hard cuts)."""


class SceneClip(BaseModel):
    """One rendered scene clip."""

    scene_id: str
    """``scene_NNN`` (no ``.mp4``)."""
    path: str
    """Clip file written."""
    n_frames: int
    """Number of video frames."""
    duration_s: float
    """``n_frames / fps``."""
    start_s: float = 0.0
    """Start of the scene inside the full video, seconds."""
    end_s: float = 0.0
    """End of the scene inside the full video, seconds."""
    hue_deg: float = 0.0
    """Hue used for the scene (degrees), for diagnostics."""
    motion_shift_px: float = 0.0
    """Texture shift per frame in pixels (chosen to reach the target Motion)."""


class MediaResult(BaseModel):
    """What ``render_video`` wrote for one video."""

    video_id: str
    """The video id (from the QA file)."""
    video_path: str | None
    """``videos/<video_id>.mp4``; None when ``write_full_video`` is off."""
    clips: list[SceneClip]
    """Scene clips in time order."""
    cut_times: list[float]
    """Hard-cut times in the full video, seconds (the start of every scene but the first)."""
    fps: int
    """Frame rate of all files."""

    def cut_times_hms(self) -> list[str]:
        """Cut times as ``HH:MM:SS.mmm``."""
        return [seconds_to_time(t) for t in self.cut_times]


# --------------------------------------------------------------------------------------------
# Pictures


def _hue_rgb(hue_deg: float) -> np.ndarray:
    """Fully saturated RGB (max channel 1) for a hue."""
    h = (hue_deg % 360.0) / 60.0
    x = 1.0 - abs(h % 2.0 - 1.0)
    sector = int(h) % 6
    return np.array(
        [(1, x, 0), (x, 1, 0), (0, 1, x), (0, x, 1), (x, 0, 1), (1, 0, x)][sector], dtype=np.float64
    )


def _desat_weight(hue_deg: float) -> float:
    """``sum_c w_c (1 - c_full)``: luma lost per unit saturation at V = 1 for this hue."""
    return float(LUMA_WEIGHTS @ (1.0 - _hue_rgb(hue_deg)))


def _pick_hue(rng: np.random.Generator, previous: float | None, needed_luma: float, sat: float) -> float:
    """A hue >= 90 degrees from the previous scene's whose V <= 255 holds for the needed luma."""
    candidates = rng.permutation(np.arange(0.0, 360.0, 30.0))
    far = [h for h in candidates if previous is None or _circ_dist(h, previous) >= 90.0]
    for hue in far:
        if 255.0 * (1.0 - sat * _desat_weight(hue)) >= needed_luma:
            return float(hue)
    return float(min(far, key=_desat_weight))  # brightest-capable far hue; desaturation does the rest


def _circ_dist(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _checker(a_phase: np.ndarray, b_phase: np.ndarray) -> np.ndarray:
    return np.tanh(_CHECKER_SHARPNESS * np.sin(a_phase)) * np.tanh(_CHECKER_SHARPNESS * np.sin(b_phase))


@lru_cache(maxsize=1)
def _motion_curve() -> tuple[np.ndarray, np.ndarray, float, float]:
    """Mean |T(a + shift) - T(a)| of the unit-std checkerboard vs. phase shift in [0, pi].

    Returns (phase shifts, mean abs differences, texture mean, texture std).
    """
    grid = np.linspace(0.0, 2.0 * np.pi, 256, endpoint=False)
    a, b = np.meshgrid(grid, grid, indexing="ij")
    base = _checker(a, b)
    mean, std = float(base.mean()), float(base.std())
    shifts = np.linspace(0.0, np.pi, 129)
    diffs = np.array([np.abs(_checker(a + s, b) - base).mean() / std for s in shifts])
    return shifts, diffs, mean, std


def _phase_step_for_motion(motion: float, contrast: float) -> float:
    """Per-frame phase advance that makes the mean abs luma difference equal ``motion``."""
    if motion <= 0 or contrast <= 0:
        return 0.0
    shifts, diffs, _, _ = _motion_curve()
    ratio = min(motion / contrast, float(diffs[-1]))
    return float(np.interp(ratio, diffs, shifts))


class _SceneLook(BaseModel):
    brightness: float
    contrast: float
    saturation: float
    motion: float
    hue_deg: float
    wavelength_px: float
    angle: float
    phase_a: float
    phase_b: float
    phase_step: float


def _scene_look(
    features: SceneFeatures, options: MediaOptions, rng: np.random.Generator, prev_hue
) -> _SceneLook:
    brightness = float(np.clip(_num(features.brightness, 128.0), 0.0, 255.0))
    contrast = max(0.0, _num(features.contrast, 40.0))
    saturation = float(np.clip(_num(features.saturation, 100.0), 0.0, 255.0))
    motion = max(0.0, _num(features.motion, 5.0))
    sat = saturation / 255.0
    hue = _pick_hue(rng, prev_hue, min(255.0, brightness + 1.2 * contrast), sat)
    scale = options.width / 320.0
    return _SceneLook(
        brightness=brightness,
        contrast=contrast,
        saturation=saturation,
        motion=motion,
        hue_deg=hue,
        wavelength_px=float(rng.uniform(36.0, 64.0) * scale),
        angle=float(rng.uniform(0.0, np.pi)),
        phase_a=float(rng.uniform(0.0, 2 * np.pi)),
        phase_b=float(rng.uniform(0.0, 2 * np.pi)),
        phase_step=_phase_step_for_motion(motion, contrast),
    )


def _num(value: float | None, default: float) -> float:
    if value is None or not math.isfinite(value):
        return default
    return float(value)


class _FramePainter:
    """Paints the frames of one scene (luma texture -> RGB at the scene's hue and saturation)."""

    def __init__(self, look: _SceneLook, width: int, height: int) -> None:
        self.look = look
        # float64 throughout: float32 transcendental results can differ in the last bit with the
        # array's memory alignment, which flips rounding of a few pixels and breaks same seed ->
        # same bytes.
        y, x = np.mgrid[0:height, 0:width].astype(np.float64)
        k = 2.0 * np.pi / look.wavelength_px
        self.a0 = k * (x * math.cos(look.angle) + y * math.sin(look.angle)) + look.phase_a
        b = k * (-x * math.sin(look.angle) + y * math.cos(look.angle)) + look.phase_b
        # Only the a-axis moves, so the b factor of the checkerboard is computed once per scene.
        self.b_factor = np.tanh(_CHECKER_SHARPNESS * np.sin(b))
        _, _, self.t_mean, self.t_std = _motion_curve()
        self.full = _hue_rgb(look.hue_deg)
        self.desat = _desat_weight(look.hue_deg)

    def frame(self, index: int) -> np.ndarray:
        look = self.look
        a_factor = np.tanh(_CHECKER_SHARPNESS * np.sin(self.a0 + index * look.phase_step))
        texture = (a_factor * self.b_factor - self.t_mean) / self.t_std
        luma = np.clip(look.brightness + look.contrast * texture, 0.0, 255.0)
        sat = np.full_like(luma, look.saturation / 255.0)
        if self.desat > 0:
            # V = luma / (1 - s * desat) must stay <= 255: lower s where needed, keeping luma exact.
            max_sat = (1.0 - luma / 255.0) / self.desat
            sat = np.minimum(sat, np.maximum(max_sat, 0.0))
        value = luma / np.maximum(1.0 - sat * self.desat, 1e-6)
        rgb = value[..., None] * (1.0 - sat[..., None] * (1.0 - self.full))
        return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------------------------
# Sound

_MAJOR_PROGRESSION = ((0, 4, 7), (5, 9, 12), (7, 11, 14), (0, 4, 7))
_MINOR_PROGRESSION = ((0, 3, 7), (5, 8, 12), (7, 11, 14), (0, 3, 7))  # V major: leading tone


def _tone(freq: float, n: int, sr: int, decay_s: float) -> np.ndarray:
    t = np.arange(n) / sr
    wave = sum(np.sin(2 * np.pi * freq * h * t) / h for h in (1, 2, 3) if freq * h < sr / 2.2)
    attack = np.minimum(1.0, t / 0.005)
    return wave * attack * np.exp(-t / decay_s)


def _midi_hz(midi: float) -> float:
    return 440.0 * 2.0 ** ((midi - 69.0) / 12.0)


def synthesize_audio(features: SceneFeatures, duration_s: float, sample_rate: int) -> np.ndarray:
    """Tonal stereo audio (shape ``(2, samples)``, float32) for one scene: key, tempo, loudness."""
    parsed = parse_key(features.key) or parse_key(DEFAULT_KEY)
    assert parsed is not None
    tonic, mode = parsed
    tempo = _num(_as_float(features.extra(KEY_TEMPO)), DEFAULT_TEMPO)
    tempo = float(np.clip(tempo, 30.0, 300.0))
    n = max(1, round(duration_s * sample_rate))
    sig = np.zeros(n)
    beat = 60.0 / tempo
    progression = _MAJOR_PROGRESSION if mode == "major" else _MINOR_PROGRESSION
    root = 60 + tonic  # chord tones around middle C
    bass = 36 + tonic
    n_beats = math.ceil(duration_s / beat) + 1
    for i in range(n_beats):
        start = round(i * beat * sample_rate)
        if start >= n:
            break
        chord = progression[(i // 2) % len(progression)]
        length = min(n - start, round(beat * 2 * sample_rate))
        accent = 1.0 if i % 4 == 0 else 0.7
        # arpeggio note on every beat (the onsets a tempo estimator finds)
        note = root + chord[i % 3] + (12 if i % 4 == 3 else 0)
        sig[start : start + length] += accent * 0.5 * _tone(_midi_hz(note), length, sample_rate, 0.3)
        if i % 2 == 0:  # pad chord for the two beats of this chord
            for interval in chord:
                sig[start : start + length] += 0.15 * _tone(
                    _midi_hz(root + interval), length, sample_rate, 1.5
                )
        if i % 4 == 0:  # tonic pedal bass every bar
            blen = min(n - start, round(beat * 4 * sample_rate))
            sig[start : start + blen] += 0.35 * _tone(_midi_hz(bass), blen, sample_rate, 2.0)
    stereo = np.stack([sig, sig])
    return scale_to_loudness(stereo, sample_rate, _num(features.loudness_db, DEFAULT_LOUDNESS))


def _as_float(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def scale_to_loudness(stereo: np.ndarray, sample_rate: int, target_lufs: float) -> np.ndarray:
    """Scale ``(channels, samples)`` audio to an integrated loudness in LUFS (BS.1770-4)."""
    import pyloudnorm

    data = stereo.T
    measured_on = data
    min_len = math.ceil(0.45 * sample_rate)
    if len(data) < min_len:  # pyloudnorm needs at least one 0.4 s gating block
        measured_on = np.tile(data, (math.ceil(min_len / max(1, len(data))), 1))
    loudness = pyloudnorm.Meter(sample_rate).integrated_loudness(measured_on)
    if not math.isfinite(loudness):
        return stereo.astype(np.float32)
    gain = 10.0 ** ((target_lufs - loudness) / 20.0)
    return np.clip(stereo * gain, -1.0, 1.0).astype(np.float32)


# --------------------------------------------------------------------------------------------
# Writing


def rgb_to_yuv420p(rgb: np.ndarray) -> np.ndarray:
    """BT.601 limited-range planar 4:2:0 (``(H * 3 / 2, W)`` uint8) from even-sized 8-bit RGB."""
    f = rgb.astype(np.float64)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0
    cb = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0
    cr = 128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0
    height, width = y.shape

    def sub(plane: np.ndarray) -> np.ndarray:  # 2x2 box average (MPEG-1 style chroma siting)
        # explicit sums, not .mean(): a fixed order of additions gives the same bits every run
        return (plane[0::2, 0::2] + plane[0::2, 1::2] + plane[1::2, 0::2] + plane[1::2, 1::2]) / 4.0

    planes = [y, sub(cb).reshape(height // 4, width), sub(cr).reshape(height // 4, width)]
    return np.clip(np.rint(np.concatenate(planes, axis=0)), 0, 255).astype(np.uint8)


def _writer(path: Path, options: MediaOptions) -> Mp4Writer:
    """An mp4 for H.264 video + stereo AAC (``karma.core.media_write``: written under a temporary
    name and published on close, so a kill never leaves a torn mp4 under the real name)."""
    writer = Mp4Writer(path)
    # One encoder thread: x264's frame threads make the bitstream depend on timing
    # (parallelism comes from rendering videos in separate processes).
    writer.add_video(
        options.fps,
        options.width,
        options.height,
        options={"crf": str(options.crf), "preset": "veryfast"},
        threads=1,
    )
    writer.add_audio(options.sample_rate, "stereo")
    return writer


def _scene_rng(options: MediaOptions, video_id: str, scene_id: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{options.seed}|{video_id}|{scene_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _render_into(
    writers: list[Mp4Writer],
    features: SceneFeatures,
    n_frames: int,
    options: MediaOptions,
    rng: np.random.Generator,
    prev_hue: float | None,
) -> _SceneLook:
    look = _scene_look(features, options, rng, prev_hue)
    painter = _FramePainter(look, options.width, options.height)
    for index in range(n_frames):
        # Convert here rather than in swscale: the first swscale conversion of a process was seen
        # to differ run to run; this conversion is exact arithmetic on integer inputs.
        yuv = rgb_to_yuv420p(painter.frame(index))
        for writer in writers:
            writer.write_frame(yuv, format="yuv420p")
    audio = synthesize_audio(features, n_frames / options.fps, options.sample_rate)
    for writer in writers:
        writer.write_audio(audio)
    return look


def render_scene_clip(
    path: str | Path,
    features: SceneFeatures,
    duration_s: float,
    options: MediaOptions | None = None,
    *,
    scene_id: str = "scene_001",
    video_id: str = "clip",
    previous_hue: float | None = None,
) -> SceneClip:
    """Write one scene clip whose frames and audio follow ``features`` (see the module docstring)."""
    options = options or MediaOptions()
    n_frames = max(1, round(duration_s * options.fps))
    with _writer(Path(path), options) as writer:  # a failed render leaves no clip behind
        look = _render_into(
            [writer], features, n_frames, options, _scene_rng(options, video_id, scene_id), previous_hue
        )
    duration = n_frames / options.fps
    return SceneClip(
        scene_id=scene_id,
        path=str(path),
        n_frames=n_frames,
        duration_s=duration,
        end_s=duration,
        hue_deg=look.hue_deg,
        motion_shift_px=look.phase_step * look.wavelength_px / (2 * np.pi),
    )


class _PlannedScene(BaseModel):
    scene_id: str
    start_s: float | None
    end_s: float | None


def _plan_scenes(qa_path: Path) -> tuple[str, list[_PlannedScene]]:
    from karma.data import load_qa_file

    result = load_qa_file(qa_path)
    errors = [p for p in result.problems if p.severity == "error"]
    if not result.transitions and errors:
        raise InputError(f"{qa_path}: cannot read QA file: {errors[0]}")
    scenes: dict[str, _PlannedScene] = {}
    for transition in result.transitions:
        for ref in (transition.past_scene, transition.current_scene):
            known = scenes.get(ref.scene_id)
            if known is None or (known.start_s is None and ref.start_seconds is not None):
                scenes[ref.scene_id] = _PlannedScene(
                    scene_id=ref.scene_id, start_s=ref.start_seconds, end_s=ref.end_seconds
                )
    if not scenes:
        raise InputError(f"{qa_path}: no scenes referenced")

    # Scene numbers are in time order in Karma-MV; the full video follows them.
    return result.video_id, sorted(scenes.values(), key=lambda s: int(s.scene_id.split("_")[1]))


class ScenePlan(BaseModel):
    """One scene to render: its id, features and length."""

    scene_id: str
    """``scene_NNN`` (no ``.mp4``)."""
    features: SceneFeatures
    """The values the media must carry."""
    n_frames: int = Field(ge=1)
    """Length in frames."""


def render_scenes(
    video_id: str, scenes: list[ScenePlan], out_dir: str | Path, options: MediaOptions | None = None
) -> MediaResult:
    """Render scene clips and their concatenation for one video from an explicit scene list.

    ``render_video`` plans the scenes from QA and feature files and calls this; tests and benchmarks
    call it directly with scenes of their own.
    """
    options = options or MediaOptions()
    out_dir = Path(out_dir)
    full_writer = None
    video_path = out_dir / "videos" / f"{video_id}.mp4"
    if options.write_full_video:
        full_writer = _writer(video_path, options)
    clips: list[SceneClip] = []
    cursor_frames = 0
    prev_hue: float | None = None
    try:
        for scene in scenes:
            clip_path = out_dir / "clips" / video_id / f"{scene.scene_id}.mp4"
            with _writer(clip_path, options) as clip_writer:  # a failed render leaves no clip behind
                writers = [clip_writer] + ([full_writer] if full_writer is not None else [])
                look = _render_into(
                    writers,
                    scene.features,
                    scene.n_frames,
                    options,
                    _scene_rng(options, video_id, scene.scene_id),
                    prev_hue,
                )
            prev_hue = look.hue_deg
            clips.append(
                SceneClip(
                    scene_id=scene.scene_id,
                    path=str(clip_path),
                    n_frames=scene.n_frames,
                    duration_s=scene.n_frames / options.fps,
                    start_s=cursor_frames / options.fps,
                    end_s=(cursor_frames + scene.n_frames) / options.fps,
                    hue_deg=look.hue_deg,
                    motion_shift_px=look.phase_step * look.wavelength_px / (2 * np.pi),
                )
            )
            cursor_frames += scene.n_frames
    except BaseException:
        if full_writer is not None:
            full_writer.abort()  # nor a partial full video
        raise
    if full_writer is not None:
        full_writer.close()
    return MediaResult(
        video_id=video_id,
        video_path=str(video_path) if full_writer is not None else None,
        clips=clips,
        cut_times=[clip.start_s for clip in clips[1:]],
        fps=options.fps,
    )


def render_video(
    qa_path: str | Path,
    features_path: str | Path,
    out_dir: str | Path,
    options: MediaOptions | None = None,
) -> MediaResult:
    """Render every scene the QA file references, plus the concatenated full video (see module doc).

    Raises ``ValueError`` naming the file and scene when the QA or feature file cannot be used.
    """
    from karma.data import load_features_file

    options = options or MediaOptions()
    qa_path, features_path = Path(qa_path), Path(features_path)
    video_id, planned = _plan_scenes(qa_path)
    loaded = load_features_file(features_path)
    if loaded.features is None:
        reason = loaded.problems[0].reason if loaded.problems else "unreadable"
        raise InputError(f"{features_path}: cannot read feature file: {reason}")
    scene_features = loaded.features.scenes
    missing = [s.scene_id for s in planned if s.scene_id not in scene_features]
    if missing:
        raise InputError(f"{features_path}: scenes referenced by {qa_path.name} have no features: {missing}")
    plans: list[ScenePlan] = []
    for scene in planned:
        if scene.start_s is not None and scene.end_s is not None and scene.end_s > scene.start_s:
            # Round the boundaries (not the duration) so clip lengths add up to the QA times.
            n_frames = round(scene.end_s * options.fps) - round(scene.start_s * options.fps)
        else:
            n_frames = round(options.default_scene_seconds * options.fps)
        plans.append(
            ScenePlan(
                scene_id=scene.scene_id, features=scene_features[scene.scene_id], n_frames=max(1, n_frames)
            )
        )
    return render_scenes(video_id, plans, out_dir, options)
