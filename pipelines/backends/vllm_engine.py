"""vLLM in-process: ``vllm.LLM(...).chat`` over a whole batch, with structured choice decoding.

For GPU machines: vLLM is an optional extra (``pip install 'karma-mv[vllm]'``); it imports on a CPU
machine but cannot start an engine there. The import happens only when this backend is built.

A batch goes to vLLM in one ``chat`` call (vLLM schedules it with continuous batching). If that call
fails, the requests are retried one by one so that one bad request (say, a missing video file) fails
alone. Choices use ``StructuredOutputsParams(choice=...)`` (vLLM >= 0.12) or, on older versions,
``GuidedDecodingParams(choice=...)``.

Two ways in (``input_mode``):

* ``chat`` (default, any VLM): media parts go in OpenAI form (``video_url``, ``audio_url``) to
  ``LLM.chat``; vLLM decodes and samples the clips itself (32 frames per video unless
  ``media_io_kwargs`` says otherwise). For ``file://`` URLs start the engine with
  ``allowed_local_media_path``. With ``chat_kwargs={"mm_processor_kwargs": {"use_audio_in_video":
  True}}`` the paired audio parts are left out (vLLM takes the audio out of each video part).
* ``omni`` (Qwen2.5-Omni): karma builds the prompt and ``multi_modal_data`` itself
  (``omni_prompt``): each clip's frames sampled by karma's own ``FrameSampling`` (the same frames the
  transformers ``qwen-omni`` backend sees) and each clip's audio waveform at 16 kHz, in the layout of
  vLLM's Qwen2.5-Omni example; ``LLM.generate`` runs them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from pipelines.backends._common import constrained_budget, error_completion, openai_message
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.backends.media_parts import audio_in_video_message, media_items, use_audio_in_video

OMNI_BATCH = 256
"""Largest ``omni``-mode batch: decoded frames of 256 two-clip requests at 448 px are about 2 GiB."""


def _read(config: Any, *path: str) -> object:
    """``config.a.b`` as a JSON-friendly value (torch dtypes and devices as text), None when absent."""
    value = config
    for name in path:
        value = getattr(value, name, None)
        if value is None:
            return None
    if isinstance(value, bool | int | float | str):
        return value
    return str(value).removeprefix("torch.")


class VllmBackend(Backend):
    """A model served by an in-process vLLM engine."""

    name = "vllm"
    batches_in_one_call = True

    def __init__(
        self,
        model: str,
        engine: Any | None = None,
        sampling_params_factory: Callable[[dict[str, Any]], Any] | None = None,
        chat_kwargs: dict[str, Any] | None = None,
        input_mode: Literal["chat", "omni"] = "chat",
        num_frames: int | None = None,
        fps: float | None = None,
        max_side: int | None = None,
        **engine_kwargs: Any,
    ):
        """Start the engine.

        model: a hub id or a local model folder (vLLM loads it).
        engine: an already built ``vllm.LLM`` (or anything with its ``chat`` method) to reuse.
        sampling_params_factory: turns this backend's sampling settings into vLLM's SamplingParams;
            default: vLLM's own classes. With ``engine`` it lets the batch logic run without vLLM.
        chat_kwargs: passed to every ``LLM.chat`` call (e.g. ``mm_processor_kwargs``,
            ``chat_template_kwargs``).
        input_mode: ``chat`` (vLLM reads the media) or ``omni`` (karma's frames and audio, see the
            module doc).
        num_frames, fps, max_side: frame sampling of the ``omni`` mode (default: the ``qwen-omni``
            backend's, 4 frames at most 448 px; ``--preset paper``: 4 fps).
        engine_kwargs: passed to ``vllm.LLM`` (``max_model_len``, ``limit_mm_per_prompt``,
            ``allowed_local_media_path``, ``gpu_memory_utilization``, ``seed`` ...);
            ``enable_prefix_caching`` defaults to True and is recorded in ``settings``.
        """
        self.model = model
        # Prefix caching (vLLM's V1 default, made explicit so the run's settings record it): the three
        # questions of a transition and the graph-off arm share long prompt prefixes.
        engine_kwargs.setdefault("enable_prefix_caching", True)
        self.engine_kwargs = engine_kwargs
        self.chat_kwargs = dict(chat_kwargs or {})
        if input_mode not in ("chat", "omni"):
            raise ValueError(f"input_mode must be chat or omni, got {input_mode!r}")
        self.input_mode = input_mode
        from pipelines.media import FrameSampling

        self.sampling = FrameSampling(
            num_frames=num_frames if num_frames is not None or fps is not None else 4,
            fps=fps,
            max_side=(max_side or None) if max_side is not None else 448,  # 0: no cap
        )
        if engine is None:
            vllm = _import_vllm()
            engine = vllm.LLM(model=model, **engine_kwargs)
        self._engine = engine
        self._make_params = sampling_params_factory or vllm_sampling_params

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def settings(self) -> dict[str, object]:
        return {
            "backend": self.name,
            "model": self.model_id,
            "engine": {k: v for k, v in sorted(self.engine_kwargs.items()) if k != "gpu_memory_utilization"},
            "chat": self.chat_kwargs,
            **(
                {"input_mode": "omni", "num_frames": self.sampling.num_frames, "fps": self.sampling.fps,
                 "max_side": self.sampling.max_side}
                if self.input_mode == "omni" else {}
            ),
        }  # fmt: skip

    @property
    def runtime(self) -> dict[str, object]:
        """How the engine runs the model, read from the live engine (``LLM.llm_engine.vllm_config``;
        run config only, never a cache key): device, dtype, the most sequences it schedules at once
        (``max_num_seqs``, vLLM's batch size) and the tensor-parallel size; what an engine does not
        report (an older vLLM, a test double) is left out. ``batch_cap``: the requests karma hands over
        per call at most (None: every pending one)."""
        config = getattr(getattr(self._engine, "llm_engine", None), "vllm_config", None)
        read = {
            "device": _read(config, "device_config", "device"),
            "dtype": _read(config, "model_config", "dtype"),
            "max_num_seqs": _read(config, "scheduler_config", "max_num_seqs"),
            "tensor_parallel_size": _read(config, "parallel_config", "tensor_parallel_size"),
        }
        out: dict[str, object] = {k: v for k, v in read.items() if v is not None}
        out["batch_cap"] = OMNI_BATCH if self.input_mode == "omni" else None
        return out

    def preferred_batch_size(self, pending: int) -> int:
        """Requests per ``chat``/``generate`` call: every pending request of the run (or shard), so
        vLLM's scheduler keeps the GPU full. In ``omni`` mode karma holds each request's decoded
        frames in memory, so at most ``OMNI_BATCH`` at a time."""
        cap = OMNI_BATCH if self.input_mode == "omni" else pending
        return max(1, min(pending, cap))

    def conversation(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The ``LLM.chat`` messages of one request (``chat`` mode)."""
        messages = [openai_message(m) for m in request.messages]
        if use_audio_in_video(self.chat_kwargs):
            messages = [audio_in_video_message(m, o) for m, o in zip(request.messages, messages, strict=True)]
        return messages

    def omni_input(self, request: ChatRequest) -> dict[str, Any]:
        """The ``LLM.generate`` prompt of one request (``omni`` mode)."""
        return omni_prompt(request, self.sampling, use_audio_in_video(self.chat_kwargs))

    def _run(self, requests: list[ChatRequest]) -> list[Any]:
        params = [self._make_params(sampling_settings(r)) for r in requests]
        if self.input_mode == "omni":
            return self._engine.generate([self.omni_input(r) for r in requests], params, use_tqdm=False)
        conversations = [self.conversation(r) for r in requests]
        return self._engine.chat(conversations, params, use_tqdm=False, **self.chat_kwargs)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        if not requests:
            return []
        start = time.perf_counter()
        try:
            outputs = self._run(requests)
        except Exception:
            if len(requests) == 1:
                return [self._alone(requests[0])]
            return [self._alone(r) for r in requests]  # isolate the request that broke the batch
        share = (time.perf_counter() - start) / len(requests)
        return [_completion(out, share, r) for out, r in zip(outputs, requests, strict=True)]

    def _alone(self, request: ChatRequest) -> Completion:
        start = time.perf_counter()
        try:
            (out,) = self._run([request])
        except Exception as exc:
            return error_completion(exc, time.perf_counter() - start)
        return _completion(out, time.perf_counter() - start, request)

    # -- option scoring (answer modes letter / loglik; see pipelines.loglik) ------------------------
    def score_prompts(self, requests, continuations):  # type: ignore[no-untyped-def]
        """The vLLM inputs that score every continuation: ``{"prompt_token_ids": context +
        continuation}`` per (request, option), the context's length in tokens, and the sampling
        settings (one generated token, ``prompt_logprobs=1``: vLLM returns each prompt token's own
        log-probability, plus the top one so the rank tells whether it was the greedy pick)."""
        from pipelines.loglik import split_pair

        tokenizer = self._engine.get_tokenizer()
        prompts, spans = [], []
        for request, options in zip(requests, continuations, strict=True):
            text = tokenizer.apply_chat_template(
                [openai_message(m) for m in request.messages], add_generation_prompt=True, tokenize=False
            )
            for option in options:
                context, continuation = split_pair(
                    lambda t: tokenizer(t, add_special_tokens=False)["input_ids"], text, option
                )
                prompts.append({"prompt_token_ids": context + continuation})
                spans.append((len(context), len(context) + len(continuation), len(option)))
        settings = {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}
        return prompts, spans, settings

    def score_continuations(self, requests, continuations):  # type: ignore[no-untyped-def]
        """All (request, option) pairs in one ``LLM.generate`` call; a continuation's score is the sum
        of its tokens' prompt log-probabilities."""
        from pipelines.loglik import ContinuationScore

        prompts, spans, settings = self.score_prompts(requests, continuations)
        params = self._make_params(settings)
        outputs = self._engine.generate(prompts, [params] * len(prompts), use_tqdm=False)
        flat: list[ContinuationScore] = []
        for prompt, out, (start, end, chars) in zip(prompts, outputs, spans, strict=True):
            ids = prompt["prompt_token_ids"]
            total, greedy = 0.0, True
            for position in range(start, end):
                entry = out.prompt_logprobs[position][ids[position]]
                total += float(entry.logprob)
                greedy = greedy and getattr(entry, "rank", 1) == 1
            flat.append(ContinuationScore(logprob=total, tokens=end - start, chars=chars, greedy=greedy))
        grouped, at = [], 0
        for options in continuations:
            grouped.append(flat[at : at + len(options)])
            at += len(options)
        return grouped

    def close(self) -> None:
        self._engine = None


def omni_prompt(request: ChatRequest, sampling: Any, audio_in_video: bool) -> dict[str, Any]:
    """A Qwen2.5-Omni request as vLLM's ``{"prompt", "multi_modal_data", "mm_processor_kwargs"}``.

    Each clip is ``<|vision_bos|><|VIDEO|><|vision_eos|>`` with its frames (T, H, W, 3 uint8, sampled
    by karma) and, as metadata, the sampled frames' rate. Audio at 16 kHz: with ``audio_in_video``
    one waveform per clip, in clip order, and vLLM interleaves it into the clip's placeholder (every
    clip needs audio then); otherwise each clip's audio part becomes its own
    ``<|audio_bos|><|AUDIO|><|audio_eos|>`` item after the clip, and a clip without one is not heard.
    """
    from pipelines.backends.omni import AUDIO_RATE, SPECIAL_TOKENS, clip_path_from_url, load_audio_16k
    from pipelines.media import sample_frames

    tok = SPECIAL_TOKENS
    videos: list[Any] = []
    audios: list[tuple[Any, int]] = []
    text: list[str] = []
    for message in request.messages:
        text.append(f"{tok['im_start']}{message.role}\n")
        for kind, value, audio in media_items(message.content):
            if kind == "text":
                text.append(value or "")
                continue
            if kind == "video":
                frames = sample_frames(clip_path_from_url(value or ""), sampling)
                meta = {
                    "fps": frames.sample_fps,
                    "frames_indices": frames.indices.tolist(),
                    "total_num_frames": len(frames.indices),
                    "video_backend": "karma",
                }
                videos.append((frames.frames, meta))
                text.append(tok["vision_bos"] + tok["video"] + tok["vision_eos"])
                if audio_in_video:
                    source = clip_path_from_url(audio) if audio else clip_path_from_url(value or "")
                    wave = load_audio_16k(source)
                    if wave.size == 0:
                        raise ValueError(
                            f"use_audio_in_video: {source} has no audio track "
                            "(use predictive_audio=silence, or turn use_audio_in_video off)"
                        )
                    audios.append((wave, AUDIO_RATE))
                    continue
            if audio:  # a clip's audio as its own item, or a standalone audio part
                audios.append((load_audio_16k(clip_path_from_url(audio)), AUDIO_RATE))
                text.append(tok["audio_bos"] + tok["audio"] + tok["audio_eos"])
        text.append(f"{tok['im_end']}\n")
    text.append(f"{tok['im_start']}assistant\n")
    data: dict[str, Any] = {}
    if videos:
        data["video"] = videos
    if audios:
        data["audio"] = audios
    return {
        "prompt": "".join(text),
        "multi_modal_data": data,
        "mm_processor_kwargs": {"use_audio_in_video": bool(audio_in_video and videos)},
    }


def sampling_settings(request: ChatRequest) -> dict[str, Any]:
    """vLLM sampling settings for one request, as plain data (``choice`` marks constrained choice)."""
    settings: dict[str, Any] = {
        "max_tokens": request.max_tokens,
        "temperature": max(0.0, request.temperature),
        "seed": request.seed,
    }
    if request.choices:
        settings["choice"] = list(request.choices)
        settings["max_tokens"] = constrained_budget(request)
    return settings


def vllm_sampling_params(settings: dict[str, Any]) -> Any:
    """Build ``vllm.SamplingParams`` from ``sampling_settings`` output, for old and new vLLM."""
    _import_vllm()
    from vllm import SamplingParams

    settings = dict(settings)
    choice = settings.pop("choice", None)
    if choice is None:
        return SamplingParams(**settings)
    try:  # vLLM >= 0.12
        from vllm.sampling_params import StructuredOutputsParams

        return SamplingParams(**settings, structured_outputs=StructuredOutputsParams(choice=choice))
    except ImportError:
        from vllm.sampling_params import GuidedDecodingParams

        return SamplingParams(**settings, guided_decoding=GuidedDecodingParams(choice=choice))


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise ImportError(
            "the vllm backend needs vLLM on a GPU machine: `pip install 'karma-mv[vllm]'`; "
            "on CPU use the llamacpp, transformers or openai backend"
        ) from exc
    return vllm


def _completion(output: Any, latency_s: float, request: ChatRequest) -> Completion:
    first = output.outputs[0]
    prompt_ids = getattr(output, "prompt_token_ids", None)
    token_ids = getattr(first, "token_ids", None)
    return Completion(
        text=first.text,
        prompt_tokens=len(prompt_ids) if prompt_ids is not None else None,
        completion_tokens=len(token_ids) if token_ids is not None else None,
        latency_s=latency_s,
        finish_reason=getattr(first, "finish_reason", None),
        meta={"constrained": bool(request.choices)},
    )
