"""Named settings bundles (``--preset``) and the defaults a GPU gets.

A preset fills in backend options and evaluation settings the user did not give (an explicit
``--backend-opt`` or ``--max-tokens`` always wins); the resolved values land in the run's
config.json like any others, and ``preset_record`` adds where each preset value comes from.

``paper``: the published Karma-MV CKG run (``VLM_CKG.py`` in github:AMAAI-Lab/Karma-MV, commit
8101d65): Qwen2.5-Omni-7B behind vLLM, video parts with ``"fps": 4.0, "max_pixels": 448*448``,
``temperature 0``, ``max_tokens 16``; bf16 on a GPU is how that 7B model is served. Reviewed in
shared/notes/real-data-and-gpu.md, finding 7 and section 1.1.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from karma.core.errors import InputError

PAPER_FPS = 4.0
PAPER_MAX_PIXELS = 448 * 448
PAPER_MAX_TOKENS = 16

CUDA_DEFAULTS: dict[str, Any] = {"dtype": "bfloat16", "fps": 2.0, "max_pixels": PAPER_MAX_PIXELS}
"""What ``qwen-omni`` uses on ``device=cuda`` unless told otherwise: bf16 weights, Qwen's own
default of 2 frames per second (``Qwen2_5OmniProcessor`` hard-codes fps 2.0) and at most 448 x 448
pixels per frame; the CPU defaults (4 frames, about 224 x 224, float32) are sized for tests."""


class Preset(BaseModel):
    """One named bundle of settings."""

    name: str
    """The ``--preset`` value."""
    summary: str
    """One line for ``--help`` and the report."""
    backend_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Backend name -> options filled in when not given."""
    eval_settings: dict[str, Any] = Field(default_factory=dict)
    """EvalConfig fields filled in when not given."""
    sources: dict[str, str] = Field(default_factory=dict)
    """Setting -> where its value comes from."""


_PUBLISHED = "VLM_CKG.py (github:AMAAI-Lab/Karma-MV@8101d65), call_omni_with_retry payload"
PRESETS: dict[str, Preset] = {
    "paper": Preset(
        name="paper",
        summary="the published CKG run: 4 fps, at most 448x448 pixels per frame, bf16 on cuda, 16 tokens",
        backend_options={
            "qwen-omni": {
                "fps": PAPER_FPS,
                "num_frames": None,
                "max_pixels": PAPER_MAX_PIXELS,
                "max_side": 0,  # no side cap: max_pixels alone sizes the frames, as in the published run
                "dtype": "bfloat16",
                "device": "cuda",
            },
            "vllm": {
                "input_mode": "omni",
                "fps": PAPER_FPS,
                "max_side": 0,
                "dtype": "bfloat16",
                "chat_kwargs": {"mm_processor_kwargs": {"max_pixels": PAPER_MAX_PIXELS}},
            },
            "openai": {
                # per-request fields of vLLM's chat endpoint (vLLM 0.33 protocol.py)
                "extra_body": {
                    "media_io_kwargs": {"video": {"fps": PAPER_FPS, "num_frames": -1}},
                    "mm_processor_kwargs": {"max_pixels": PAPER_MAX_PIXELS},
                },
            },
            "transformers": {"dtype": "bfloat16", "device": "cuda"},
        },
        eval_settings={"max_tokens": PAPER_MAX_TOKENS, "temperature": 0.0},
        sources={
            "fps": f"{_PUBLISHED}: video_url fps 4.0",
            "max_pixels": f"{_PUBLISHED}: video_url max_pixels 448*448",
            "max_tokens": f"{_PUBLISHED}: max_tokens 16",
            "temperature": f"{_PUBLISHED}: temperature 0",
            "dtype": "bf16: Qwen2.5-Omni-7B's released dtype (not stated in the scripts)",
            "device": "cuda: the published runs used a vLLM GPU server (SERVER_URL localhost:8000)",
        },
    )
}
"""Presets by name."""


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None


def apply_preset(
    name: str, backend: str, backend_options: dict[str, Any], eval_settings: dict[str, Any], given: set[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Backend options and eval settings with the preset's values filled in where not given.

    ``given``: the eval setting names the user set explicitly (they are kept).
    """
    preset = get_preset(name)
    options = {**preset.backend_options.get(backend, {}), **backend_options}
    settings = dict(eval_settings)
    for key, value in preset.eval_settings.items():
        if key not in given:
            settings[key] = value
    return options, settings


def preset_record(name: str | None, backend: str) -> dict[str, Any] | None:
    """What config.json records about the preset: its values for this backend and their sources."""
    if not name:
        return None
    preset = get_preset(name)
    return {
        "name": preset.name,
        "summary": preset.summary,
        "backend_options": preset.backend_options.get(backend, {}),
        "eval_settings": preset.eval_settings,
        "sources": preset.sources,
    }


def device_defaults(device: str, **given: Any) -> dict[str, Any]:
    """``CUDA_DEFAULTS`` for the options left as None on a cuda device; CPU defaults otherwise."""
    cpu = {"dtype": "float32", "num_frames": 4, "fps": None, "max_pixels": 28 * 28 * 64, "max_side": 448}
    on_cuda = str(device).startswith("cuda")
    out = dict(given)
    frames_given = given.get("num_frames") is not None or given.get("fps") is not None
    for key, value in out.items():
        if value is not None:
            continue
        if key in ("num_frames", "fps") and frames_given:
            continue
        if on_cuda and key in CUDA_DEFAULTS:
            out[key] = CUDA_DEFAULTS[key]
        elif on_cuda and key in ("num_frames", "max_side"):
            out[key] = None  # rate sampling and the pixel cap decide on a GPU
        else:
            out[key] = cpu.get(key)
    if out.get("max_side") == 0:
        out["max_side"] = None  # 0 = no cap on the longer side
    return out
