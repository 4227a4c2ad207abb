"""Family worlds for the builder's world tests: one helper that draws a world from its seed, generates
it and plans its fold graphs exactly as ``benchmarks/bench_generalization.py`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SETTINGS = {"free": ("free", "published"), "templated": ("templated", "unit")}
"""Setting -> (wording, units), as ``bench_generalization.SETTINGS`` (music at the cut)."""


def family_world(tmp_path: Path, seed: int, setting: str, videos: int) -> tuple[Path, Any, Any]:
    """(world folder, its dataset, its ``GraphPlan`` over 5 folds) of family world ``seed``."""
    from karma.data import load_dataset
    from karma.eval import EvalConfig
    from karma.eval.graphs import GraphPlan
    from karma.synth import generate, load_world
    from karma.synth.family import draw_family_world

    wording, units = SETTINGS[setting]
    world = draw_family_world(load_world(REPO / "data" / "worlds" / "default.yaml"), seed)
    world = world.model_copy(update={"wording": wording, "units": units})
    folder = tmp_path / "world"
    generate(world, folder, videos=videos, seed=seed)
    dataset = load_dataset(str(folder))
    plan = GraphPlan(
        EvalConfig(data=str(folder), out=str(tmp_path / "run"), folds=5), dataset, tmp_path / "g"
    )
    return folder, dataset, plan
