"""The embedding device: one setting (``retrieval.embed.embed_device``) and every construction site
taking it from there (a source test), ``--device`` on the commands that embed, and the corpus threads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from retrieval.embed import DEVICE_ENV, Embedder, embed_device, resolve_device

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")
"""The shipped packages (pyproject's ``packages.find``); tests and benchmarks build Embedders freely."""
HOME = Path("retrieval/embed.py")
"""Where Embedder is defined (its own defaults are the setting's)."""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def device_violations(source: str, label: str) -> tuple[int, list[str]]:
    """(Embedder constructions found, the ones that break the rule) in one module's source.

    The rule: every call whose callee is named ``Embedder`` (``Embedder(...)`` or
    ``something.Embedder(...)``) passes ``device=`` as a keyword, and that keyword's value is a call of
    ``embed_device`` (``embed_device()`` or ``embed_device(<explicit value>)``). A construction without
    ``device=``, with a literal or any other expression there, or with only ``**kwargs`` breaks it.
    """
    found, bad = 0, []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or _name(node.func) != "Embedder":
            continue
        found += 1
        device = next((kw.value for kw in node.keywords if kw.arg == "device"), None)
        if not (isinstance(device, ast.Call) and _name(device.func) == "embed_device"):
            bad.append(f"{label}:{node.lineno}: {ast.unparse(node)}")
    return found, bad


def test_the_checker_flags_what_it_should() -> None:
    source = "\n".join(
        [
            "a = Embedder()",  # no device
            "b = Embedder(model, device='cuda')",  # a literal, not the setting
            "c = embed.Embedder(device=chosen)",  # any other expression
            "d = Embedder(**options)",  # hidden in a splat
            "e = Embedder(model, device=embed_device(value))",  # fine
            "f = embed.Embedder(device=retrieval.embed.embed_device())",  # fine
            "g = HashingEmbedder(16)",  # not an Embedder
        ]
    )
    found, bad = device_violations(source, "x.py")
    assert found == 6
    assert [line.split(":")[1] for line in bad] == ["1", "2", "3", "4"]


def test_every_embedder_construction_takes_the_device_setting() -> None:
    total, violations = 0, []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative == HOME:
                continue
            found, bad = device_violations(path.read_text(encoding="utf-8"), str(relative))
            total += found
            violations += bad
    assert not violations, "Embedder built without device=embed_device(...):\n" + "\n".join(violations)
    # The walk really saw the sites (eval runner, hybrid, neo4j hybrid x2, registry, index, graph
    # reader, neo4j push): a broken walk must not pass by finding nothing.
    assert total >= 8


def test_setting_order_explicit_then_environment_then_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert embed_device() == "auto"
    monkeypatch.setenv(DEVICE_ENV, "CUDA:1")
    assert embed_device() == "cuda:1"
    assert embed_device("cpu") == "cpu"
    assert embed_device("") == "cuda:1"  # an empty option is no option
    for wrong in ("gpu", "cuda:", "cuda:x", "tpu"):
        with pytest.raises(ValueError, match="auto, cpu, cuda or cuda:N"):
            embed_device(wrong)
    monkeypatch.setenv(DEVICE_ENV, "gpu")
    with pytest.raises(ValueError, match=DEVICE_ENV):
        embed_device()


def test_auto_follows_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    assert resolve_device("cuda:2") == "cuda:2"
    assert resolve_device("cpu") == "cpu"


def test_embedder_resolves_its_device_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    embedder = Embedder()
    assert embedder.device_setting == "cpu" and embedder._device is None
    assert embedder.device == "cpu"
    assert Embedder(device="auto").device_setting == "auto"
    with pytest.raises(ValueError):
        Embedder(device="gpu")


def test_corpus_threads_default_to_the_free_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    import karma.core.cpus as cpus

    plan = cpus.CpuPlan(usable_cores=16, busy_elsewhere=3, free_cores=13, load_1min=3.0)
    monkeypatch.setattr(cpus, "cpu_plan", lambda: plan)
    embedder = Embedder(device="cpu")
    assert embedder.corpus_threads == 13
    assert embedder.threads <= 4  # a question's pass keeps the old, ranking-stable count
    assert Embedder(device="cpu", threads=2).corpus_threads == 2


def test_registry_and_assembly_pass_the_device(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, small_graph
) -> None:
    from pipelines.assembly import make_retriever

    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path))  # make_retriever caches the index there
    from retrieval import get_retriever

    retriever = get_retriever("hybrid", small_graph, device="cpu", index_dir=False)
    assert retriever.embedder.device_setting == "cpu"
    with pytest.raises(TypeError):
        get_retriever("hybrid", small_graph, device="cpu", embedder=retriever.embedder)
    with pytest.raises(ValueError):
        get_retriever("hybrid", small_graph, device="gpu", index_dir=False)
    monkeypatch.setenv(DEVICE_ENV, "auto")
    assert make_retriever("hybrid", small_graph, device="cpu").embedder.device_setting == "cpu"
    assert make_retriever("hybrid", small_graph).embedder.device_setting == "auto"


def test_eval_config_device_is_an_execution_field(tmp_path: Path) -> None:
    from karma.eval.config import EXECUTION_FIELDS, EvalConfig

    assert "embed_device" in EXECUTION_FIELDS
    base = {"data": str(tmp_path), "out": str(tmp_path / "run")}
    assert EvalConfig(**base).identity() == EvalConfig(**base, embed_device="cuda:0").identity()
    with pytest.raises(ValueError, match="cuda:N"):
        EvalConfig(**base, embed_device="gpu")


@pytest.mark.parametrize(
    "command",
    [["eval"], ["ask"], ["retrieve"], ["graph", "stats"], ["graph", "push"]],
)
def test_device_option_on_the_commands_that_embed(command: list[str]) -> None:
    from typer.testing import CliRunner

    from karma.cli.main import app

    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--device" in result.output
