"""Any OpenAI-compatible chat server: vLLM serve, llama.cpp's servers, hosted APIs.

Requests run concurrently on a thread pool (``max_concurrency``). Each request has a timeout and is
retried with exponential backoff on connection errors, timeouts, 408/429 and 5xx answers; after the
last attempt the error is recorded on its Completion (the batch never raises). Media parts are passed
through as OpenAI content parts (``video_url``, ``image_url``, ``audio_url`` with ``{"url": ...}``),
the form vLLM's multimodal chat endpoint reads. The VLM pipeline puts each clip's audio in an
``audio_url`` part right after its ``video_url`` part; with ``extra_body={"mm_processor_kwargs":
{"use_audio_in_video": true}}`` those audio parts are left out, because vLLM then takes the audio out
of each video part itself (see ``pipelines.backends.media_parts``).

Constrained choice (``ChatRequest.choices``) depends on what the server understands, set by
``choice_mode``:

* ``structured_outputs`` — vLLM >= 0.12: ``{"structured_outputs": {"choice": [...]}}``;
* ``guided_choice`` — older vLLM: ``{"guided_choice": [...]}``;
* ``grammar`` — llama.cpp servers: a GBNF grammar admitting exactly the choices;
* ``prompt`` — nothing is sent; the prompt alone must ask for the format;
* ``auto`` (default) — picked from the server's ``/v1/models`` answer: ``owned_by`` ``vllm`` ->
  structured_outputs, llama.cpp (``llamacpp``, or llama-cpp-python's ``me``) -> grammar, else prompt.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import httpx

from karma.core.errors import InputError, RunError
from pipelines.backends._common import (
    constrained_budget,
    error_completion,
    gbnf_choice_grammar,
    openai_message,
)
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.backends.media_parts import audio_in_video_message, use_audio_in_video

ChoiceMode = Literal["auto", "structured_outputs", "guided_choice", "grammar", "prompt"]
CHOICE_MODES: tuple[str, ...] = ("auto", "structured_outputs", "guided_choice", "grammar", "prompt")
ModelCheck = Literal["error", "warn", "off"]
MODEL_CHECKS: tuple[str, ...] = ("error", "warn", "off")


class ModelMismatchError(InputError):
    """The model asked for is not among the models the server lists at ``/v1/models``."""


# Answers worth another try: the server is overloaded, restarting or timed out on its side.
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIBackend(Backend):
    """A chat model behind an OpenAI-compatible HTTP API."""

    name = "openai"

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000/v1",
        model: str | None = None,
        api_key: str | None = None,
        max_concurrency: int = 4,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        backoff_max_s: float = 20.0,
        choice_mode: ChoiceMode = "auto",
        extra_body: dict[str, Any] | None = None,
        model_check: ModelCheck = "error",
        score_template: str | None = None,
    ):
        """Configure the client; nothing is sent until the first request.

        base_url: the API root, ending in ``/v1``.
        model: the served model name; default: the first model the server lists.
        api_key: sent as a Bearer token when given.
        max_concurrency: requests in flight at once.
        timeout_s: seconds to wait for the connection and for each read of the answer.
        max_retries: extra attempts after the first one for retryable failures.
        backoff_s, backoff_max_s: wait before retry n is ``backoff_s * 2**n``, capped.
        choice_mode: how ``choices`` reach the server (see the module doc).
        extra_body: merged into every request body (e.g. ``{"mm_processor_kwargs": {...}}``).
        model_check: a ``model`` the server's ``/v1/models`` does not list is an ``error`` (default),
            or a ``warn``ing after which the served model's id is used and recorded (``requested_model``
            keeps the given name), or ``off`` (hosted APIs that list only some models).
        score_template: for the scored answer modes: the served model's .gguf (its chat template) or a
            Jinja chat template file, to render prompts for ``/v1/completions``.
        """
        if choice_mode not in CHOICE_MODES:
            raise ValueError(f"choice_mode must be one of {CHOICE_MODES}, got {choice_mode!r}")
        if model_check not in MODEL_CHECKS:
            raise ValueError(f"model_check must be one of {MODEL_CHECKS}, got {model_check!r}")
        self.model_check = model_check
        self.requested_model: str | None = None
        self._model_checked = model is None or model_check == "off"
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        _check_url(base_url)
        for option, value in (
            ("timeout_s", timeout_s),
            ("backoff_s", backoff_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if not value >= 0 or (option == "timeout_s" and value == 0):
                bound = "above 0" if option == "timeout_s" else "0 or more"
                raise ValueError(
                    f"option {option} of the openai backend must be {bound} seconds, got {value!r}"
                )
        if score_template is not None and not Path(score_template).is_file():
            raise ValueError(f"option score_template of the openai backend: {score_template}: no such file")
        self.base_url = base_url.rstrip("/")
        self._model = model
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._choice_mode: str = choice_mode
        self.extra_body = dict(extra_body or {})
        self.score_template = score_template
        self._render: Any = None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
        )
        self._discover_lock = threading.Lock()
        self._owned_by: str | None = None

    # -- identity -------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        self._discover()
        return str(self._model)

    @property
    def choice_mode(self) -> str:
        """The resolved choice mode (``auto`` asks the server once)."""
        self._discover()
        return self._choice_mode

    @property
    def settings(self) -> dict[str, object]:
        return {
            "backend": self.name,
            "model": self.model_id,
            "choice_mode": self.choice_mode,
            "extra_body": self.extra_body,
            **({"requested_model": self.requested_model} if self.requested_model else {}),
        }

    def _discover(self) -> None:
        """Fill in the model name and the choice mode from ``/v1/models`` when they are not given."""
        if self._model is not None and self._choice_mode != "auto" and self._model_checked:
            return
        with self._discover_lock:
            if self._model is not None and self._choice_mode != "auto" and self._model_checked:
                return
            models = self._list_models()
            if models is None:
                return  # unreachable for now: keep "auto" (no constraint sent) and ask again next batch
            if self._model is None:
                if not models:
                    raise RuntimeError(f"{self.base_url}/models lists no model; pass model=...")
                self._model = str(models[0]["id"])
            elif not self._model_checked:
                self._check_model([str(m["id"]) for m in models])
            self._model_checked = True
            entry = next((m for m in models if m.get("id") == self._model), models[0] if models else {})
            self._owned_by = str(entry.get("owned_by", ""))
            if self._choice_mode == "auto":
                self._choice_mode = _choice_mode_for(self._owned_by)

    def _check_model(self, served: list[str]) -> None:
        """Compare the given model with the served ones (see ``model_check``)."""
        if not served or self._model in served:
            return
        listed = ", ".join(repr(s) for s in served[:5])
        message = f"model {self._model!r} is not served by {self.base_url} (its /models lists {listed})"
        if self.model_check == "error":
            raise ModelMismatchError(
                f"{message}; pass model=<a listed id>, or model_check=warn to run with the served model"
            )
        self.requested_model, self._model = self._model, served[0]
        print(f"warning: {message}; using and recording {served[0]!r}", file=sys.stderr)

    def _list_models(self) -> list[dict[str, Any]] | None:
        try:
            response = self._client.get(f"{self.base_url}/models")
            response.raise_for_status()
            data = response.json().get("data", [])
        except (httpx.HTTPError, ValueError) as exc:
            if self._model is not None:
                return None  # the model is known; the requests will report the server's state
            raise RunError(f"cannot list models at {self.base_url}/models: {exc}") from exc
        return [m for m in data if isinstance(m, dict) and "id" in m]

    # -- generation -----------------------------------------------------------------------------
    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        if not requests:
            return []
        try:
            self._discover()
        except Exception as exc:  # the server is unreachable: every request fails, none raises
            return [error_completion(exc) for _ in requests]
        if len(requests) == 1 or self.max_concurrency == 1:
            return [self._one_safe(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(requests))) as pool:
            return list(pool.map(self._one_safe, requests))

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for one request (public so that prompts can be logged and inspected)."""
        messages = [openai_message(m) for m in request.messages]
        if use_audio_in_video(self.extra_body):
            messages = [audio_in_video_message(m, o) for m, o in zip(request.messages, messages, strict=True)]
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
            "stream": False,
        }
        if request.temperature <= 0:
            body["top_p"] = 1.0
        body.update(self.extra_body)
        if request.choices:
            mode = self._choice_mode
            if mode == "structured_outputs":
                body["structured_outputs"] = {"choice": list(request.choices)}
            elif mode == "guided_choice":
                body["guided_choice"] = list(request.choices)
            elif mode == "grammar":
                body["grammar"] = gbnf_choice_grammar(request.choices)
            if mode not in ("prompt", "auto"):
                body["max_tokens"] = constrained_budget(request)
        return body

    def _one_safe(self, request: ChatRequest) -> Completion:
        start = time.perf_counter()
        try:
            return self._one(request, start)
        except Exception as exc:  # anything unforeseen fails this request only, never the batch
            return error_completion(exc, time.perf_counter() - start)

    def _one(self, request: ChatRequest, start: float) -> Completion:
        try:
            body = self.request_body(request)
        except ValueError as exc:
            return error_completion(exc, attempts=0)
        response, errors = self._post("chat/completions", body)
        if response is not None:
            return self._completion(response, start, len(errors) + 1, errors, bool(request.choices))
        return error_completion(errors[-1], time.perf_counter() - start, attempts=len(errors), errors=errors)

    def _post(self, path: str, body: dict[str, Any]) -> tuple[httpx.Response | None, list[str]]:
        """POST with retries: the successful response (None after the last failed attempt) and the
        errors of the failed attempts."""
        errors: list[str] = []
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                response = self._client.post(f"{self.base_url}/{path}", json=body)
            except httpx.TimeoutException as exc:
                errors.append(f"timeout after {self.timeout_s:g}s ({type(exc).__name__})")
            except httpx.HTTPError as exc:  # refused, reset, protocol errors: worth another try
                errors.append(f"connection error: {type(exc).__name__}: {exc}")
            else:
                if response.status_code < 400:
                    return response, errors
                errors.append(f"HTTP {response.status_code}: {response.text[:300]}")
                if response.status_code not in RETRY_STATUS:
                    break  # a bad request stays bad: do not hammer the server
                retry_after = _retry_after(response)
            if attempt < self.max_retries:
                delay = min(self.backoff_max_s, self.backoff_s * 2**attempt)
                time.sleep(max(delay, min(retry_after or 0.0, self.backoff_max_s)))
        return None, errors

    # -- option scoring (answer modes letter / loglik; see pipelines.loglik) ------------------------
    def check_scoring(self) -> None:
        """Refuse, before a run's first request, a server that cannot score options: one probe of
        ``/v1/completions`` with ``echo`` and ``logprobs`` (InputError, exit 2, when the answer holds
        no log-probabilities; RunError, exit 1, when the server cannot be reached)."""
        if not self.score_template:
            self._chat_renderer()  # the same one-line error as per request, now, before anything is sent
        body = {"model": self.model_id, "prompt": "Hello", "max_tokens": 1, "temperature": 0.0,
                "echo": True, "logprobs": 1}  # fmt: skip
        response, errors = self._post("completions", body)
        if response is None:
            if errors and errors[-1].startswith("HTTP 4"):
                raise InputError(
                    f"{self.base_url}/completions refused a scoring request ({errors[-1][:200]}); the "
                    "scored answer modes need a server that returns logprobs: use --answer-mode generate"
                )
            raise RunError(f"cannot reach {self.base_url}/completions to check scoring: {errors[-1]}")
        try:
            logprobs = response.json()["choices"][0]["logprobs"]
            ok = bool(logprobs) and logprobs.get("token_logprobs") is not None
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            ok = False
        if not ok:
            raise InputError(
                f"{self.base_url} returns no logprobs for /completions with echo (probed once before the run); "
                "the scored answer modes (loglik, letter) need them: use --answer-mode generate, or a "
                "server that returns prompt logprobs (vLLM serve, llama-cpp-python's server)"
            )
        self._chat_renderer()  # the template loads (a bad one fails now, not once per request)

    def score_continuations(self, requests, continuations):  # type: ignore[no-untyped-def]
        """Each option scored through the legacy ``/v1/completions`` endpoint with ``echo`` and
        ``logprobs`` (what lm-evaluation-harness's completions API models send): the server returns the
        log-probability of every prompt token, and the option's score is the sum over the tokens that
        start at or after the end of the chat prompt. The chat prompt is rendered here with the chat
        template given as ``score_template`` (a .gguf file's own template or a Jinja file), because
        the completions endpoint takes text, not messages."""
        from pipelines.loglik import ContinuationScore

        render = self._chat_renderer()
        pool = ThreadPoolExecutor(max_workers=self.max_concurrency)
        try:
            jobs = [
                [pool.submit(self._score_text, render(request), option) for option in options]
                for request, options in zip(requests, continuations, strict=True)
            ]
            out: list[list[ContinuationScore]] = [[job.result() for job in row] for row in jobs]
        finally:
            pool.shutdown(wait=True)
        return out

    def _score_text(self, context: str, option: str) -> Any:
        from pipelines.loglik import ContinuationScore

        body = {
            "model": self.model_id,
            "prompt": context + option,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        response, errors = self._post("completions", body)
        if response is None:
            raise RuntimeError(f"scoring request failed: {errors[-1]}")
        logprobs = response.json()["choices"][0]["logprobs"]
        end = len(context) + len(option)
        total, count, greedy = 0.0, 0, True
        rows = zip(
            logprobs["text_offset"],
            logprobs["token_logprobs"],
            logprobs.get("top_logprobs") or [],
            strict=False,
        )
        for offset, value, top in rows:
            if offset < len(context) or offset >= end:
                continue  # the prompt's tokens, or the one generated after the option
            if value is None:
                raise RuntimeError("the server returned no log-probability for an option token")
            total += float(value)
            count += 1
            greedy = greedy and (not top or value >= max(top.values()) - 1e-6)
        if count == 0:
            raise RuntimeError("the server's echo did not cover the option (no token after the prompt)")
        return ContinuationScore(logprob=total, tokens=count, chars=len(option), greedy=greedy)

    def _chat_renderer(self):  # type: ignore[no-untyped-def]
        if self._render is None:
            if not self.score_template:
                raise ValueError(
                    "scoring options over an OpenAI server needs score_template=PATH (the model's .gguf "
                    "or a Jinja chat template file): the completions endpoint takes text, not messages"
                )
            from pipelines.backends.chat_template import chat_renderer

            self._render = chat_renderer(self.score_template)
        return self._render

    def _completion(
        self, response: httpx.Response, start: float, attempts: int, errors: list[str], constrained: bool
    ) -> Completion:
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return error_completion(
                f"malformed answer from server: {type(exc).__name__}: {exc}; body: {response.text[:300]}",
                time.perf_counter() - start,
                attempts=attempts,
                errors=errors,
            )
        usage = data.get("usage") or {}
        meta: dict[str, object] = {
            "attempts": attempts,
            "constrained": constrained and self._choice_mode not in ("prompt", "auto"),
        }
        if errors:
            meta["errors"] = errors
        return Completion(
            text=text,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason"),
            meta=meta,
        )

    def close(self) -> None:
        self._client.close()


def _check_url(base_url: str) -> None:
    """``base_url`` must be an http(s) URL with a host (a typo is refused before any request)."""
    try:
        url = httpx.URL(base_url) if isinstance(base_url, str) and "://" in base_url else None
    except (httpx.InvalidURL, TypeError, ValueError):
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ValueError(
            f"option base_url of the openai backend must be an http:// or https:// URL with a host, "
            f"e.g. http://127.0.0.1:8000/v1; got {base_url!r}"
        )


def _choice_mode_for(owned_by: str) -> str:
    owner = owned_by.lower()
    if owner == "vllm":
        return "structured_outputs"
    # llama.cpp's C++ server says "llamacpp"; llama-cpp-python's server says "me".
    if owner in ("llamacpp", "llama.cpp", "me"):
        return "grammar"
    return "prompt"


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
