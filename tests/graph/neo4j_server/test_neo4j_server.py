"""The local server: `karma neo4j start` is idempotent and the Browser answers on 7474; config and
port-conflict handling on throw-away homes."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from graph.neo4j import LocalNeo4j, LocalServerConfig, Neo4jServerError
from graph.neo4j.connection import local_http_port
from karma.cli.main import app

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def local_only(neo4j_settings):
    if os.environ.get("NEO4J_URI"):
        pytest.skip("NEO4J_URI points at an external server; these tests are about the local one")
    return neo4j_settings


def test_neo4j_start_is_idempotent_and_browser_answers(local_only):
    result = CliRunner().invoke(app, ["neo4j", "start"])
    assert result.exit_code == 0, result.output
    assert "already running" in result.output or "ready" in result.output
    base = f"http://127.0.0.1:{local_http_port()}"  # 7474 unless KARMA_NEO4J_HTTP_PORT moves it
    response = httpx.get(f"{base}/browser/", timeout=10)
    assert response.status_code == 200
    assert "<title>Neo4j Browser</title>" in response.text
    discovery = httpx.get(f"{base}/", timeout=10).json()
    assert discovery["neo4j_version"].startswith("5.26") and discovery["neo4j_edition"] == "community"


def test_neo4j_script_status_reports_ready(local_only):
    done = subprocess.run(
        ["bash", "scripts/neo4j.sh", "status"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert '"ready": true' in done.stdout


def test_neo4j_script_without_action_prints_usage():
    done = subprocess.run(["bash", "scripts/neo4j.sh"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "usage: bash scripts/neo4j.sh start|stop|status" in done.stderr


def test_neo4j_conf_binds_loopback_only(tmp_path):
    server = LocalNeo4j(
        LocalServerConfig(home=tmp_path / "home", bolt_port=17687, http_port=17474), log=lambda _: None
    )
    text = server.write_conf().read_text()
    listen = [line for line in text.splitlines() if "address=" in line]
    assert listen and all("=127.0.0.1" in line for line in listen)
    assert "server.bolt.listen_address=127.0.0.1:17687" in text
    assert "server.http.listen_address=127.0.0.1:17474" in text
    assert "server.https.enabled=false" in text and "0.0.0.0" not in text
    assert "server.memory.pagecache.size=512m" in text


def test_neo4j_start_refuses_a_port_taken_by_another_process(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = LocalServerConfig(home=tmp_path / "home", bolt_port=port, http_port=_free_port())
        with pytest.raises(
            Neo4jServerError, match=rf"Bolt port {port} on 127.0.0.1 is already used by another process"
        ):
            LocalNeo4j(config, log=lambda _: None).start(timeout=5)


def test_neo4j_stop_when_not_running_is_a_no_op(tmp_path):
    messages: list[str] = []
    server = LocalNeo4j(LocalServerConfig(home=tmp_path / "home"), log=messages.append)
    assert server.stop() is False
    assert messages == ["[neo4j] not running"]
    assert server.status().running is False
