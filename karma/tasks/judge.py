"""``python -m karma.tasks.judge RUN_DIR``: the resumable HarmonySet-OE judge pass (see harmonyset_oe).

Exit 0 when every answer is judged; 1 when judge requests failed (backend errors, the error-rate
stop: a rerun judges exactly those); 2 for bad input or configuration, or a run folder in use.
"""

from __future__ import annotations

import argparse
import json


def main(argv: list[str] | None = None) -> int:
    from karma.core.errors import KarmaError
    from karma.core.keyvalue import backend_options
    from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE
    from karma.tasks.harmonyset_oe import judge_run
    from pipelines.backends.preflight import open_backend

    parser = argparse.ArgumentParser(prog="python -m karma.tasks.judge", description=__doc__)
    parser.add_argument("run_dir", help="An OE run directory with samples.jsonl")
    parser.add_argument("--backend", default="llamacpp", help="Judge backend (llamacpp, openai, ...)")
    parser.add_argument("--backend-opt", action="append", default=[], help="Judge backend option KEY=VALUE")
    parser.add_argument("--max-tokens", type=int, default=48, help="Judge output budget")
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=DEFAULT_MAX_ERROR_RATE,
        help="Stop when more than this share of judge requests fail in the backend (1 = never)",
    )
    args = parser.parse_args(argv)
    try:
        # Checked before the first request (exit 2): options, model files, device.
        backend = open_backend(args.backend, backend_options(args.backend_opt, "--backend-opt"))
        try:
            result = judge_run(
                args.run_dir,
                backend,
                max_tokens=args.max_tokens,
                progress=True,
                max_error_rate=args.max_error_rate,
            )
        finally:
            backend.close()
    except KarmaError as exc:
        print(f"error: {exc}", flush=True)
        return exc.exit_code
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
