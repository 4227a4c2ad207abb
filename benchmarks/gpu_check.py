"""GPU smoke check: does karma run, and agree with itself, on this machine's accelerator?

Runs from the source tree on a bare CUDA machine with PyTorch and no internet: every model is built on
the spot (``pipelines.tiny_models``: a tiny random Llama-shaped causal LM saved as a transformers
folder, a tiny random Qwen2.5-Omni thinker with its towers, short mp4 clips with a tone), plus the
packaged all-MiniLM-L6-v2 embedder. It writes ONE JSON summary (``--out``, default stdout): the
device, then one entry per check with ``status`` pass / fail / skipped and a ``reason``:

* ``llm_cpu_vs_cuda_greedy``: the transformers backend's greedy answers in float32 on CPU and CUDA
  are the same text.
* ``llm_cpu_vs_cuda_scores``: letter and loglik option scores (the backend's shared-prefix scoring)
  on CPU and CUDA in float32 within ``SCORE_TOLERANCE``, same picks.
* ``scoring_shared_vs_per_option``: ``hf_scoring.shared_prefix_scores`` vs ``per_option_scores`` on
  every device here: within ``SCORE_TOLERANCE``, same picks.
* ``llm_batched_vs_unbatched``: greedy answers with the backend's ``batch_size`` 4 (left-padded
  batches) equal those of ``batch_size`` 1, float32, on every device here.
* ``bf16_vs_fp32_picks``: letter/loglik picks of the bfloat16 model equal the float32 ones wherever
  the float32 margin between the two best options exceeds ``BF16_MARGIN`` (bf16 rounds logits to
  ~3 significant digits, so closer calls may flip); the agreement over all requests is recorded.
* ``omni_audio_parts``: the VLM pipeline's Omni inputs as designed (docs/backends.md, "What the model
  receives"): with ``use_audio_in_video`` the past clip is audible, a predictive question's current
  clip has a silent track of full length and its frames unchanged, and the audio placeholders match
  the features; with it off and ``predictive_audio=remove`` only the past clip's audio is an item.
* ``omni_generate``: the tiny thinker answers a two-clip request on the main device, through its
  vision and audio towers.
* ``omni_cpu_vs_cuda``: the same request's first-step logits on CPU and CUDA in float32 within
  ``LOGIT_TOLERANCE`` and the same greedy tokens.
* ``embed_cpu`` / ``embed_cuda_vs_cpu``: texts/s of the packaged MiniLM (``Embedder.encode_corpus``)
  on CPU, and on CUDA in the same run, with the largest |difference| of a vector component.
* ``eval_llm_paper`` / ``eval_vlm_paper``: a short ``karma eval --preset paper`` (in this process,
  through the CLI) on ``data/sample`` with the tiny LM (``--backend transformers``) and with the tiny
  Omni thinker on written clips (``--pipeline vlm --backend qwen-omni``); passes when it exits 0,
  answers every selected question without a backend error, and config.json records the device.

CUDA checks are ``skipped`` with the reason "no CUDA" on a CPU machine. ``--fast`` (the default without
CUDA) keeps every size small so CI runs it on 2 cores in under a minute
(``tests/benchmarks/test_gpu_check.py``); the full mode (the default with CUDA) answers more requests
and embeds more texts, and is meant to finish in under 6 minutes. The exit status is 1 when a check
failed. Run: ``python benchmarks/gpu_check.py [--out gpu_check.json] [--fast|--full]``; docs/backends.md,
"GPU smoke check", says how to install karma on a GPU node without internet.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pipelines.tiny_models import tiny_transition, tower_calls  # noqa: E402 (after the env)

CHECKS = (
    "llm_cpu_vs_cuda_greedy",
    "llm_cpu_vs_cuda_scores",
    "scoring_shared_vs_per_option",
    "llm_batched_vs_unbatched",
    "bf16_vs_fp32_picks",
    "omni_audio_parts",
    "omni_generate",
    "omni_cpu_vs_cuda",
    "embed_cpu",
    "embed_cuda_vs_cpu",
    "eval_llm_paper",
    "eval_vlm_paper",
)
"""Every check the summary holds, in order (the test asserts all are present)."""
CUDA_ONLY = ("llm_cpu_vs_cuda_greedy", "llm_cpu_vs_cuda_scores", "omni_cpu_vs_cuda", "embed_cuda_vs_cpu")
"""Checks that compare against CUDA: ``skipped`` (no CUDA) without it."""
NO_CUDA = "no CUDA: torch.cuda.is_available() is False"

SCORE_TOLERANCE = 1e-3
"""Largest |difference| of a summed option log-likelihood between two float32 routes (CPU/CUDA,
shared prefix/per option); test_hf_scoring measures 2e-5 on SmolLM2."""
LOGIT_TOLERANCE = 1e-3
"""Largest |difference| of a float32 logit of the tiny Omni thinker between CPU and CUDA."""
BF16_MARGIN = 0.5
"""Nats between the float32 scores of the best two options above which bf16 must pick the same."""
EMBED_TOLERANCE = 1e-3
"""Largest |difference| of a normalised MiniLM vector component between CPU and CUDA."""
VLM_VIDEO = "synthVid001"


class Skip(Exception):
    """A check that cannot run here: its message is the reason."""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="where the JSON summary goes (default: stdout)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fast", action="store_true", help="small sizes (default without CUDA)")
    mode.add_argument("--full", action="store_true", help="full sizes (default with CUDA)")
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "sample")
    parser.add_argument("--only", help="comma-separated check names (default: all)")
    args = parser.parse_args()

    import torch
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    cuda = torch.cuda.is_available()
    fast = args.fast or (not args.full and not cuda)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="karma-gpu-check-") as tmp:
        check = GpuCheck(Path(tmp), data=args.data, cuda=cuda, fast=fast)
        wanted = set(args.only.split(",")) if args.only else set(CHECKS)
        unknown = wanted - set(CHECKS)
        if unknown:
            parser.error(f"unknown checks: {', '.join(sorted(unknown))}")
        results: dict[str, dict[str, Any]] = {}
        for name in CHECKS:
            if name not in wanted:
                results[name] = {"status": "skipped", "reason": "not selected (--only)"}
                continue
            results[name] = check.run(name)
            print(
                f"gpu_check: {name}: {results[name]['status']} ({results[name]['seconds']} s)",
                file=sys.stderr,
            )
    summary = {
        "mode": "fast" if fast else "full",
        "device": device_info(),
        "seconds": round(time.perf_counter() - started, 1),
        "passed": not any(r["status"] == "fail" for r in results.values()),
        "counts": {s: sum(r["status"] == s for r in results.values()) for s in ("pass", "fail", "skipped")},
        "checks": results,
    }
    text = json.dumps(summary, indent=2, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0 if summary["passed"] else 1


def device_info() -> dict[str, Any]:
    """Python, torch, transformers, CUDA and the GPUs, and the CPU (benchmarks/machine.py's line)."""
    import torch
    import transformers
    from machine import describe_machine

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cpu": describe_machine(),
        "torch_threads": torch.get_num_threads(),
        "cuda_available": torch.cuda.is_available(),
        "torch_cuda": torch.version.cuda,
    }
    if torch.cuda.is_available():
        info["cudnn"] = torch.backends.cudnn.version()
        info["gpus"] = [
            {
                "name": torch.cuda.get_device_name(i),
                "capability": ".".join(map(str, torch.cuda.get_device_capability(i))),
                "memory_gib": round(torch.cuda.get_device_properties(i).total_memory / 2**30, 1),
            }
            for i in range(torch.cuda.device_count())
        ]
        info["bf16_supported"] = torch.cuda.is_bf16_supported()
        info["tf32_matmul"] = torch.backends.cuda.matmul.allow_tf32
    return info


class GpuCheck:
    """The checks; models are built once, lazily, in ``tmp``."""

    def __init__(self, tmp: Path, *, data: Path, cuda: bool, fast: bool):
        self.tmp, self.data, self.cuda, self.fast = tmp, data, cuda, fast
        self.main_device = "cuda" if cuda else "cpu"
        self.devices = ["cpu", "cuda"] if cuda else ["cpu"]
        self.requests_n = 4 if fast else 16
        self._llm: Path | None = None
        self._omni: Path | None = None
        self._backends: dict[tuple[str, str, int], Any] = {}
        self._questions: list[dict[str, Any]] | None = None

    def run(self, name: str) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            if name in CUDA_ONLY and not self.cuda:
                raise Skip(NO_CUDA)
            result = getattr(self, name)()
            result.setdefault("status", "pass")
        except Skip as skip:
            result = {"status": "skipped", "reason": str(skip)}
        except Exception as exc:  # a broken check is a failed check, with its traceback
            result = {
                "status": "fail",
                "reason": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=6).splitlines()[-6:],
            }
        result.setdefault("reason", "")
        result["seconds"] = round(time.perf_counter() - start, 2)
        return {"status": result.pop("status"), "reason": result.pop("reason"), **result}

    # -- models and requests ---------------------------------------------------------------------
    @property
    def llm_folder(self) -> Path:
        if self._llm is None:
            from pipelines.tiny_models import tiny_llama_folder

            self._llm = tiny_llama_folder(self.tmp / "tiny-llama")
        return self._llm

    @property
    def omni_folder(self) -> Path:
        if self._omni is None:
            from pipelines.tiny_models import tiny_omni_folder

            self._omni = tiny_omni_folder(self.tmp / "tiny-omni")
        return self._omni

    def backend(self, device: str, dtype: str = "float32", batch_size: int = 1) -> Any:
        key = (device, dtype, batch_size)
        if key not in self._backends:
            from pipelines.backends.hf_transformers import TransformersBackend

            self._backends[key] = TransformersBackend(
                self.llm_folder, device=device, dtype=dtype, batch_size=batch_size
            )
        return self._backends[key]

    def questions(self) -> list[dict[str, Any]]:
        """The first multiple-choice questions of the sample data (question text and four options)."""
        if self._questions is None:
            found: list[dict[str, Any]] = []
            for path in sorted(self.data.glob("*_qa.json")):
                for transition in json.loads(path.read_text()):
                    if not isinstance(transition, dict):
                        continue
                    for question in transition.get("questions", []):
                        options = question.get("options")
                        if isinstance(options, dict) and len(options) == 4:
                            found.append(question)
                if len(found) >= 16:
                    break
            if not found:
                raise RuntimeError(f"no questions with four options in {self.data}")
            self._questions = found[:16]
        return self._questions[: self.requests_n]

    def requests(self, max_tokens: int = 8) -> list[Any]:
        from pipelines.backends import ChatMessage, ChatRequest

        out = []
        for q in self.questions():
            options = "\n".join(f"{letter}) {text}" for letter, text in q["options"].items())
            out.append(
                ChatRequest(
                    messages=[
                        ChatMessage(role="system", content="Answer with the letter of the best option."),
                        ChatMessage(role="user", content=f"{q['question']}\n{options}\nAnswer:"),
                    ],
                    max_tokens=max_tokens,
                )
            )
        return out

    def option_sets(self) -> list[tuple[str, list[str]]]:
        """(mode, continuations) per request: letter mode scores a-d, loglik mode the option texts."""
        sets = []
        for q in self.questions():
            sets.append(("letter", list(q["options"])))
            sets.append(("loglik", [" " + text for text in q["options"].values()]))
        return sets

    def score_all(self, backend: Any) -> list[list[Any]]:
        """Option scores of every (request, option set) pair through the backend (shared prefix)."""
        return backend.score_continuations(_twice(self.requests()), [opts for _, opts in self.option_sets()])

    # -- the checks ------------------------------------------------------------------------------
    def llm_cpu_vs_cuda_greedy(self) -> dict[str, Any]:
        requests = self.requests()
        cpu = [c.text for c in self.backend("cpu").generate(requests)]
        gpu_backend = self.backend("cuda")
        gpu = [c.text for c in gpu_backend.generate(requests)]
        same = sum(a == b for a, b in zip(cpu, gpu, strict=True))
        return _verdict(
            same == len(cpu),
            f"{same}/{len(cpu)} greedy answers equal (float32, batch_size 1)",
            requests=len(cpu),
            runtime=gpu_backend.runtime,
            differing=[{"cpu": a, "cuda": b} for a, b in zip(cpu, gpu, strict=True) if a != b][:3],
        )

    def llm_cpu_vs_cuda_scores(self) -> dict[str, Any]:
        cpu = self.score_all(self.backend("cpu"))
        gpu = self.score_all(self.backend("cuda"))
        return _compare_scores(cpu, gpu, self.option_sets(), "cpu", "cuda")

    def scoring_shared_vs_per_option(self) -> dict[str, Any]:
        from pipelines.backends._common import text_messages
        from pipelines.backends.hf_scoring import per_option_scores, shared_prefix_scores

        per_device = {}
        ok = True
        for device in self.devices:
            backend = self.backend(device)
            shared, single = [], []
            for request, (_, options) in zip(_twice(self.requests()), self.option_sets(), strict=True):
                prompt = backend.tokenizer.apply_chat_template(
                    text_messages(request, backend.name), add_generation_prompt=True, tokenize=False
                )

                def tokenize(text: str, tok: Any = backend.tokenizer) -> list[int]:
                    return tok(text, add_special_tokens=False)["input_ids"]

                shared.append(shared_prefix_scores(backend.model, tokenize, prompt, options, device))
                single.append(per_option_scores(backend.model, tokenize, prompt, options, device))
            result = _compare_scores(shared, single, self.option_sets(), "shared", "per_option")
            ok = ok and result["status"] == "pass"
            per_device[device] = {k: v for k, v in result.items() if k != "status"}
        reason = "; ".join(f"{d}: {r['reason']}" for d, r in per_device.items())
        return _verdict(ok, reason, devices=per_device)

    def llm_batched_vs_unbatched(self) -> dict[str, Any]:
        requests = self.requests()
        per_device = {}
        ok = True
        for device in self.devices:
            one = [c.text for c in self.backend(device, batch_size=1).generate(requests)]
            batched = self.backend(device, batch_size=4)
            many = [c.text for c in batched.generate(requests)]
            errors = [c.error for c in batched.generate(requests[:1]) if c.error]
            same = sum(a == b for a, b in zip(one, many, strict=True))
            ok = ok and same == len(one) and not errors
            per_device[device] = {"equal": f"{same}/{len(one)}", "runtime": batched.runtime}
        reason = "; ".join(f"{d}: {r['equal']} equal" for d, r in per_device.items())
        return _verdict(ok, f"greedy answers, batch_size 4 vs 1, float32: {reason}", devices=per_device)

    def bf16_vs_fp32_picks(self) -> dict[str, Any]:
        from pipelines.loglik import picks

        device = self.main_device
        fp32 = self.score_all(self.backend(device))
        bf16_backend = self.backend(device, dtype="bfloat16")
        bf16 = self.score_all(bf16_backend)
        agree = decisive = decisive_agree = 0
        for a, b in zip(fp32, bf16, strict=True):
            same = picks(a)[0] == picks(b)[0]
            agree += same
            ranked = sorted((s.logprob for s in a), reverse=True)
            if ranked[0] - ranked[1] > BF16_MARGIN:
                decisive += 1
                decisive_agree += same
        return _verdict(
            decisive_agree == decisive and decisive > 0,
            f"{device}: bf16 picks equal fp32 on {decisive_agree}/{decisive} requests with a margin > "
            f"{BF16_MARGIN} nats ({agree}/{len(fp32)} overall)",
            runtime=bf16_backend.runtime,
            max_abs_logprob_diff=_max_diff(fp32, bf16),
        )

    def _vlm(self, **options: Any) -> tuple[Any, Any]:
        """A QwenOmniBackend on the tiny thinker and a VlmPipeline over two written clips."""
        from pipelines.backends.omni import QwenOmniBackend
        from pipelines.tiny_models import tiny_omni_thinker, write_clip
        from pipelines.vlm import VlmPipeline

        clips = self.tmp / "clips"
        if not (clips / "vidV" / "scene_002.mp4").is_file():
            write_clip(clips / "vidV" / "scene_001.mp4", tone_hz=330.0, shade=40)
            write_clip(clips / "vidV" / "scene_002.mp4", tone_hz=660.0, shade=160)
        if not hasattr(self, "_thinker"):
            self._thinker = tiny_omni_thinker()
        model, tokenizer, features = self._thinker
        device = options.pop("device", "cpu")
        pipeline_options = {k: options.pop(k) for k in ("predictive_audio",) if k in options}
        backend = QwenOmniBackend(
            model=model,
            tokenizer=tokenizer,
            feature_extractor=features,
            max_side=112,
            num_frames=4,
            dtype="float32",
            device=device,
            **options,
        )
        pipeline = VlmPipeline(
            backend, clips_dir=clips, cache_dir=self.tmp / "media", max_tokens=4, **pipeline_options
        )
        return backend, pipeline

    def omni_audio_parts(self) -> dict[str, Any]:
        import numpy as np

        from pipelines.backends.omni import SPECIAL_TOKENS, audio_token_count

        problems: list[str] = []
        found: dict[str, Any] = {}
        backend, pipeline = self._vlm()
        for qtype in ("predictive", "evidential"):
            built = backend.builder.build(pipeline.prepare(tiny_transition(qtype), 0).request)
            past, current = built["clips"]
            past_rms = float(np.sqrt(np.mean(past["audio"] ** 2)))
            current_rms = float(np.sqrt(np.mean(current["audio"] ** 2)))
            found[qtype] = {"past_rms": round(past_rms, 3), "current_rms": round(current_rms, 3)}
            if past_rms <= 0.1:
                problems.append(f"{qtype}: the past clip is silent")
            if qtype == "predictive" and (current["audio"].size != 16_000 or current_rms != 0.0):
                problems.append("predictive: the masked clip's track is not a full-length silence")
            if qtype == "evidential" and current_rms <= 0.1:
                problems.append("evidential: the current clip is silent")
            ids = built["inputs"]["input_ids"][0]
            audio_id = backend.tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS["audio"])
            lengths = built["inputs"]["feature_attention_mask"].sum(dim=1).tolist()
            if int((ids == audio_id).sum()) != sum(audio_token_count(int(n)) for n in lengths):
                problems.append(f"{qtype}: audio placeholders do not match the audio features")
        separate, removed = self._vlm(use_audio_in_video=False, predictive_audio="remove")
        built = separate.builder.build(removed.prepare(tiny_transition("predictive"), 0).request)
        items = int(built["inputs"]["input_features"].shape[0])
        found["remove_separate_audio_items"] = items
        if items != 1 or built["prompt"].count(SPECIAL_TOKENS["audio_bos"]) != 1:
            problems.append("use_audio_in_video off + remove: expected exactly the past clip's audio item")
        return _verdict(
            not problems,
            "; ".join(problems) or "past clip audible, masked clip silent (present) or removed, as designed",
            **found,
        )

    def omni_generate(self) -> dict[str, Any]:
        backend, pipeline = self._vlm(device=self.main_device)
        try:
            with tower_calls(backend.model) as seen:
                (record,) = pipeline.answer([pipeline.prepare(tiny_transition("predictive"), 0)])
        finally:
            backend.model.to("cpu")
        ok = record.error is None and bool(record.completion_tokens) and min(seen.values()) >= 1
        return _verdict(
            ok,
            record.error or f"{self.main_device}: {record.completion_tokens} tokens, towers called {seen}",
            runtime=backend.runtime,
        )

    def omni_cpu_vs_cuda(self) -> dict[str, Any]:
        import torch

        outputs = {}
        for device in ("cpu", "cuda"):
            backend, pipeline = self._vlm(device=device)
            request = pipeline.prepare(tiny_transition("predictive"), 0).request
            inputs = backend._to_device(backend.builder.build(request)["inputs"])
            with torch.inference_mode():
                logits = backend.model(**inputs).logits[0, -1].float().cpu()
                tokens = backend.model.generate(**inputs, max_new_tokens=4, do_sample=False)
            outputs[device] = (logits, tokens[0, inputs["input_ids"].shape[1] :].cpu().tolist())
            backend.model.to("cpu")
        diff = float((outputs["cpu"][0] - outputs["cuda"][0]).abs().max())
        same = outputs["cpu"][1] == outputs["cuda"][1]
        return _verdict(
            diff <= LOGIT_TOLERANCE and same,
            f"first-step logits max |diff| {diff:.2e} (tolerance {LOGIT_TOLERANCE}), greedy tokens "
            f"{'equal' if same else 'differ'}",
            max_abs_logit_diff=diff,
            tokens={d: o[1] for d, o in outputs.items()},
        )

    def _embed(self, device: str, texts: list[str]) -> tuple[Any, float]:
        from retrieval.embed import Embedder

        embedder = Embedder(device=device)
        embedder.encode_corpus(texts[:32])  # load and warm up
        if device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        start = time.perf_counter()
        vectors = embedder.encode_corpus(texts)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return vectors, len(texts) / (time.perf_counter() - start)

    def embed_texts(self) -> list[str]:
        n = 128 if self.fast else 4096
        base = [q["question"] for q in self.questions()] + [
            text for q in self.questions() for text in q["options"].values()
        ]
        return [f"{base[i % len(base)]} (variant {i})" for i in range(n)]

    def embed_cpu(self) -> dict[str, Any]:
        texts = self.embed_texts()
        vectors, rate = self._embed("cpu", texts)
        self._cpu_vectors = vectors
        return _verdict(
            vectors.shape[0] == len(texts),
            f"{rate:.0f} texts/s on cpu",
            texts=len(texts),
            cpu_texts_per_s=rate,
        )

    def embed_cuda_vs_cpu(self) -> dict[str, Any]:
        texts = self.embed_texts()
        cpu = getattr(self, "_cpu_vectors", None)
        cpu_rate = None
        if cpu is None:
            cpu, cpu_rate = self._embed("cpu", texts)
        gpu, gpu_rate = self._embed("cuda", texts)
        diff = float(abs(cpu - gpu).max())
        return _verdict(
            diff <= EMBED_TOLERANCE,
            f"{gpu_rate:.0f} texts/s on cuda; vectors max |diff| {diff:.1e} (tolerance {EMBED_TOLERANCE})",
            texts=len(texts),
            cuda_texts_per_s=gpu_rate,
            cpu_texts_per_s=cpu_rate,
            max_abs_component_diff=diff,
        )

    def _eval(self, name: str, args: list[str], expected: int) -> dict[str, Any]:
        from typer.testing import CliRunner

        from karma.cli.main import app

        out = self.tmp / name
        common = ["eval", "--data", str(self.data), "--out", str(out), "--preset", "paper", "--no-cache"]
        common += ["--bootstrap-resamples", "100", "--no-progress", "--device", self.main_device]
        command = common + args
        if not self.cuda:
            command += ["--backend-opt", "device=cpu"]  # the preset asks for cuda
        result = CliRunner().invoke(app, command)
        summary: dict[str, Any] = {"command": "karma " + " ".join(command), "exit_code": result.exit_code}
        if result.exit_code != 0:
            tail = (result.output or "")[-1500:]
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                tail += "".join(traceback.format_exception(result.exception))[-1500:]
            return _verdict(False, f"karma eval exited {result.exit_code}", output_tail=tail, **summary)
        samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines() if line]
        config = json.loads((out / "config.json").read_text())
        errors = [s for s in samples if s.get("error")]
        runtime = config.get("backend_runtime", {})
        device_ok = str(runtime.get("device", "")).startswith(self.main_device)
        prompt_tokens = [s.get("prompt_tokens") or 0 for s in samples]
        ok = len(samples) == expected and not errors and device_ok and min(prompt_tokens, default=0) > 0
        return _verdict(
            ok,
            f"{len(samples)}/{expected} answered, {len(errors)} backend errors, model on {runtime.get('device')}",
            mean_prompt_tokens=sum(prompt_tokens) / max(len(prompt_tokens), 1),
            backend_runtime=runtime,
            backend_settings=config.get("backend_settings"),
            parse_statuses=sorted({str(s.get("parse_status")) for s in samples}),
            **summary,
        )

    def eval_llm_paper(self) -> dict[str, Any]:
        limit = 2 if self.fast else 8
        ckg = ["--ckg", "off"] if self.fast else ["--ckg", "both"]
        args = [
            "--backend",
            "transformers",
            "--backend-opt",
            f"model={self.llm_folder}",
            "--limit",
            str(limit),
        ]
        return self._eval("eval-llm", args + ckg, expected=limit * (1 if self.fast else 2))

    def eval_vlm_paper(self) -> dict[str, Any]:
        limit = 2 if self.fast else 6
        clips = self.tmp / "eval-clips"
        _write_scene_clips(self.data, VLM_VIDEO, clips, transitions=(limit + 2) // 3 + 1)
        args = [
            "--pipeline",
            "vlm",
            "--backend",
            "qwen-omni",
            "--backend-opt",
            f"model_path={self.omni_folder}",
        ]
        # The clips cover the video's first transitions, so its questions are taken in file order.
        args += [
            "--clips",
            str(clips),
            "--videos",
            VLM_VIDEO,
            "--limit",
            str(limit),
            "--limit-order",
            "first",
        ]
        args += ["--ckg", "off"]
        return self._eval("eval-vlm", args, expected=limit)


def _verdict(ok: bool, reason: str, **details: Any) -> dict[str, Any]:
    return {"status": "pass" if ok else "fail", "reason": reason, **details}


def _twice(items: list[Any]) -> list[Any]:
    return [item for item in items for _ in range(2)]


def _max_diff(a: list[list[Any]], b: list[list[Any]]) -> float:
    return max(
        abs(x.logprob - y.logprob) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True)
    )


def _compare_scores(
    a: list[list[Any]], b: list[list[Any]], sets: list[tuple[str, list[str]]], name_a: str, name_b: str
) -> dict[str, Any]:
    from pipelines.loglik import picks

    diff = _max_diff(a, b)
    same = sum(picks(x) == picks(y) for x, y in zip(a, b, strict=True))
    modes = sorted({mode for mode, _ in sets})
    return _verdict(
        diff <= SCORE_TOLERANCE and same == len(a),
        f"{'/'.join(modes)} scores {name_a} vs {name_b}: max |diff| {diff:.1e} (tolerance "
        f"{SCORE_TOLERANCE}), picks equal on {same}/{len(a)}",
        max_abs_logprob_diff=diff,
        requests=len(a),
    )


def _seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def _write_scene_clips(data: Path, video: str, clips: Path, transitions: int) -> None:
    """Clips of the first ``transitions`` transitions of ``video``, each as long as its QA span."""
    from pipelines.tiny_models import write_clip

    scenes: dict[str, float] = {}
    for transition in json.loads((data / f"{video}_qa.json").read_text())[:transitions]:
        for key in ("past_scene", "current_scene"):
            scene = transition[key]
            scenes[scene["name"]] = _seconds(scene["end_time"]) - _seconds(scene["start_time"])
    for i, (name, seconds) in enumerate(sorted(scenes.items())):
        target = clips / video / name
        if not target.is_file():
            write_clip(target, tone_hz=220.0 * (1 + i % 4), shade=40 + 30 * (i % 6), seconds=seconds)


if __name__ == "__main__":
    sys.exit(main())
