"""llama.cpp builds side by side: the portable AVX2 build against the runtime-dispatch build.

Both wheels come from scripts/build_llama_wheel.sh (built once, cached in ~/.cache/karma/wheels/;
a missing one is built first, which takes minutes). Each is installed once into a folder next to its
wheel (``pip install --no-deps --target``; the project's .venv is not touched) and run
in its own child process (the wheel's ``llama_cpp`` first on ``sys.path``), one after the other, on
the same GGUF, threads and prompts:

* prompt reading: ``--prompt-tokens`` tokens evaluated from an empty context (llama.cpp's prompt
  processing, the part of a loglik question that dominates), the fastest of ``--repeat`` runs,
  tokens/s;
* one loglik question: karma's ``llamacpp`` backend in the ``loglik`` answer mode scoring the four
  options of a question with a fact block (a prompt shaped like karma's), seconds per question, the
  fastest of ``--questions`` distinct questions after one warm-up question.

The fastest run counts because other load on a shared machine only adds time; with ``--rounds N``
the builds run alternately N times each (best kept), so a change of load reaches both. The load
column is the highest 1-minute load average seen at the start of a build's runs. Each time is also
taken as this process's CPU time, which waiting for a core does not add to: on a shared, loaded
machine, with ``--threads 1`` (no worker threads spinning), that compares the kernels more steadily
than the wall clock does.

The dispatch build loads the best CPU module for this machine (pipelines/backends/ggml_cpu.py); the
variant it picked and the instruction sets of the kernels each child really runs (ggml's system
info) are printed, and
so is whether both builds give the same answers: the loglik pick and the greedy reply to question 1
equal, and the largest difference of the four log-likelihoods (different kernels round differently,
so differences of up to about 0.2 nats were seen, not a changed pick). Ratios are dispatch over portable
(higher tokens/s and lower seconds are better). Run: ``.venv/bin/python benchmarks/bench_llamacpp_build.py [--model qwen2.5-coder-1.5b]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

from machine import describe_machine  # benchmarks/machine.py, beside this script

ROOT = Path(__file__).resolve().parents[1]

FACTS = [
    "brightness increases -> loudness increases (support 41, lift 2.3)",
    "motion increases -> tempo increases (support 33, lift 1.9)",
    "saturation decreases -> mood becomes sad (support 18, lift 1.7)",
    "a cut to a night scene -> the key moves to minor (support 12, lift 1.5)",
]
OPTIONS = ["the music gets louder", "the music gets quieter", "the key moves to minor", "nothing changes"]


def question(i: int) -> list[dict[str, str]]:
    """A question prompt shaped like karma's: a system line, a fact block, the question, options."""
    facts = "\n".join(f"- {fact}" for fact in FACTS)
    options = "\n".join(f"{letter}) {text}" for letter, text in zip("abcd", OPTIONS, strict=True))
    user = (
        f"Retrieved facts:\n{facts}\n\nScene {i}: the video cuts from a dark street to a bright beach "
        f"at noon (brightness {100 + i} -> {140 + i}).\nHow does the music most likely change?\n{options}"
    )
    return [
        {"role": "system", "content": "You answer questions about music videos. Reply with one letter."},
        {"role": "user", "content": user},
    ]


def installed(wheel: Path) -> Path:
    """The wheel installed once (``pip install --no-deps --target``) into a folder beside it, so the
    build runs with that folder first on ``PYTHONPATH`` and the project's .venv is left alone."""
    target = wheel.parent / "site"
    if not (target / "llama_cpp" / "__init__.py").is_file():
        tmp = wheel.parent / f"site.tmp.{os.getpid()}"
        subprocess.run(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "-q", "--no-deps",
             "--target", str(tmp), str(wheel)],
            check=True,
        )  # fmt: skip
        tmp.rename(target)
    return target


def kernel_features(llama_cpp: types.ModuleType) -> list[str]:
    """The instruction sets compiled into the CPU kernels llama.cpp really runs: ggml's system info
    (``llama_print_system_info``) lists the features of the loaded CPU backend, so it tells the
    portable build's kernels from the variant the dispatch build loaded (probing every module for
    its score maps them all, so the process's mapped libraries cannot tell)."""
    info = llama_cpp.llama_print_system_info().decode()
    return [
        name
        for name, on in re.findall(r"(\w+) = (\d)", info)
        if on == "1" and name not in {"LLAMAFILE", "OPENMP", "REPACK"}
    ]


def child(args: argparse.Namespace) -> None:
    """Runs inside the child process: measure this build, print one JSON line."""
    from pipelines.backends.ggml_cpu import use_best_cpu_variant

    variant = use_best_cpu_variant()  # before llama.cpp starts (a no-op for the portable build)
    import llama_cpp
    from llama_cpp import Llama

    from pipelines.backends import ChatMessage, ChatRequest, get_backend
    from pipelines.loglik import wrap_backend

    assert str(Path(llama_cpp.__file__).resolve()).startswith(args.lib), llama_cpp.__file__
    llm = Llama(str(args.model_path), n_ctx=args.prompt_tokens + 64, n_threads=args.threads,
                n_batch=512, verbose=False)  # fmt: skip
    modules = kernel_features(llama_cpp)
    words = " ".join(f"{OPTIONS[i % 4]} after scene {i}." for i in range(args.prompt_tokens))
    tokens = llm.tokenize(words.encode())[: args.prompt_tokens]
    rates, cpu_rates = [], []
    for _ in range(args.repeat):  # the fastest run counts: other load only adds time
        llm.reset()
        start, cpu = time.perf_counter(), time.process_time()
        llm.eval(tokens)
        rates.append(len(tokens) / (time.perf_counter() - start))
        cpu_rates.append(len(tokens) / (time.process_time() - cpu))
    llm.close()
    plain = get_backend("llamacpp", model_path=str(args.model_path), n_threads=args.threads)
    backend = wrap_backend(plain, "loglik")

    def request(i: int, choices: list[str] | None) -> ChatRequest:
        return ChatRequest(
            messages=[ChatMessage(role=m["role"], content=m["content"]) for m in question(i)],
            choices=choices,
            max_tokens=16,
        )

    def ask(i: int) -> tuple[float, float, dict]:
        start, cpu = time.perf_counter(), time.process_time()
        (completion,) = backend.generate([request(i, OPTIONS)])
        assert completion.error is None, completion.error
        scores = {letter: s["logprob"] for letter, s in completion.meta["scores"].items()}
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return wall, cpu, {"pick": completion.text, "scores": scores}

    ask(0)  # warm-up: pages the weights in
    asked = [ask(i + 1) for i in range(args.questions)]
    (greedy,) = plain.generate([request(1, None)])  # a free greedy reply: must be the same text
    print(json.dumps({"variant": variant or "built-in (portable)", "modules": modules,
                      "prompt_tps": max(rates), "prompt_cpu_tps": max(cpu_rates),
                      "question_s": min(a[0] for a in asked), "question_cpu_s": min(a[1] for a in asked),
                      "tokens": len(tokens), "answer": asked[0][2], "greedy": greedy.text}))  # fmt: skip


def wheel_path(build: str) -> Path:
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build_llama_wheel.sh"), build],
        check=True, capture_output=False, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    return Path(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="qwen2.5-coder-1.5b", help="a model name of `karma models` or a .gguf"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each build, alternating")
    parser.add_argument("--builds", default="portable,dispatch", help="which builds, comma-separated")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--lib", default="", help=argparse.SUPPRESS)
    parser.add_argument("--model-path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.model.endswith(".gguf"):
        model_path = Path(args.model)
    else:
        from pipelines.model_registry import model_path as registry_path

        model_path = registry_path(args.model)
    builds = args.builds.split(",")
    libs = {build: installed(wheel_path(build)) for build in builds}
    results: dict[str, dict] = {}
    for _ in range(args.rounds):  # builds alternate, so a change of the machine's load hits both
        for build in builds:
            lib = libs[build]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(lib), str(ROOT)]))
            env.pop("GGML_BACKEND_PATH", None)
            cmd = [sys.executable, __file__, "--child", "--lib", str(lib.resolve()), "--model-path", str(model_path),
               "--threads", str(args.threads), "--prompt-tokens", str(args.prompt_tokens),
               "--repeat", str(args.repeat), "--questions", str(args.questions)]  # fmt: skip
            load = os.getloadavg()[0]
            out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
            got = {**json.loads(out.strip().splitlines()[-1]), "load": load}
            if build in results:  # keep the best of the rounds
                for key in ("prompt_tps", "prompt_cpu_tps"):
                    got[key] = max(got[key], results[build][key])
                for key in ("question_s", "question_cpu_s"):
                    got[key] = min(got[key], results[build][key])
                got["load"] = max(got["load"], results[build]["load"])
            results[build] = got
    print(f"machine: {describe_machine()}")
    first = next(iter(results.values()))
    print(f"model: {model_path.name}, {args.threads} threads, prompt {first['tokens']} tokens "
          f"x {args.repeat} (fastest), loglik question: 4 options, fastest of {args.questions}")  # fmt: skip
    print(
        "(wall: elapsed time; CPU: this process's CPU time, which other load on the machine barely changes)"
    )
    print(f"{'build':<10} {'CPU kernels':<22} {'prompt tok/s':>13} {'tok/CPU-s':>10} "
          f"{'loglik s/question':>18} {'CPU-s':>7} {'load at start':>14}")  # fmt: skip
    for build, r in results.items():
        loaded = r["variant"]
        print(f"{build:<10} {loaded:<22} {r['prompt_tps']:>13.1f} {r['prompt_cpu_tps']:>10.1f} "
              f"{r['question_s']:>18.2f} {r['question_cpu_s']:>7.2f} {r['load']:>14.1f}")  # fmt: skip
    for build, r in results.items():
        print(f"{build}: kernels built for {' '.join(r['modules'])} (llama_print_system_info)")
    for build, r in results.items():
        scores = ", ".join(f"{k} {v:.3f}" for k, v in r["answer"]["scores"].items())
        print(f"{build}: loglik pick {r['answer']['pick']!r} ({scores}); greedy reply {r['greedy']!r}")
    if not {"portable", "dispatch"} <= results.keys():
        return
    p, d = results["portable"], results["dispatch"]
    gap = max(abs(d["answer"]["scores"][k] - v) for k, v in p["answer"]["scores"].items())
    same = p["answer"]["pick"] == d["answer"]["pick"] and p["greedy"] == d["greedy"]
    print(f"same answers: {'yes' if same else 'NO'} (loglik pick and greedy reply); "
          f"largest loglik score difference {gap:.4f} nats")  # fmt: skip
    for clock, tps, sec in (
        ("wall", "prompt_tps", "question_s"),
        ("CPU", "prompt_cpu_tps", "question_cpu_s"),
    ):
        print(f"dispatch / portable ({clock}): prompt tokens/s x{d[tps] / p[tps]:.2f}, "
              f"loglik question time x{d[sec] / p[sec]:.2f} (speed-up x{p[sec] / d[sec]:.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
