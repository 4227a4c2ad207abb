"""Clear errors: wrong credentials (real server), server down, bad URI, unsupported server version."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from graph.neo4j import (
    Neo4jAuthError,
    Neo4jSettings,
    Neo4jUnavailableError,
    Neo4jVersionError,
    check_server_version,
    open_driver,
)
from karma.cli.main import app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_neo4j_wrong_password_is_a_clear_auth_error(neo4j_settings):
    wrong = neo4j_settings.model_copy(update={"password": "definitely-not-it"})
    with pytest.raises(Neo4jAuthError) as info:
        open_driver(wrong)
    message = str(info.value)
    assert "refused user 'neo4j'" in message and "NEO4J_PASSWORD" in message
    assert "definitely-not-it" not in message  # never echo a password


def test_neo4j_push_cli_with_unknown_user_exits_with_message(neo4j_settings, tmp_path, graph_factory):
    from graph.io import save_graph

    save_graph(graph_factory(seed=8, n_nodes=8, n_edges=10), tmp_path / "g")
    # A user that does not exist (not 'neo4j', whose failed logins count towards a short lockout).
    result = CliRunner().invoke(
        app, ["graph", "push", str(tmp_path / "g"), "--uri", neo4j_settings.uri, "--user", "karma-nobody"]
    )
    assert result.exit_code == 1
    assert "refused user 'karma-nobody'" in result.output


def test_neo4j_server_down_is_a_clear_unavailable_error():
    settings = Neo4jSettings(uri=f"bolt://127.0.0.1:{_free_port()}")
    with pytest.raises(
        Neo4jUnavailableError, match=r"(?s)no Neo4j answers at bolt://127\.0\.0\.1:\d+.*karma neo4j start"
    ):
        open_driver(settings)


def test_neo4j_status_cli_reports_server_down():
    result = CliRunner().invoke(app, ["neo4j", "status", "--uri", f"bolt://127.0.0.1:{_free_port()}"])
    assert result.exit_code == 3
    assert "no Neo4j answers" in result.output


def test_neo4j_invalid_uri_is_reported():
    with pytest.raises(Neo4jUnavailableError, match=r"invalid Neo4j URI 'http://127\.0\.0\.1:7474'.*bolt://"):
        open_driver(Neo4jSettings(uri="http://127.0.0.1:7474"))


@pytest.mark.parametrize("version", ["5.26.30", "5.0.0", "2025.10.1", "2026.01.0"])
def test_neo4j_supported_versions_pass(version):
    assert check_server_version(version)[0] >= 5


@pytest.mark.parametrize("version", ["4.4.30", "3.5.35"])
def test_neo4j_old_server_version_is_a_clear_error(version):
    with pytest.raises(
        Neo4jVersionError, match=rf"runs Neo4j {version}, but karma needs Neo4j 5\.x or newer"
    ):
        check_server_version(version, "bolt://db:7687")


def test_neo4j_unreadable_version_is_an_error():
    with pytest.raises(Neo4jVersionError, match="cannot read"):
        check_server_version("dev-build")


def test_neo4j_settings_resolution(monkeypatch):
    for name in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE", "KARMA_NEO4J_BOLT_PORT"):
        monkeypatch.delenv(name, raising=False)
    default = Neo4jSettings.resolve()
    assert (default.uri, default.user, default.password) == (
        "bolt://127.0.0.1:7687",
        "neo4j",
        "karma-neo4j-local",
    )
    monkeypatch.setenv("NEO4J_URI", "bolt://db.example:7687")
    monkeypatch.setenv("NEO4J_PASSWORD", "from-env")
    assert Neo4jSettings.resolve().uri == "bolt://db.example:7687"
    assert Neo4jSettings.resolve(password="arg").password == "arg"
    assert Neo4jSettings.resolve().password == "from-env"
