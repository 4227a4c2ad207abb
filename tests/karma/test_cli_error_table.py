"""Every bad input of every command: one line on stderr, the documented exit code, no traceback.

Each row is (command line, expected exit code, a fragment the error must contain). The rows cover the
82 cases of issue 19 (the tracebacks, unclear messages and silent results it lists, plus the plausible
bad inputs of each command: missing, empty, truncated, binary and deeply nested files, wrong types,
out-of-range numbers, files where folders are expected and the reverse, bad backend options, dead
servers) and the bad inputs of the commands added since. Exit codes: 2 bad input or arguments, 1 a
run that failed (dead server, backend errors), 3 ``neo4j status`` of a server that does not answer.

The inputs are the published sample files (data/sample) damaged one way each. Commands run in-process
through typer's CliRunner; no row starts a model or touches the lead's Neo4j server (dead ports only).
A new command adds its rows here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
QA, FEATS = "synthVid001_qa.json", "synthVid001_causal_features.json"


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def p(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every input the rows name, built once (placeholders in the rows: {name})."""
    root = tmp_path_factory.mktemp("cli_errors")
    paths: dict[str, Path] = {}

    def folder(name: str, *files: tuple[str, bytes | str]) -> Path:
        path = root / name
        path.mkdir()
        for fname, content in files:
            target = path / fname
            target.write_bytes(content) if isinstance(content, bytes) else target.write_text(content)
        paths[name] = path
        return path

    qa_text, feats_text = (SAMPLE / QA).read_text(), (SAMPLE / FEATS).read_text()
    good = folder("good")
    for f in SAMPLE.glob("synthVid00*"):
        shutil.copy(f, good / f.name)
    paths["qa"], paths["feats"] = good / QA, good / FEATS
    folder("empty_dir")
    folder("truncated_dir", (QA, qa_text[: len(qa_text) // 2]))
    deep = "[" * 100_000 + "]" * 100_000
    folder("deep_dir", (QA, deep))
    folder("binary_dir", (QA, bytes(range(256)) * 40))
    feats = json.loads(feats_text)

    def with_feature(name: str, value: str) -> None:
        data = json.loads(feats_text)
        data["Scenes"]["scene_002"]["Brightness"] = "__V__"
        folder(name, (QA, qa_text), (FEATS, json.dumps(data).replace('"__V__"', value)))

    with_feature("nan_dir", "NaN")
    with_feature("inf_dir", "Infinity")
    with_feature("huge_dir", "1e308")
    with_feature("negative_dir", "-1e308")
    late = json.loads(qa_text)
    late[0]["current_scene"]["start_time"] = "00:00:09.000"
    folder("start_after_end_dir", (QA, json.dumps(late)), (FEATS, feats_text))
    big = json.loads(qa_text)
    big[0]["questions"][0]["question"] = "why " * 1_300_000
    folder("big_text_dir", (QA, json.dumps(big)), (FEATS, feats_text))
    typed = json.loads(qa_text)
    typed[0]["questions"][0]["options"] = 42
    typed[0]["questions"][1]["answer"] = "z"
    typed[1]["past_scene"] = 7
    folder("wrong_types_dir", (QA, json.dumps(typed)), (FEATS, feats_text))
    folder("features_list_dir", (QA, qa_text), (FEATS, json.dumps([feats])))
    folder("not_json_dir", (QA, "this is not json"))
    folder("empty_file_dir", (QA, ""))
    paths["text_file"] = root / "notes.txt"
    paths["text_file"].write_text("just text\n")
    paths["binary_file"] = root / "blob.yaml"
    paths["binary_file"].write_bytes(bytes(range(256)) * 40)
    paths["deep_file"] = root / "deep_qa.json"
    paths["deep_file"].write_text(deep)
    paths["bad_yaml"] = root / "world.yaml"
    paths["bad_yaml"].write_text("videos: [1, 2\nseed: : :\n")
    paths["wrong_world"] = root / "wrong_world.yaml"
    paths["wrong_world"].write_text("videos: many\nscene_seconds: fast\n")
    paths["not_sqlite"] = root / "cache.sqlite"
    paths["not_sqlite"].write_text("not a database, just text " * 100)
    paths["missing"] = root / "does-not-exist"
    # graphs
    from graph import BuildConfig, build_graph
    from graph.io import save_graph, write_json
    from karma.data import load_dataset

    dataset = load_dataset(good)
    graph = build_graph(dataset.transitions, dataset.features, BuildConfig())
    paths["graph"] = save_graph(graph, root / "graph")
    unmarked = folder("unmarked_graph")
    write_json(graph, unmarked / "graph.json")
    folder("bad_graph_json", ("graph.json", '{"nodes": 3}'), ("karma-complete.json", '{"files": {}}'))
    folder("foreign_files", ("mine.txt", "keep me"))
    paths["bad_graphml"] = root / "bad.graphml"
    paths["bad_graphml"].write_text("<graphml><graph><node id='a'>")
    folder("bad_parquet", ("entities.parquet", "not parquet"), ("relationships.parquet", "not parquet"))
    paths["bad_truth"] = root / "truth.json"
    paths["bad_truth"].write_text('{"edges": "none"}')
    # the neighbours' task files (issue 29), each damaged one way
    tasks = Path(__file__).resolve().parents[1] / "tasks" / "fixtures"
    ws_csv = (tasks / "wildscore" / "data.csv").read_text()
    ws_header, ws_first = ws_csv.splitlines()[:2]

    def wildscore(name: str, text: str) -> None:
        shutil.copytree(tasks / "wildscore", root / name)
        (root / name / "data.csv").write_text(text)
        paths[name] = root / name

    wildscore("ws_header_only", ws_header + "\n")
    wildscore("ws_one", ws_header + "\n" + ws_first + "\n")
    wildscore(
        "ws_etc_absolute", ws_header + "\n" + ws_first.replace("images/syn001.png", "/etc/hostname") + "\n"
    )
    wildscore(
        "ws_etc_relative",
        ws_header + "\n" + ws_first.replace("images/syn001.png", "../../../etc/hostname") + "\n",
    )
    wildscore("ws_huge_field", ws_header + "\n" + ws_first.replace("SYNTHETIC:", "x" * 140_000) + "\n")
    folder("hs_empty", ("HarmonySet_Test.json", "[]"))
    ai = folder("ai_header_only")
    for csv_file in (tasks / "aimoclips").glob("*.csv"):
        (ai / csv_file.name).write_text(csv_file.read_text().splitlines()[0] + "\n")
    with_feature("bool_dir", "true")
    paths["bad_template"] = root / "template.yaml"
    paths["bad_template"].write_text("name: t\nsystem: [unclosed\nuser: : :\n")
    from tests.graph.test_graphrag_fidelity import PLAIN_ENTITIES, PLAIN_RELATIONSHIPS, write_tables

    write_tables(
        root / "graphrag_nan", PLAIN_ENTITIES, {**PLAIN_RELATIONSHIPS, "weight": [7.0, float("nan")]}
    )
    paths["graphrag_nan"] = root / "graphrag_nan"
    # eval runs
    run = folder("run_without_config", ("samples.jsonl", "{}\n"))
    bad_run = folder("corrupt_run", ("config.json", "{ not json"))
    del run, bad_run
    out = {k: str(v) for k, v in paths.items()}
    out["dead_url"] = f"http://127.0.0.1:{_dead_port()}/v1"
    out["dead_bolt"] = f"bolt://127.0.0.1:{_dead_port()}"
    out["tmp"] = str(root)
    server = _ModelsOnly()
    out["models_url"] = server.base_url
    yield out
    server.stop()


class _ModelsOnly:
    """A real HTTP server on 127.0.0.1 that lists one model ("m") and answers every request 503.

    It stands in for an OpenAI-compatible server at the HTTP boundary, so the eval and ask rows reach
    their checks without loading a model; no row gets an answer from it."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "m", "owned_by": "test"}]})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._send(503, {"error": "no model behind this stand-in"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Row:
    """One bad command line."""

    id: str
    """Row name (pytest id)."""
    args: str
    """Command line after ``karma``; ``{name}`` placeholders name inputs of the fixture."""
    code: int
    """Expected exit code."""
    fragment: str
    """Text the error output must contain (case-insensitive)."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables."""


EVAL = (
    "eval --retriever keyword --no-progress --ckg off --limit 1 --backend openai "
    "--backend-opt base_url={models_url} --backend-opt model=m --backend-opt max_retries=0"
)
R = Row
ROWS: list[Row] = [
    # -- the 15 tracebacks of the issue --------------------------------------------------------------
    R("eval-backend-bogus", f"{EVAL} --data {{good}} --out {{tmp}}/r1 --backend bogus", 2, "bogus"),
    R(
        "eval-types-bogus",
        f"{EVAL} --data {{good}} --out {{tmp}}/r2 --types bogus",
        2,
        "unknown question type",
    ),
    R("eval-data-missing", f"{EVAL} --data {{missing}} --out {{tmp}}/r3", 2, "does-not-exist"),
    R("eval-data-empty", f"{EVAL} --data {{empty_dir}} --out {{tmp}}/r4", 2, "empty_dir"),
    R("eval-out-is-file", f"{EVAL} --data {{good}} --out {{text_file}}", 2, "is a file"),
    R(
        "eval-cache-is-folder",
        f"{EVAL} --data {{good}} --out {{tmp}}/r5 --cache {{empty_dir}}",
        2,
        "is a folder",
    ),
    R(
        "eval-cache-not-sqlite",
        f"{EVAL} --data {{good}} --out {{tmp}}/r6 --cache {{not_sqlite}}",
        2,
        "not a karma response cache",
    ),
    R("ask-dead-server", "ask --qa {qa} --no-ckg --backend openai -o base_url={dead_url}", 1, "127.0.0.1"),
    R(
        "graph-build-fold-out-of-range",
        "graph build --data {good} --out {tmp}/g1 --folds 2 --fold 7",
        2,
        "fold must be in 0..1, got 7",
    ),
    R("graph-build-out-is-file", "graph build --data {good} --out {text_file}", 2, "is a file"),
    R("synth-out-is-file", "synth --out {text_file} --videos 2", 2, "notes.txt: file exists"),
    R("synth-world-binary", "synth --out {tmp}/s1 --world {binary_file}", 2, "blob.yaml"),
    R("validate-deep-nesting", "data validate {deep_dir}", 2, "nested deeper than 32"),
    R("stats-deep-nesting", "data stats {deep_dir}", 2, "nested deeper than 32"),
    R(
        "retrieve-unwritable-cache",
        "retrieve --graph {graph} --question 'what is louder' --retriever keyword",
        0,
        "retriever: keyword",
        {"KARMA_CACHE_DIR": "{text_file}"},
    ),
    # -- unclear messages and silent results of the issue --------------------------------------------
    R("stats-only-truncated-file", "data stats {truncated_dir}", 2, QA),
    R(
        "eval-dead-server",
        "eval --data {good} --out {tmp}/r7 --retriever keyword --no-progress --backend openai "
        "--backend-opt base_url={dead_url}",
        1,
        "cannot list models",
    ),
    R(
        "eval-wrong-model-name",
        f"{EVAL} --data {{good}} --out {{tmp}}/r8 --backend-opt model=gpt-4o",
        2,
        "'gpt-4o' is not served",
    ),
    R("validate-nan-feature", "data validate {nan_dir}", 2, "not a finite number"),
    R("validate-inf-feature", "data validate {inf_dir}", 2, "not a finite number"),
    R("validate-huge-feature", "data validate {huge_dir}", 2, "outside the valid range"),
    R("validate-negative-huge-feature", "data validate {negative_dir}", 2, "outside the valid range"),
    R("validate-start-after-end", "data validate {start_after_end_dir}", 2, "is not before end_time"),
    R("validate-5mb-question", "data validate {big_text_dir}", 2, "exceeds the limit"),
    R("graph-build-nan-features", "graph build --data {nan_dir} --out {tmp}/g2", 2, "field brightness"),
    # -- data validate / stats ---------------------------------------------------------------------
    R("validate-missing", "data validate {missing}", 2, "does-not-exist"),
    R("validate-empty-dir", "data validate {empty_dir}", 2, "empty_dir"),
    R("validate-empty-file", "data validate {empty_file_dir}", 2, "file is empty"),
    R("validate-truncated", "data validate {truncated_dir}", 2, "truncated"),
    R("validate-binary", "data validate {binary_dir}", 2, "not utf-8"),
    R("validate-not-json", "data validate {not_json_dir}", 2, "invalid json"),
    R("validate-wrong-types", "data validate {wrong_types_dir}", 2, "options"),
    R("validate-features-list", "data validate {features_list_dir}", 2, "expected one json object"),
    R("validate-deep-file", "data validate {deep_file}", 2, "nested deeper than 32"),
    R("validate-text-file", "data validate {text_file}", 2, "notes.txt"),
    R("validate-task-bogus", "data validate {good} --task bogus", 2, "bogus"),
    R("stats-missing", "data stats {missing}", 2, "does-not-exist"),
    R("stats-empty-dir", "data stats {empty_dir}", 2, "empty_dir"),
    R("stats-binary", "data stats {binary_dir}", 2, QA),
    R("stats-strict-wrong-types", "data stats {wrong_types_dir} --strict", 2, "options"),
    R("stats-empty-file", "data stats {empty_file_dir}", 2, QA),
    # -- synth ---------------------------------------------------------------------------------------
    R("synth-world-missing", "synth --out {tmp}/s2 --world {missing}", 2, "does-not-exist"),
    R("synth-world-bad-yaml", "synth --out {tmp}/s3 --world {bad_yaml}", 2, "world.yaml"),
    R("synth-world-wrong-types", "synth --out {tmp}/s4 --world {wrong_world}", 2, "videos"),
    R("synth-world-is-folder", "synth --out {tmp}/s5 --world {empty_dir}", 2, "empty_dir"),
    R("synth-videos-zero", "synth --out {tmp}/s6 --videos 0", 2, "--videos"),
    R(
        "synth-scene-seconds-text",
        "synth --out {tmp}/s7 --videos 1 --scene-seconds abc",
        2,
        "SECONDS or MIN-MAX",
    ),
    R("synth-scene-seconds-reversed", "synth --out {tmp}/s8 --videos 1 --scene-seconds 5-2", 2, "MIN <= MAX"),
    R("synth-fps-out-of-range", "synth --out {tmp}/s9 --fps 1000", 2, "--fps"),
    # -- extract -------------------------------------------------------------------------------------
    R("extract-missing", "extract {missing} --out {tmp}/e1", 2, "does-not-exist"),
    R("extract-empty-dir", "extract {empty_dir} --out {tmp}/e2", 2, "no video"),
    R("extract-out-is-file", "extract {empty_dir} --out {text_file}", 2, "notes.txt"),
    R("extract-clips-bogus", "extract {empty_dir} --out {tmp}/e3 --clips bogus", 2, "--clips"),
    R("extract-tagger-bogus", "extract {text_file} --out {tmp}/e4 --tagger bogus", 2, "tagger spec"),
    R("extract-not-a-video", "extract {text_file} --out {tmp}/e5", 1, "notes.txt: MediaError"),
    # -- graph ---------------------------------------------------------------------------------------
    R("graph-build-data-missing", "graph build --data {missing} --out {tmp}/g3", 2, "does-not-exist"),
    R("graph-build-data-empty", "graph build --data {empty_dir} --out {tmp}/g4", 2, "empty_dir"),
    R("graph-build-fold-without-folds", "graph build --data {good} --out {tmp}/g5 --fold 0", 2, "--folds"),
    R("graph-build-one-fold", "graph build --data {good} --out {tmp}/g6 --folds 1 --fold 0", 2, "--folds"),
    R(
        "graph-build-bad-threshold",
        "graph build --data {good} --out {tmp}/g7 --threshold brightness",
        2,
        "--threshold",
    ),
    R(
        "graph-build-threshold-not-number",
        "graph build --data {good} --out {tmp}/g8 --threshold Brightness=x",
        2,
        "not a number",
    ),
    R(
        "graph-build-quantile-out-of-range",
        "graph build --data {good} --out {tmp}/g9 --threshold-quantile 2",
        2,
        "quantile",
    ),
    R(
        "graph-build-negative-support",
        "graph build --data {good} --out {tmp}/g10 --min-support -1",
        2,
        "support",
    ),
    R("graph-build-foreign-out", "graph build --data {good} --out {foreign_files}", 2, "mine.txt"),
    R("graph-build-truncated", "graph build --data {truncated_dir} --out {tmp}/g11", 2, "truncated"),
    R("graph-stats-missing", "graph stats {missing}", 2, "does-not-exist"),
    R("graph-stats-empty-dir", "graph stats {empty_dir}", 2, "holds no graph"),
    R("graph-stats-text-file", "graph stats {text_file}", 2, "notes.txt"),
    R("graph-stats-unmarked", "graph stats {unmarked_graph}", 2, "completion marker"),
    R("graph-stats-bad-json", "graph stats {bad_graph_json}", 2, "graph.json"),
    R("graph-stats-binary", "graph stats {binary_file}", 2, "blob.yaml"),
    R("graph-show-unknown-node", "graph show {graph} no-such-node", 2, "no node"),
    R("graph-score-truth-missing", "graph score {graph} --truth {missing}", 2, "does-not-exist"),
    R("graph-score-truth-wrong", "graph score {graph} --truth {bad_truth}", 2, "truth.json"),
    R("graph-score-truth-binary", "graph score {graph} --truth {binary_file}", 2, "blob.yaml"),
    R("graph-export-format-bogus", "graph export {graph} --format bogus --out {tmp}/x1", 2, "--format"),
    R(
        "graph-export-graphml-to-folder",
        "graph export {graph} --format graphml --out {empty_dir}",
        2,
        "is a folder",
    ),
    R(
        "graph-export-json-into-file",
        "graph export {graph} --format json --out {text_file}/g.json",
        2,
        "notes.txt: file exists",
    ),
    R("graph-import-missing", "graph import {missing} --out {tmp}/i1", 2, "does-not-exist"),
    R("graph-import-bad-graphml", "graph import {bad_graphml} --out {tmp}/i2", 2, "bad.graphml"),
    R("graph-import-bad-parquet", "graph import {bad_parquet} --out {tmp}/i3", 2, "entities.parquet"),
    R("graph-import-out-is-file", "graph import {graph} --out {text_file}", 2, "is a file"),
    R("graph-push-dead-server", "graph push {graph} --uri {dead_bolt} --password x12345678", 1, "127.0.0.1"),
    R("graph-push-missing", "graph push {missing} --uri {dead_bolt}", 2, "does-not-exist"),
    R("graph-push-batch-zero", "graph push {graph} --uri {dead_bolt} --batch-size 0", 2, "--batch-size"),
    # -- retrieve ------------------------------------------------------------------------------------
    R(
        "retrieve-graph-missing",
        "retrieve --graph {missing} --question q --retriever keyword",
        2,
        "does-not-exist",
    ),
    R("retrieve-retriever-bogus", "retrieve --graph {graph} --question q --retriever bogus", 2, "bogus"),
    R("retrieve-k-zero", "retrieve --graph {graph} --question q --k 0", 2, "--k"),
    R(
        "retrieve-qa-missing",
        "retrieve --graph {graph} --qa {missing} --retriever keyword",
        2,
        "does-not-exist",
    ),
    R(
        "retrieve-qa-binary",
        "retrieve --graph {graph} --qa {binary_dir}/" + QA + " --retriever keyword",
        2,
        QA,
    ),
    R(
        "retrieve-transition-out-of-range",
        "retrieve --graph {graph} --qa {qa} --transition 999 --retriever keyword",
        2,
        "999",
    ),
    R("retrieve-no-question", "retrieve --graph {graph} --retriever keyword", 2, "question"),
    R(
        "retrieve-style-bogus",
        "retrieve --graph {graph} --question q --retriever keyword --style bogus",
        2,
        "bogus",
    ),
    R(
        "retrieve-unmarked-graph",
        "retrieve --graph {unmarked_graph} --question q --retriever keyword",
        2,
        "completion marker",
    ),
    # -- ask -----------------------------------------------------------------------------------------
    R("ask-qa-missing", "ask --qa {missing} --no-ckg", 2, "does-not-exist"),
    R("ask-qa-truncated", "ask --qa {truncated_dir}/" + QA + " --no-ckg", 2, "truncated"),
    R("ask-transition-out-of-range", "ask --qa {qa} --transition 999 --no-ckg", 2, "999"),
    R("ask-backend-bogus", "ask --qa {qa} --no-ckg --backend bogus", 2, "bogus"),
    R(
        "ask-pipeline-bogus",
        "ask --qa {qa} --no-ckg --pipeline bogus",
        2,
        "'bogus' is not one of 'llm', 'vlm'",
    ),
    R(
        "ask-type-bogus",
        "ask --question 'why?' --option a=x --option b=y --option c=z --option d=w --type bogus --no-ckg",
        2,
        "bogus",
    ),
    R("ask-option-malformed", "ask --question 'why?' --option ax --no-ckg", 2, "--option"),
    R("ask-backend-option-malformed", "ask --qa {qa} --no-ckg -o novalue", 2, "key=value"),
    R("ask-graph-missing", "ask --qa {qa} --graph {missing}", 2, "does-not-exist"),
    R("ask-answer-mode-bogus", "ask --qa {qa} --no-ckg --answer-mode bogus", 2, "is not one of 'generate'"),
    R(
        "ask-wrong-model-name",
        "ask --qa {qa} --no-ckg --backend openai -o base_url={models_url} -o model=nope -o max_retries=0",
        2,
        "'nope' is not served",
    ),
    # -- eval ----------------------------------------------------------------------------------------
    R("eval-pipeline-bogus", f"{EVAL} --data {{good}} --out {{tmp}}/r9 --pipeline bogus", 2, "pipeline"),
    R("eval-ckg-bogus", f"{EVAL} --data {{good}} --out {{tmp}}/r10 --ckg bogus", 2, "bogus"),
    R(
        "eval-retriever-bogus",
        f"{EVAL} --data {{good}} --out {{tmp}}/r11 --retriever bogus",
        2,
        "bogus",
    ),
    R("eval-folds-one", f"{EVAL} --data {{good}} --out {{tmp}}/r12 --folds 1", 2, "folds"),
    R("eval-limit-negative", f"{EVAL} --data {{good}} --out {{tmp}}/r13 --limit -1", 2, "limit"),
    R("eval-videos-unknown", f"{EVAL} --data {{good}} --out {{tmp}}/r14 --videos nope", 2, "nope"),
    R(
        "eval-graph-missing",
        f"{EVAL} --data {{good}} --out {{tmp}}/r15 --graph {{missing}}",
        2,
        "does-not-exist",
    ),
    R(
        "eval-graph-and-whole-corpus",
        f"{EVAL} --data {{good}} --out {{tmp}}/r16 --graph {{graph}} --whole-corpus-graph",
        2,
        "exclude each other",
    ),
    R(
        "eval-template-missing",
        f"{EVAL} --data {{good}} --out {{tmp}}/r17 --template {{missing}}.yaml",
        2,
        "does-not-exist",
    ),
    R(
        "eval-backend-opt-malformed",
        f"{EVAL} --data {{good}} --out {{tmp}}/r18 --backend-opt novalue",
        2,
        "key=value",
    ),
    R("eval-data-truncated", f"{EVAL} --data {{truncated_dir}} --out {{tmp}}/r19", 2, "truncated"),
    R("eval-data-nan", f"{EVAL} --data {{nan_dir}} --out {{tmp}}/r20", 2, "brightness"),
    R(
        "eval-vlm-clips-missing",
        f"{EVAL} --data {{good}} --out {{tmp}}/r21 --pipeline vlm --clips {{missing}}",
        2,
        "does-not-exist",
    ),
    # -- task options (-T) --------------------------------------------------------------------------
    R(
        "eval-task-option-unknown",
        "eval --task wildscore --data {good} --out {tmp}/t1 -T bogus=1",
        2,
        "it takes need_images, expect_full, image_as, columns",
    ),
    R(
        "eval-task-option-bad-value",
        "eval --task wildscore --data {good} --out {tmp}/t2 -T need_images=maybe",
        2,
        "option need_images='maybe'",
    ),
    R(
        "eval-task-option-not-key-value",
        "eval --task wildscore --data {good} --out {tmp}/t3 -T bogus",
        2,
        "key=value",
    ),
    R(
        "eval-karma-mv-task-option",
        "eval --data {good} --out {tmp}/t4 -T kk=1",
        2,
        "task karma-mv has no option 'kk'",
    ),
    R(
        "validate-task-option-unknown",
        "data validate {good} --task harmonyset-mc -T need_images=false",
        2,
        "it takes videos, need_videos, allow_links, mc_field",
    ),
    R("tasks-show-unknown", "tasks show bogus", 2, "unknown task 'bogus'"),
    # -- the task surfaces (issue 29): options a task run cannot honour, the neighbours' damaged files
    R(
        "eval-task-shard",
        "eval --task wildscore --data {ws_header_only} --out {tmp}/t5 --shard 0/2",
        2,
        "--shard",
    ),
    R(
        "eval-task-executor",
        "eval --task wildscore --data {ws_header_only} --out {tmp}/t6 --executor ray",
        2,
        "--executor",
    ),
    R(
        "eval-task-answer-mode",
        "eval --task wildscore --data {ws_header_only} --out {tmp}/t7 --answer-mode loglik",
        2,
        "--answer-mode",
    ),
    # task runs honour --cache / --no-cache (issue 38): a --cache that is a folder is refused, and
    # --no-cache reaches the data check
    R(
        "eval-task-cache-folder",
        "eval --task wildscore --data {ws_one} --out {tmp}/t8 --cache {tmp}",
        2,
        "--cache is a folder",
    ),
    R(
        "eval-task-no-cache",
        "eval --task wildscore --data {ws_header_only} --out {tmp}/t9 --no-cache",
        2,
        "data.csv",
    ),
    R(
        "eval-task-header-only",
        "eval --task wildscore --no-progress --backend openai --backend-opt base_url={models_url} "
        "--backend-opt model=m --data {ws_header_only} --out {tmp}/t10",
        2,
        "data.csv",
    ),
    R("validate-task-header-only", "data validate {ws_header_only} --task wildscore", 2, "data.csv"),
    R("validate-task-image-absolute", "data validate {ws_etc_absolute} --task wildscore", 2, "/etc/hostname"),
    R("validate-task-image-relative", "data validate {ws_etc_relative} --task wildscore", 2, "etc/hostname"),
    R("validate-task-huge-field", "data validate {ws_huge_field} --task wildscore", 2, "data.csv"),
    R(
        "validate-task-harmonyset-empty",
        "data validate {hs_empty} --task harmonyset-mc",
        2,
        "HarmonySet_Test.json",
    ),
    R("validate-task-aimoclips-header-only", "data validate {ai_header_only} --task aimoclips", 2, ".csv"),
    R(
        "eval-task-aimoclips-header-only",
        "eval --task aimoclips --data {ai_header_only} --out {tmp}/t11",
        2,
        ".csv",
    ),
    R("validate-bool-feature", "data validate {bool_dir}", 2, "brightness"),
    R(
        "eval-template-malformed",
        f"{EVAL} --data {{good}} --out {{tmp}}/t12 --template {{bad_template}}",
        2,
        "template.yaml",
    ),
    R(
        "eval-backend-timeout-overflow",
        f"{EVAL} --data {{good}} --out {{tmp}}/t13 --backend-opt timeout_s=1e400",
        2,
        "timeout_s",
    ),
    R("graph-import-nan-weight", "graph import {graphrag_nan} --out {tmp}/i5", 2, "weight"),
    # -- report / merge ------------------------------------------------------------------------------
    R("report-missing", "report {missing}", 2, "does-not-exist"),
    R("report-not-a-run", "report {run_without_config}", 2, "not a karma run directory"),
    R("report-file", "report {text_file}", 2, "notes.txt"),
    R("report-corrupt-config", "report {corrupt_run}", 2, "not valid JSON"),
    R("merge-eval-missing", "merge eval {missing} --out {tmp}/m1", 2, "does-not-exist"),
    # -- neo4j ---------------------------------------------------------------------------------------
    R("neo4j-status-dead", "neo4j status --uri {dead_bolt} --password x12345678", 3, "127.0.0.1"),
    R("neo4j-pull-dead", "neo4j pull {tmp}/n1 --uri {dead_bolt} --password x12345678", 1, "127.0.0.1"),
    R(
        "neo4j-start-remote-bind",
        "neo4j start --listen 0.0.0.0",
        2,
        "loopback",
        {"KARMA_NEO4J_HOME": "{tmp}/neo4j-home"},
    ),
    R(
        "neo4j-start-short-password",
        "neo4j start --password short",
        2,
        "8 characters",
        {"KARMA_NEO4J_HOME": "{tmp}/neo4j-home"},
    ),
    # -- usage errors (typer) ------------------------------------------------------------------------
    R("unknown-command", "frobnicate", 2, "frobnicate"),
    R("eval-without-out", "eval --data {good}", 2, "--out"),
    R("graph-build-k-not-int", "graph build --data {good} --out {tmp}/g12 --folds many", 2, "--folds"),
]


def _run(row: Row, p: dict[str, str]):  # type: ignore[no-untyped-def]
    import shlex

    args = [part.format(**p) for part in shlex.split(row.args)]
    env = {key: value.format(**p) for key, value in row.env.items()}
    old = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        return CliRunner().invoke(app, args)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_gives_one_line_and_the_exit_code(row: Row, p: dict[str, str]) -> None:
    result = _run(row, p)
    output = result.output
    assert result.exc_info is None or isinstance(result.exc_info[1], SystemExit), output
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code == row.code, output
    assert row.fragment.lower() in output.lower(), output
    if row.code == 2 and "Usage:" not in output:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
        assert len(errors) >= 1, output


def test_the_table_covers_the_issue_and_every_command() -> None:
    assert len(ROWS) >= 82 and len({r.id for r in ROWS}) == len(ROWS)
    commands = {
        r.args.split()[0]
        if r.args.split()[0] not in ("data", "graph", "neo4j", "merge", "tasks")
        else " ".join(r.args.split()[:2])
        for r in ROWS
    }
    expected = {"synth", "extract", "retrieve", "ask", "eval", "report", "data validate", "data stats",
                "graph build", "graph stats", "graph show", "graph score", "graph export", "graph import",
                "graph push", "neo4j status", "neo4j pull", "neo4j start", "merge eval", "tasks show"}  # fmt: skip
    assert expected <= commands, expected - commands


def test_debug_shows_the_traceback(p: dict[str, str]) -> None:
    args = ["eval", "--data", p["missing"], "--out", p["tmp"] + "/debug-run"]
    plain = CliRunner().invoke(app, args)
    debug = CliRunner().invoke(app, ["--debug", *args])
    assert plain.exit_code == 2 and plain.exc_info[0] is SystemExit
    assert debug.exc_info is not None and not isinstance(debug.exc_info[1], SystemExit)


@pytest.mark.slow
def test_hybrid_retriever_on_a_read_only_graph_folder(p: dict[str, str]) -> None:
    """The issue's traceback case: a read-only graph folder (the hybrid index now lives in the cache,
    keyed by the graph's hash, never beside the graph). Where tests run as root the mode bits do not bind."""
    graph = Path(p["graph"])
    modes = {f: f.stat().st_mode for f in [graph, *graph.iterdir()]}
    for f in modes:
        f.chmod(0o555 if f.is_dir() else 0o444)
    try:
        row = Row("hybrid", "retrieve --graph {graph} --question 'what makes it louder' --k 3", 0, "facts: 3",
                  {"KARMA_CACHE_DIR": "{tmp}/fresh-cache"})  # fmt: skip
        result = _run(row, p)
    finally:
        for f, mode in modes.items():
            f.chmod(mode)
    assert result.exit_code == 0, result.output
    assert "retriever: hybrid" in result.output and "facts: 3" in result.output
