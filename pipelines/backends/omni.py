"""Qwen2.5-Omni (thinker) through transformers: the VLM pipeline's requests turned into model inputs.

A request from ``pipelines.vlm`` holds ``video_url`` parts (``file://`` clips) and text. This module
reads each clip the same way for every model size: frames sampled with decord (``pipelines.media``),
the audio track read with PyAV at 16 kHz, video frames cut into the Qwen2-VL patch layout, audio into
Whisper log-mel features, and the prompt written in Qwen's ChatML with one placeholder run per clip.
With ``use_audio_in_video`` each clip's video and audio tokens are interleaved in 2-second chunks,
exactly as ``Qwen2_5OmniProcessor`` lays them out; the thinker's 3-D rotary positions depend on it.

Why karma builds the inputs instead of calling ``qwen_omni_utils.process_mm_info``: that package
imports torchvision at import time (PyPI's torchvision beside the CPU torch wheel breaks
transformers here) and reads a video's audio by running the ``ffmpeg`` binary through audioread,
while decord's own audio is corrupt for stereo. ``omni_conversation`` still emits the
qwen-omni-utils conversation form, for users who want to run that package on a machine that has it.

Audio comes from the ``audio_url`` part that follows a clip's ``video_url`` part (the VLM pipeline
writes one per clip: a derived wav, see ``pipelines.vlm``); a clip without one falls back to its own
audio track. With ``use_audio_in_video`` every clip needs audio (the thinker counts a clip as
audio-visual by the audio-start token after the vision-start token): that is why the VLM pipeline's
default for predictive questions is a silent track rather than no track. With it off, each audio
part becomes a standalone ``<|audio_bos|><|AUDIO|>…<|audio_eos|>`` item after its video, the layout
``Qwen2_5OmniProcessor`` writes for separate audio inputs, and a masked clip without audio is heard
as nothing at all.

Batches: ``QwenOmniBackend.generate`` runs greedy requests as padded batches (left padding, the
attention mask drives the thinker's 3-D rotary positions), ``batch_size`` at a time.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.backends.media_parts import media_items
from pipelines.media import FrameSampling, read_audio, read_wav, sample_frames

AUDIO_RATE = 16_000
"""Whisper feature extractor rate used by Qwen2.5-Omni."""
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
"""Pixel normalisation of the Qwen2-VL vision tower (OpenAI CLIP statistics)."""
SPECIAL_TOKENS = {
    "image": "<|IMAGE|>",
    "audio": "<|AUDIO|>",
    "video": "<|VIDEO|>",
    "vision_bos": "<|vision_bos|>",
    "vision_eos": "<|vision_eos|>",
    "audio_bos": "<|audio_bos|>",
    "audio_eos": "<|audio_eos|>",
    "im_start": "<|im_start|>",
    "im_end": "<|im_end|>",
}
"""The Qwen2.5-Omni special tokens karma writes (the tokenizer must know them)."""


def clip_path_from_url(url: str) -> Path:
    """``file:///a/b.mp4`` -> ``/a/b.mp4``; only local files are read."""
    parsed = urlparse(url)
    if parsed.scheme not in ("file", ""):
        raise ValueError(f"only file:// clips can be read locally, got {url!r}")
    return Path(unquote(parsed.path))


def omni_conversation(request: ChatRequest) -> list[dict[str, Any]]:
    """The request in the conversation form of qwen-omni-utils / the Qwen2.5-Omni chat template."""
    conversation = []
    for message in request.messages:
        if isinstance(message.content, str):
            content: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
        else:
            content = []
            for part in message.content:
                if part.type == "text":
                    content.append({"type": "text", "text": part.text or ""})
                elif part.type == "video_url":
                    content.append({"type": "video", "video": str(clip_path_from_url(part.url or ""))})
                elif part.type == "audio_url":
                    content.append({"type": "audio", "audio": str(clip_path_from_url(part.url or ""))})
                else:
                    content.append({"type": "image", "image": str(clip_path_from_url(part.url or ""))})
        conversation.append({"role": message.role, "content": content})
    return conversation


def smart_size(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Height and width rounded to multiples of ``factor`` with the pixel count kept in range
    (the Qwen2-VL resize rule)."""
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def video_patches(
    frames: np.ndarray,
    patch_size: int,
    temporal_patch_size: int,
    merge_size: int,
    min_pixels: int,
    max_pixels: int,
) -> tuple[np.ndarray, tuple[int, int, int]]:
    """(T, H, W, 3) uint8 frames -> (patches, C * tp * p * p) float32 and the (t, h, w) patch grid,
    in the Qwen2-VL vision tower's patch order."""
    import cv2

    factor = patch_size * merge_size
    height, width = smart_size(frames.shape[1], frames.shape[2], factor, min_pixels, max_pixels)
    resized = np.stack([cv2.resize(f, (width, height), interpolation=cv2.INTER_CUBIC) for f in frames])
    pixels = (resized.astype(np.float32) / 255.0 - np.array(CLIP_MEAN, np.float32)) / np.array(
        CLIP_STD, np.float32
    )
    pixels = pixels.transpose(0, 3, 1, 2)  # T, C, H, W
    if len(pixels) % temporal_patch_size:
        # the tower groups frames in pairs: repeat the last frame to complete the final group
        repeat = temporal_patch_size - len(pixels) % temporal_patch_size
        pixels = np.concatenate([pixels, np.repeat(pixels[-1:], repeat, axis=0)])
    grid_t = len(pixels) // temporal_patch_size
    grid_h, grid_w = height // patch_size, width // patch_size
    channels = pixels.shape[1]
    patches = pixels.reshape(
        grid_t, temporal_patch_size, channels,
        grid_h // merge_size, merge_size, patch_size,
        grid_w // merge_size, merge_size, patch_size,
    )  # fmt: skip
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w, channels * temporal_patch_size * patch_size * patch_size)
    return np.ascontiguousarray(flat), (grid_t, grid_h, grid_w)


def audio_token_count(feature_length: int) -> int:
    """Tokens the audio tower emits for ``feature_length`` mel frames (two stride-2 reductions)."""
    return ((feature_length - 1) // 2 + 1 - 2) // 2 + 1


def chunk_bounds(positions: np.ndarray, tokens_per_chunk: int) -> list[tuple[int, int]]:
    """Split increasing temporal positions into runs of ``tokens_per_chunk`` position units."""
    bounds, start, chunk = [], 0, 1
    for index, value in enumerate(positions):
        if value >= chunk * tokens_per_chunk:
            bounds.append((start, index))
            start = index
            chunk += 1
    bounds.append((start, len(positions)))
    return bounds


def processor_audio_kwargs(flag: bool) -> dict[str, bool]:
    """The ``Qwen2_5OmniProcessor`` keyword that interleaves each video's audio, by version:
    ``use_audio_in_video`` up to transformers 5.24, ``load_audio_from_video`` from 5.25 on (5.24
    maps the old name to the new one with a deprecation warning; 5.25 drops it)."""
    from transformers.models.qwen2_5_omni import processing_qwen2_5_omni as processing

    names: set[str] = set()
    for cls in processing.Qwen2_5OmniProcessorKwargs.__mro__:
        names |= set(getattr(cls, "__annotations__", {}))
    key = "load_audio_from_video" if "load_audio_from_video" in names else "use_audio_in_video"
    return {key: flag}


def _maybe_path(url: str | None) -> Path | None:
    return clip_path_from_url(url) if url else None


def load_audio_16k(path: Path) -> np.ndarray:
    """Mono float32 audio at 16 kHz from a wav (soundfile) or any media file's track (PyAV)."""
    if path.suffix.lower() == ".wav":
        audio, rate = read_wav(path)
        if rate != AUDIO_RATE:
            from scipy.signal import resample_poly

            divisor = math.gcd(rate, AUDIO_RATE)
            audio = resample_poly(audio, AUDIO_RATE // divisor, rate // divisor).astype(np.float32)
        return audio
    return read_audio(path, sample_rate=AUDIO_RATE)


@dataclass
class OmniSettings:
    """What changes how a clip becomes model inputs."""

    sampling: FrameSampling
    """Frame sampling per clip (count or rate, and the resolution cap before patching)."""
    use_audio_in_video: bool = True
    """Feed each clip's audio track interleaved with its frames."""
    min_pixels: int = 28 * 28 * 4
    """Lower bound on a frame's pixels after the Qwen resize."""
    max_pixels: int = 28 * 28 * 64
    """Upper bound on a frame's pixels after the Qwen resize (tokens per frame grow with it)."""
    seconds_per_chunk: float = 2.0
    """Interleaving chunk length (Qwen2.5-Omni default)."""
    position_id_per_seconds: int = 25
    """Temporal positions per second (Qwen2.5-Omni default)."""


class OmniInputBuilder:
    """Turns a VLM ChatRequest into Qwen2.5-Omni thinker inputs (tensors and the token layout)."""

    def __init__(self, tokenizer: Any, thinker_config: Any, feature_extractor: Any, settings: OmniSettings):
        self.tokenizer = tokenizer
        self.config = thinker_config
        self.feature_extractor = feature_extractor
        self.settings = settings
        vision = thinker_config.vision_config
        self.patch_size = vision.patch_size
        self.temporal_patch_size = vision.temporal_patch_size
        self.merge_size = vision.spatial_merge_size
        missing = [
            tok
            for tok in SPECIAL_TOKENS.values()
            if tokenizer.convert_tokens_to_ids(tok) in (None, tokenizer.unk_token_id)
        ]
        if missing:
            raise ValueError(f"the tokenizer lacks the Qwen2.5-Omni special tokens {missing}")

    def _tok(self, name: str) -> str:
        return SPECIAL_TOKENS[name]

    def audio_inputs(self, path: Path) -> dict[str, Any]:
        """One audio source (a wav part, or a clip's own track) -> waveform and mel features."""
        audio = load_audio_16k(path)
        if audio.size == 0:
            raise ValueError(
                f"{path}: no audio track, but use_audio_in_video is on "
                "(use a silent track for masked clips, or turn use_audio_in_video off)"
            )
        features = self.feature_extractor(
            audio,
            sampling_rate=AUDIO_RATE,
            return_attention_mask=True,
            padding="max_length",
            return_tensors="np",
        )
        return {
            "audio": audio,
            "input_features": features["input_features"][0],
            "feature_mask": features["attention_mask"][0],
        }

    def clip_inputs(self, path: Path, audio_path: Path | None = None) -> dict[str, Any]:
        """Frames -> patches and grid; audio (``audio_path``, else the clip's own track) -> mel
        features, when ``use_audio_in_video`` is on."""
        sampled = sample_frames(path, self.settings.sampling)
        patches, grid = video_patches(
            sampled.frames, self.patch_size, self.temporal_patch_size, self.merge_size,
            self.settings.min_pixels, self.settings.max_pixels,
        )  # fmt: skip
        out: dict[str, Any] = {
            "patches": patches,
            "grid": grid,
            "second_per_grid": self.temporal_patch_size / sampled.sample_fps,
            "frames": sampled,
        }
        if self.settings.use_audio_in_video:
            out.update(self.audio_inputs(audio_path or path))
        return out

    def audio_placeholder(self, audio: dict[str, Any]) -> str:
        """The token run of a standalone audio item (``use_audio_in_video`` off)."""
        n_audio = audio_token_count(int(audio["feature_mask"].sum()))
        return self._tok("audio_bos") + self._tok("audio") * n_audio + self._tok("audio_eos")

    def clip_placeholder(self, clip: dict[str, Any]) -> str:
        """The token run that stands for one clip in the prompt text."""
        t, h, w = clip["grid"]
        per_frame = (h // self.merge_size) * (w // self.merge_size)
        video_tok, audio_tok = self._tok("video"), self._tok("audio")
        if not self.settings.use_audio_in_video:
            return self._tok("vision_bos") + video_tok * (t * per_frame) + self._tok("vision_eos")
        n_audio = audio_token_count(int(clip["feature_mask"].sum()))
        video_pos = (
            np.repeat(np.arange(t), per_frame)
            * clip["second_per_grid"]
            * self.settings.position_id_per_seconds
        )
        per_chunk = int(self.settings.position_id_per_seconds * self.settings.seconds_per_chunk)
        video_chunks = chunk_bounds(video_pos, per_chunk)
        audio_chunks = chunk_bounds(np.arange(n_audio), per_chunk)
        body = []
        for j in range(max(len(video_chunks), len(audio_chunks))):
            if j < len(video_chunks):
                body.append(video_tok * (video_chunks[j][1] - video_chunks[j][0]))
            if j < len(audio_chunks):
                body.append(audio_tok * (audio_chunks[j][1] - audio_chunks[j][0]))
        return (
            self._tok("vision_bos")
            + self._tok("audio_bos")
            + "".join(body)
            + self._tok("audio_eos")
            + self._tok("vision_eos")
        )

    def build(self, request: ChatRequest) -> dict[str, Any]:
        """Model inputs for one request (batch of one) plus ``clips`` (what each clip became)."""
        import torch

        clips: list[dict[str, Any]] = []
        audios: list[dict[str, Any]] = []  # audio features in placeholder order
        text = []
        for message in request.messages:
            text.append(f"{self._tok('im_start')}{message.role}\n")
            for kind, video, audio in media_items(message.content):
                if kind == "text":
                    text.append(video or "")
                elif kind == "video" and self.settings.use_audio_in_video:
                    clip = self.clip_inputs(clip_path_from_url(video or ""), _maybe_path(audio))
                    clips.append(clip)
                    audios.append(clip)
                    text.append(self.clip_placeholder(clip))
                elif kind == "video":
                    clip = self.clip_inputs(clip_path_from_url(video or ""))
                    clips.append(clip)
                    text.append(self.clip_placeholder(clip))
                    if audio:
                        item = self.audio_inputs(clip_path_from_url(audio))
                        audios.append(item)
                        text.append(self.audio_placeholder(item))
                else:  # a standalone audio part
                    item = self.audio_inputs(clip_path_from_url(audio or ""))
                    audios.append(item)
                    text.append(self.audio_placeholder(item))
            text.append(f"{self._tok('im_end')}\n")
        text.append(f"{self._tok('im_start')}assistant\n")
        prompt = "".join(text)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        inputs: dict[str, Any] = {
            "input_ids": torch.tensor([ids], dtype=torch.long),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.long),
        }
        if clips:
            inputs["pixel_values_videos"] = torch.from_numpy(np.concatenate([c["patches"] for c in clips]))
            inputs["video_grid_thw"] = torch.tensor([c["grid"] for c in clips], dtype=torch.long)
            inputs["video_second_per_grid"] = torch.tensor([c["second_per_grid"] for c in clips])
        if audios:
            inputs["input_features"] = torch.from_numpy(np.stack([a["input_features"] for a in audios]))
            inputs["feature_attention_mask"] = torch.from_numpy(np.stack([a["feature_mask"] for a in audios]))
        inputs["use_audio_in_video"] = self.settings.use_audio_in_video
        return {"inputs": inputs, "clips": clips, "audios": audios, "prompt": prompt}


def collate_omni_inputs(items: list[dict[str, Any]], pad_id: int) -> dict[str, Any]:
    """Batch-of-one inputs from ``OmniInputBuilder.build`` as one left-padded batch.

    Token rows are left-padded with ``pad_id`` and masked out; the media tensors are concatenated in
    request order (the thinker consumes them in placeholder order across the batch), and the rotary
    index is computed from the attention mask, so padding moves no position.
    """
    import torch

    width = max(int(item["input_ids"].shape[1]) for item in items)
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(items), width), dtype=torch.long)
    for row, item in enumerate(items):
        n = int(item["input_ids"].shape[1])
        ids[row, width - n :] = item["input_ids"][0]
        mask[row, width - n :] = item["attention_mask"][0]
    batch: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
    for key in ("pixel_values_videos", "video_grid_thw", "video_second_per_grid", "input_features",
                "feature_attention_mask"):  # fmt: skip
        parts = [item[key] for item in items if key in item]
        if parts:
            batch[key] = torch.cat(parts)
    batch["use_audio_in_video"] = items[0]["use_audio_in_video"]
    return batch


class QwenOmniBackend(Backend):
    """Qwen2.5-Omni's thinker (text out) in transformers, fed by ``OmniInputBuilder``.

    ``QwenOmniBackend(model_path)`` loads a real checkpoint folder (thinker weights, tokenizer and
    Whisper feature extractor from that folder); tests pass a tiny randomly initialised thinker and a
    tokenizer built offline instead.
    """

    name = "qwen-omni"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
        feature_extractor: Any = None,
        use_audio_in_video: bool = True,
        num_frames: int | None = None,
        fps: float | None = None,
        max_side: int | None = None,
        max_pixels: int | None = None,
        dtype: str | None = None,
        device: str = "cpu",
        batch_size: int = 1,
    ):
        """Load (or take) the thinker.

        num_frames / fps: frames per clip, a count or a rate (rate wins); max_side: cap on the longer
        side before the Qwen resize (0 = none); max_pixels: the Qwen resize's pixel cap; dtype: weight
        dtype. Left unset they follow the device (``pipelines.presets.device_defaults``): on CPU 4
        frames, 448 px, 28*28*64 pixels, float32; on cuda 2 fps, no side cap, 448*448 pixels, bf16.
        batch_size: requests per padded forward batch (greedy requests only).
        """
        from pipelines.presets import device_defaults

        resolved = device_defaults(
            device, num_frames=num_frames, fps=fps, max_side=max_side, max_pixels=max_pixels, dtype=dtype
        )
        self.dtype, self.device = str(resolved["dtype"]), device
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        if model is None:
            if model_path is None:
                raise ValueError("pass model_path (a Qwen2.5-Omni checkpoint folder) or a loaded model")
            import torch
            from transformers import (
                AutoTokenizer,
                Qwen2_5OmniThinkerForConditionalGeneration,
                WhisperFeatureExtractor,
            )

            model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(
                model_path, dtype=getattr(torch, self.dtype)
            )
            tokenizer = tokenizer or AutoTokenizer.from_pretrained(model_path)
            feature_extractor = feature_extractor or WhisperFeatureExtractor.from_pretrained(model_path)
        if tokenizer is None or feature_extractor is None:
            raise ValueError("a preloaded model needs its tokenizer and feature_extractor too")
        self.model = model.to(device).eval()
        self.model_path = str(model_path) if model_path else f"in-memory:{type(model).__name__}"
        self.settings_obj = OmniSettings(
            sampling=FrameSampling(
                num_frames=resolved["num_frames"], fps=resolved["fps"], max_side=resolved["max_side"]
            ),
            use_audio_in_video=use_audio_in_video,
            max_pixels=int(resolved["max_pixels"]),
        )
        self.builder = OmniInputBuilder(tokenizer, model.config, feature_extractor, self.settings_obj)
        self.tokenizer = tokenizer

    def preferred_batch_size(self, pending: int) -> int:
        """Requests the evaluation runner should hand over per call."""
        return self.batch_size

    @property
    def model_id(self) -> str:
        return self.model_path

    @property
    def settings(self) -> dict[str, object]:
        s = self.settings_obj
        return {
            "backend": self.name,
            "model": self.model_id,
            "use_audio_in_video": s.use_audio_in_video,
            "num_frames": s.sampling.num_frames,
            "fps": s.sampling.fps,
            "max_side": s.sampling.max_side,
            "min_pixels": s.min_pixels,
            "max_pixels": s.max_pixels,
            "dtype": self.dtype,
            "device": self.device,
        }

    @property
    def runtime(self) -> dict[str, object]:
        """How the thinker runs here, read from the loaded model (run config only, never a cache key):
        the device and dtype its weights are in, the greedy batch size and torch's CPU threads.
        ``settings`` keeps the requested device and dtype (they choose the frame and pixel defaults
        and the cast, and old cache keys hold them); these are the ones really used."""
        import torch

        from pipelines.backends.hf_transformers import live_weights

        return {
            **live_weights(self.model),
            "batch_size": self.batch_size,
            "torch_threads": torch.get_num_threads(),
        }

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """Greedy requests in padded batches of ``batch_size``; sampled ones one at a time."""
        out: list[Completion | None] = [None] * len(requests)
        greedy = [i for i, r in enumerate(requests) if r.temperature <= 0]
        for i, request in enumerate(requests):
            if request.temperature > 0 or self.batch_size == 1:
                out[i] = self._one(request)
        if self.batch_size > 1:
            for start in range(0, len(greedy), self.batch_size):
                chunk = greedy[start : start + self.batch_size]
                for i, completion in zip(chunk, self._batch([requests[i] for i in chunk]), strict=True):
                    out[i] = completion
        return [c for c in out if c is not None]

    def _batch(self, requests: list[ChatRequest]) -> list[Completion]:
        """One padded forward batch; a request that cannot be built fails alone, and a batch that
        fails as a whole is retried one request at a time."""
        import torch

        start = time.perf_counter()
        built: list[dict[str, Any] | None] = []
        failed: dict[int, Completion] = {}
        for i, request in enumerate(requests):
            try:
                built.append(self.builder.build(request))
            except Exception as exc:  # one unreadable clip fails its request only
                built.append(None)
                failed[i] = Completion(error=f"{type(exc).__name__}: {exc}", finish_reason="error")
        good = [(i, b) for i, b in enumerate(built) if b is not None]
        if not good:
            return [failed[i] for i in range(len(requests))]
        try:
            inputs = collate_omni_inputs([b["inputs"] for _, b in good], self._pad_id())
            budget = max(requests[i].max_tokens for i, _ in good)
            with torch.inference_mode():
                output = self.model.generate(
                    **self._to_device(inputs), max_new_tokens=budget, do_sample=False
                )
        except Exception:
            return [failed.get(i) or self._one(r) for i, r in enumerate(requests)]
        width = inputs["input_ids"].shape[1]
        share = (time.perf_counter() - start) / len(requests)
        results = dict(failed)
        eos = self._eos_ids()
        for row, (i, b) in enumerate(good):
            new = output[row, width:].tolist()[: requests[i].max_tokens]
            cut = next((n + 1 for n, tok in enumerate(new) if tok in eos), len(new))
            new = new[:cut]
            results[i] = Completion(
                text=self.tokenizer.decode(new, skip_special_tokens=True),
                prompt_tokens=int(b["inputs"]["input_ids"].shape[1]),
                completion_tokens=len(new),
                latency_s=share,
                finish_reason="stop" if cut < len(output[row, width:]) or (new and new[-1] in eos) else "length",
                meta={"clips": len(b["clips"]), "use_audio_in_video": self.settings_obj.use_audio_in_video,
                      "batch": len(good)},
            )  # fmt: skip
        return [results[i] for i in range(len(requests))]

    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self._eos_ids()[0])

    def _eos_ids(self) -> list[int]:
        config = getattr(self.model, "generation_config", None)
        eos = getattr(config, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        ids = eos if isinstance(eos, list) else [eos]
        return [int(i) for i in ids if i is not None]

    def _to_device(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Tensors on the model's device; float features in the model's dtype."""
        import torch

        dtype = getattr(torch, self.dtype)
        moved: dict[str, Any] = {}
        for key, value in inputs.items():
            if isinstance(value, torch.Tensor):
                value = value.to(self.device)
                if value.is_floating_point() and key in ("pixel_values_videos", "input_features"):
                    value = value.to(dtype)
            moved[key] = value
        return moved

    def _one(self, request: ChatRequest) -> Completion:
        import torch

        start = time.perf_counter()
        try:
            built = self.builder.build(request)
            inputs = built["inputs"]
            with torch.inference_mode():
                output = self.model.generate(
                    **self._to_device(inputs),
                    max_new_tokens=request.max_tokens,
                    do_sample=request.temperature > 0,
                    **({"temperature": request.temperature} if request.temperature > 0 else {}),
                )
            new = output[0, inputs["input_ids"].shape[1] :]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
        except Exception as exc:  # never raise per request: record it
            return Completion(
                error=f"{type(exc).__name__}: {exc}",
                latency_s=time.perf_counter() - start,
                finish_reason="error",
            )
        return Completion(
            text=text,
            prompt_tokens=int(inputs["input_ids"].shape[1]),
            completion_tokens=len(new),
            latency_s=time.perf_counter() - start,
            finish_reason="length" if len(new) >= request.max_tokens else "stop",
            meta={"clips": len(built["clips"]), "use_audio_in_video": self.settings_obj.use_audio_in_video},
        )
