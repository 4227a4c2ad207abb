"""A run's evidence for the repository, and a resumable run folder back from it.

Why: ``results/`` keeps what a paper cites, not checkpoints. A run folder (config.json, samples.jsonl,
baselines.jsonl, the fold graphs, the prompt log) lives outside the tree while it runs; ``save`` copies
its evidence into the tree: config.json with every machine path made relative to ``$WORK`` (or
``$KARMA_CACHE_DIR``) or dropped, results.json, timing.json, the report's markdown (its plots are
left out: ``karma report`` draws them again), the per-sample records gzipped (the paired statistics
and every table of docs/evaluation.md are computed from them) and a README saying how to reproduce
the numbers. ``restore`` writes a run folder from that evidence (paths put back for this machine),
which ``karma report --recompute`` reads and ``karma eval`` resumes: a run is its content (data hash,
config, graph hashes), not its paths, and the fold graphs are rebuilt from the data and checked
against their recorded hashes.

    python scripts/run_evidence.py save RUN_DIR DEST --work WORK [--name NAME] [--reproduce CMD]
    python scripts/run_evidence.py restore DEST RUN_DIR --work WORK
    python scripts/run_evidence.py check FOLDER...   # exit 1 naming any file that holds a machine path
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORK_VAR = "$WORK"
CACHE_VAR = "$KARMA_CACHE_DIR"
RECORDS = ("samples.jsonl", "baselines.jsonl")
"""Per-record files kept gzipped (``<name>.gz``)."""
PLAIN = ("results.json", "timing.json")
"""Files kept as they are (after the path check)."""
MACHINE_PATH = re.compile(r"(?<![\w.$~}/-])/(?:work|home|tmp|root|Users|mnt|data|scratch|var|opt|srv)/")
"""An absolute path of a machine (what a committed file must not hold)."""
_IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\([^)]*\.png\)\s*$")
SAME_AS_FOLD = "$FOLD_MEMBERS"
"""A fold graph's ``excluded_videos`` saved as ``"$FOLD_MEMBERS[k]"`` when it is fold k's member list
(as every Karma-MV run records it): the ids are kept once, and ``restore`` writes them back."""


class EvidenceError(Exception):
    """A run folder that cannot be saved as evidence (one line, exit 2)."""


def _cache_root() -> Path:
    sys.path.insert(0, str(REPO))
    from karma.core.paths import cache_root

    return cache_root()


def _portable(value: str, work: Path, cache: Path, where: str) -> str:
    """``value`` with an absolute path under ``work`` / the cache root / the repository made relative."""
    if not value.startswith("/"):
        return value
    path = Path(value)
    for root, name in ((work, WORK_VAR), (cache, CACHE_VAR)):
        if path == root or path.is_relative_to(root):
            rel = path.relative_to(root).as_posix()
            return name if rel == "." else f"{name}/{rel}"
    if path.is_relative_to(REPO):
        return path.relative_to(REPO).as_posix()
    raise EvidenceError(f"{where} holds the machine path {value!r}, outside {work} and the cache root")


def _walk(payload: Any, work: Path, cache: Path, where: str) -> Any:
    if isinstance(payload, dict):
        return {k: _walk(v, work, cache, f"{where}.{k}") for k, v in payload.items()}
    if isinstance(payload, list):
        return [_walk(v, work, cache, f"{where}[{i}]") for i, v in enumerate(payload)]
    if isinstance(payload, str):
        return _portable(payload, work, cache, where)
    return payload


def portable_config(config: dict[str, Any], work: Path, cache: Path) -> dict[str, Any]:
    """config.json without machine paths: the model file's path is dropped (``--model`` names it, and
    its sha256 pins it), every other path is written relative to ``$WORK`` or ``$KARMA_CACHE_DIR``."""
    config = json.loads(json.dumps(config))
    settings = config.get("config", {})
    if settings.get("model"):
        settings.get("backend_options", {}).pop("model_path", None)
        settings.get("backend_options", {}).pop("model", None)
    if isinstance(config.get("model"), dict):
        config["model"].pop("path", None)
    return _walk(config, work, cache, "config.json")


def compact_folds(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with each fold graph's ``excluded_videos`` that repeats ``folds.members[k]`` written as a
    reference to it (a 1,000-video run lists every id twice otherwise)."""
    members = (config.get("folds") or {}).get("members") or []
    for graph in (config.get("graphs") or {}).values():
        if not isinstance(graph, dict):
            continue
        excluded = graph.get("excluded_videos")
        for k, ids in enumerate(members):
            if isinstance(excluded, list) and excluded == ids:
                graph["excluded_videos"] = f"{SAME_AS_FOLD}[{k}]"
                break
    return config


def expand_folds(config: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`compact_folds` (a reference to a fold that is not there is an error)."""
    members = (config.get("folds") or {}).get("members") or []
    for name, graph in (config.get("graphs") or {}).items():
        excluded = graph.get("excluded_videos") if isinstance(graph, dict) else None
        if isinstance(excluded, str) and excluded.startswith(SAME_AS_FOLD + "["):
            k = int(excluded[len(SAME_AS_FOLD) + 1 : -1])
            if not 0 <= k < len(members):
                raise EvidenceError(
                    f"config.json: graphs.{name}.excluded_videos names fold {k}, not recorded"
                )
            graph["excluded_videos"] = list(members[k])
    return config


def _local(payload: Any, work: Path, cache: Path) -> Any:
    if isinstance(payload, dict):
        return {k: _local(v, work, cache) for k, v in payload.items()}
    if isinstance(payload, list):
        return [_local(v, work, cache) for v in payload]
    if isinstance(payload, str):
        for name, root in ((WORK_VAR, work), (CACHE_VAR, cache)):
            if payload == name or payload.startswith(name + "/"):
                return str(root) + payload[len(name) :]
    return payload


def _summary(results: dict[str, Any]) -> list[str]:
    lines = []
    for arm in ("on", "off"):
        overall = results.get("arms", {}).get(arm, {}).get("overall")
        if overall and overall.get("accuracy") is not None:
            lines.append(f"- graph {arm}: {100 * overall['accuracy']:.1f} % of {overall['n']} answered")
    paired = results.get("paired", {}).get("overall")
    if paired:
        lines.append(
            f"- paired: {100 * paired['delta']:+.1f} pp [{100 * paired['ci_low']:+.1f}, {100 * paired['ci_high']:+.1f}]"
            f" over {paired['n_pairs']} pairs, {paired['on_only_correct']} / {paired['off_only_correct']},"
            f" McNemar p {paired['mcnemar_p']:.2g}"
        )
    return lines


def _readme(
    name: str, where: str, config: dict[str, Any], counts: dict[str, int], results: dict | None, how: str
) -> str:
    settings = config.get("config", {})
    command = " ".join(config.get("command", []))
    run = name  # the folder name its report heads the tables with
    rows = [
        f"# {name}",
        "",
        "The evidence of one karma run (scripts/run_evidence.py): its config (machine paths written as",
        f"`{WORK_VAR}/...` or dropped), results.json, the report's markdown and the per-record files gzipped.",
        "The resumable run folder itself lives outside the repository.",
        "",
        f"- command: `{command}`",
        f"- data hash `{config.get('hashes', {}).get('data')}`, model `{config.get('hashes', {}).get('model')}`",
        f"- answer mode {settings.get('answer_mode')}, fact links {settings.get('fact_links')}, "
        f"retriever {settings.get('retriever')}, k {settings.get('k')}, limit {settings.get('limit')}",
        f"- records: {', '.join(f'{n} {k}' for k, n in counts.items())}",
        *(_summary(results) if results else ["- no results.json: the run was saved unfinished"]),
        "",
        "## Reproduce the numbers",
        "",
        "From the saved records (no model answers anything):",
        "",
        "```",
        f"python scripts/run_evidence.py restore {where} $WORK/{run} --work $WORK",
        f"karma report $WORK/{run} --recompute   # results.json, report.md and its plots; no model needed",
        f"python benchmarks/ablation_breakdown.py $WORK/{run} [--pick acc] [--truth WORLD/question_truth.jsonl]",
        "```",
        "",
        "WORLD is the data folder, regenerated byte-identically from its seed (below).",
        "",
        "From scratch, or to continue an unfinished run (the restored folder resumes wherever the data "
        "sit: a run is its content, and the fold graphs are rebuilt and checked against their hashes):",
        "",
        "```",
        how,
        "```",
        "",
    ]
    return "\n".join(rows)


def save(run: Path, dest: Path, work: Path, name: str | None = None, how: str = "") -> Path:
    """Write ``run``'s evidence into ``dest`` (replacing what was there)."""
    if not (run / "config.json").is_file():
        raise EvidenceError(f"{run}: not a karma run folder (no config.json)")
    cache = _cache_root()
    name = name or dest.name
    config = compact_folds(
        portable_config(json.loads((run / "config.json").read_text()), work.resolve(), cache)
    )
    staging = dest.with_name(dest.name + ".saving")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    results = None
    for plain in PLAIN:
        if (run / plain).is_file():
            payload = _walk(json.loads((run / plain).read_text()), work.resolve(), cache, plain)
            (staging / plain).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
            results = payload if plain == "results.json" else results
    counts = {}
    for record in RECORDS:
        if (run / record).is_file():
            raw = (run / record).read_bytes()
            counts[record] = raw.count(b"\n")
            with gzip.GzipFile(staging / f"{record}.gz", "wb", compresslevel=9, mtime=0) as out:
                out.write(raw)
    report = run / "report" / "report.md"
    if report.is_file():
        (staging / "report").mkdir()
        kept = [
            "(plot: `karma report` draws it)" if _IMAGE_LINE.match(line) else line
            for line in report.read_text().splitlines()
        ]
        (staging / "report" / "report.md").write_text("\n".join(kept) + "\n")
    where = dest.resolve().relative_to(REPO).as_posix() if dest.resolve().is_relative_to(REPO) else dest.name
    (staging / "README.md").write_text(_readme(name, where, config, counts, results, how or "(not given)"))
    problems = check(staging)
    if problems:
        shutil.rmtree(staging)
        raise EvidenceError(problems[0])
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return dest


def restore(dest: Path, run: Path, work: Path) -> Path:
    """A run folder at ``run`` from the evidence in ``dest``, its paths put back for this machine."""
    if not (dest / "config.json").is_file():
        raise EvidenceError(f"{dest}: no config.json (not saved by scripts/run_evidence.py)")
    if (run / "samples.jsonl").exists():
        raise EvidenceError(f"{run}: already holds records; restore into a new folder")
    run.mkdir(parents=True, exist_ok=True)
    config = _local(
        expand_folds(json.loads((dest / "config.json").read_text())), work.resolve(), _cache_root()
    )
    (run / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True))
    for plain in PLAIN:
        if (dest / plain).is_file():
            shutil.copyfile(dest / plain, run / plain)
    for record in RECORDS:
        if (dest / f"{record}.gz").is_file():
            (run / record).write_bytes(gzip.decompress((dest / f"{record}.gz").read_bytes()))
    return run


def check(*folders: Path) -> list[str]:
    """One line per text file under ``folders`` that holds a machine path (gzipped records included)."""
    problems = []
    for folder in folders:
        for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            text = raw.decode("utf-8", errors="replace")
            found = MACHINE_PATH.search(text)
            if found:
                line = text.count("\n", 0, found.start()) + 1
                problems.append(
                    f"{path}: line {line} holds a machine path ({text[found.start() : found.start() + 40]!r})"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save", help="copy a run folder's evidence into the repository")
    s.add_argument("run", type=Path)
    s.add_argument("dest", type=Path)
    s.add_argument("--work", type=Path, required=True, help="the folder runs and data live in ($WORK)")
    s.add_argument("--name")
    s.add_argument("--reproduce", default="", help="the command that makes (or continues) the run")
    r = sub.add_parser("restore", help="a resumable run folder from saved evidence")
    r.add_argument("dest", type=Path)
    r.add_argument("run", type=Path)
    r.add_argument("--work", type=Path, required=True)
    c = sub.add_parser("check", help="exit 1 naming files that hold a machine path")
    c.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "save":
            print(save(args.run, args.dest, args.work, args.name, args.reproduce))
        elif args.command == "restore":
            print(restore(args.dest, args.run, args.work))
        else:
            problems = check(*args.folders)
            for line in problems:
                print(line)
            return 1 if problems else 0
    except EvidenceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
