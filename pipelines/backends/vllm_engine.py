"""vLLM in-process: ``vllm.LLM(...).chat`` over a whole batch, with structured choice decoding.

For GPU machines: vLLM is an optional extra (``pip install 'karma-mv[vllm]'``); it imports on a CPU
machine but cannot start an engine there. The import happens only when this backend is built.

A batch goes to vLLM in one ``chat`` call (vLLM schedules it with continuous batching). If that call
fails, the requests are retried one by one so that one bad request (say, a missing video file) fails
alone. Choices use ``StructuredOutputsParams(choice=...)`` (vLLM >= 0.12) or, on older versions,
``GuidedDecodingParams(choice=...)``. Media parts go in OpenAI form (``video_url`` etc.); for
``file://`` URLs start the engine with ``allowed_local_media_path``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pipelines.backends._common import constrained_budget, error_completion, openai_message
from pipelines.backends.base import Backend, ChatRequest, Completion


class VllmBackend(Backend):
    """A model served by an in-process vLLM engine."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        engine: Any | None = None,
        sampling_params_factory: Callable[[dict[str, Any]], Any] | None = None,
        chat_kwargs: dict[str, Any] | None = None,
        **engine_kwargs: Any,
    ):
        """Start the engine.

        model: a hub id or a local model folder (vLLM loads it).
        engine: an already built ``vllm.LLM`` (or anything with its ``chat`` method) to reuse.
        sampling_params_factory: turns this backend's sampling settings into vLLM's SamplingParams;
            default: vLLM's own classes. With ``engine`` it lets the batch logic run without vLLM.
        chat_kwargs: passed to every ``LLM.chat`` call (e.g. ``mm_processor_kwargs``,
            ``chat_template_kwargs``).
        engine_kwargs: passed to ``vllm.LLM`` (``max_model_len``, ``limit_mm_per_prompt``,
            ``allowed_local_media_path``, ``gpu_memory_utilization``, ``seed`` ...).
        """
        self.model = model
        self.engine_kwargs = engine_kwargs
        self.chat_kwargs = dict(chat_kwargs or {})
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
        }

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        if not requests:
            return []
        start = time.perf_counter()
        try:
            conversations = [[openai_message(m) for m in r.messages] for r in requests]
            params = [self._make_params(sampling_settings(r)) for r in requests]
            outputs = self._engine.chat(conversations, params, use_tqdm=False, **self.chat_kwargs)
        except Exception:
            if len(requests) == 1:
                return [self._alone(requests[0])]
            return [self._alone(r) for r in requests]  # isolate the request that broke the batch
        share = (time.perf_counter() - start) / len(requests)
        return [_completion(out, share, r) for out, r in zip(outputs, requests, strict=True)]

    def _alone(self, request: ChatRequest) -> Completion:
        start = time.perf_counter()
        try:
            conversation = [openai_message(m) for m in request.messages]
            params = self._make_params(sampling_settings(request))
            (out,) = self._engine.chat([conversation], [params], use_tqdm=False, **self.chat_kwargs)
        except Exception as exc:
            return error_completion(exc, time.perf_counter() - start)
        return _completion(out, time.perf_counter() - start, request)

    def close(self) -> None:
        self._engine = None


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
