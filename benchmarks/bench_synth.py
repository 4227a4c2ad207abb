"""Benchmark: features-only ``karma synth`` at full Karma-MV scale (2,682 videos, 37,737 questions).

Goal: under 60 s on 2 cores. Prints the wall time per stage, the ratio to the goal, and, side by side
in the same run, the vectorised simulation against the same simulation run one video at a time
(measured on a sample and scaled), which is what numpy vectorisation over videos buys.

    .venv/bin/python benchmarks/bench_synth.py [--world data/worlds/default.yaml] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from karma.synth import generate, load_world, resolve_world
from karma.synth.dynamics import simulate

REPO = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 60.0
PUBLISHED_VIDEOS, PUBLISHED_QUESTIONS = 2682, 37737


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--world", type=Path, default=REPO / "data" / "worlds" / "default.yaml")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-video-sample", type=int, default=150, help="videos simulated one at a time")
    args = parser.parse_args()
    world = load_world(args.world)

    with tempfile.TemporaryDirectory() as tmp:
        summary = generate(world, Path(tmp) / "world", seed=args.seed)
        files = sum(1 for _ in (Path(tmp) / "world").iterdir())
    print(f"world {summary.world!r}: {summary.videos} videos, {summary.transitions} transitions, "
          f"{summary.questions} questions, {files} files")  # fmt: skip
    print(f"  published scale: {PUBLISHED_VIDEOS} videos / {PUBLISHED_QUESTIONS} questions -> "
          f"{'reached' if summary.videos >= PUBLISHED_VIDEOS and summary.questions >= PUBLISHED_QUESTIONS else 'NOT reached'}")  # fmt: skip
    for stage, seconds in summary.stage_seconds.items():
        print(f"  {stage:24s} {seconds:7.2f} s")
    print(f"  {'total':24s} {summary.seconds:7.2f} s  = {summary.seconds / GOAL_SECONDS:.2f} x the {GOAL_SECONDS:.0f} s goal "
          f"({summary.questions / summary.seconds:,.0f} questions/s)")  # fmt: skip

    resolved = resolve_world(world, np.random.default_rng(args.seed))
    started = time.perf_counter()
    simulate(resolved, summary.videos, np.random.default_rng(args.seed))
    vectorised = time.perf_counter() - started
    sample = args.per_video_sample
    started = time.perf_counter()
    for i in range(sample):
        simulate(resolved, 1, np.random.default_rng(i))
    per_video = (time.perf_counter() - started) / sample * summary.videos
    print(f"simulation of {summary.videos} videos: vectorised {vectorised:.2f} s vs one video at a time "
          f"{per_video:.2f} s (scaled from {sample}) -> {per_video / vectorised:.1f}x faster")  # fmt: skip


if __name__ == "__main__":
    main()
