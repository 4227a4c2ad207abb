"""``benchmarks/gpu_check.py`` in its fast CPU mode, as a fresh process: the GPU smoke check cannot rot
on machines without a GPU. Every check is in the summary, none failed, and without CUDA the checks
that compare against CUDA are skipped with the reason (the rest pass)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHECKS = {
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
}
CUDA_ONLY = {"llm_cpu_vs_cuda_greedy", "llm_cpu_vs_cuda_scores", "omni_cpu_vs_cuda", "embed_cuda_vs_cpu"}


def test_fast_mode_runs_every_check_and_none_fails(tmp_path: Path) -> None:
    import torch

    out = tmp_path / "gpu_check.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--fast", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.is_file(), proc.stderr[-3000:]
    summary = json.loads(out.read_text())
    checks = summary["checks"]
    failed = {name: check for name, check in checks.items() if check["status"] == "fail"}
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert set(checks) == CHECKS
    assert summary["mode"] == "fast" and summary["passed"] is True
    assert summary["device"]["torch"] == torch.__version__
    for name, check in checks.items():
        assert check["status"] in {"pass", "skipped"} and isinstance(check["reason"], str), name
    if not torch.cuda.is_available():
        assert summary["device"]["cuda_available"] is False
        for name in CUDA_ONLY:
            assert checks[name]["status"] == "skipped" and "no CUDA" in checks[name]["reason"], name
        for name in CHECKS - CUDA_ONLY:
            assert checks[name]["status"] == "pass", (name, checks[name]["reason"])
    assert checks["embed_cpu"]["cpu_texts_per_s"] > 0
    assert checks["eval_llm_paper"]["exit_code"] == 0 and checks["eval_vlm_paper"]["exit_code"] == 0
    assert summary["seconds"] < 240, summary["seconds"]  # CI's budget; about 20 s on 2 idle cores
