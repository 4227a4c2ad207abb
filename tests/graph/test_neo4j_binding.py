"""The local Neo4j listens on loopback unless asked otherwise, with a password the user may choose.

Only configuration is exercised (rendered neo4j.conf, the checks before a start); no server is
started or stopped here, so the Neo4j the test suite shares keeps running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from graph.neo4j.binding import Neo4jConfigError, advertised_address, check_server_settings, is_loopback
from graph.neo4j.connection import LOCAL_PASSWORD
from graph.neo4j.server import LocalNeo4j, LocalServerConfig
from karma.cli.main import app


def _conf(tmp_path: Path, **changes: object) -> dict[str, str]:
    config = LocalServerConfig(home=tmp_path / "home", bolt_port=17687, http_port=17474, **changes)
    text = LocalNeo4j(config, log=lambda _: None).write_conf().read_text()
    assert "${" not in text
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_default_conf_is_loopback_only(tmp_path: Path) -> None:
    conf = _conf(tmp_path)
    for key in ("server.default_listen_address", "server.default_advertised_address"):
        assert conf[key] == "127.0.0.1"
    assert conf["server.bolt.listen_address"] == "127.0.0.1:17687"
    assert conf["server.http.listen_address"] == "127.0.0.1:17474"
    assert conf["dbms.security.auth_enabled"] == "true"


def test_remote_bind_needs_allow_remote_and_an_own_password(tmp_path: Path) -> None:
    with pytest.raises(Neo4jConfigError, match="unless you pass --allow-remote"):
        _conf(tmp_path, listen_address="0.0.0.0")
    with pytest.raises(Neo4jConfigError, match="documented default password"):
        _conf(tmp_path, listen_address="0.0.0.0", allow_remote=True)
    conf = _conf(tmp_path, listen_address="0.0.0.0", allow_remote=True, password="my-own-secret")
    assert conf["server.bolt.listen_address"] == "0.0.0.0:17687"
    assert conf["server.bolt.advertised_address"] == f"{advertised_address('0.0.0.0')}:17687"


def test_start_refuses_before_touching_the_home(tmp_path: Path) -> None:
    home = tmp_path / "untouched"
    config = LocalServerConfig(home=home, listen_address="192.168.1.5", bolt_port=17687, http_port=17474)
    with pytest.raises(Neo4jConfigError, match=r"192\.168\.1\.5"):
        LocalNeo4j(config, log=lambda _: None).start(timeout=1)
    assert not home.exists()


def test_password_comes_from_the_option_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KARMA_NEO4J_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    assert LocalServerConfig.from_env().password == LOCAL_PASSWORD  # the local default still works
    monkeypatch.setenv("NEO4J_PASSWORD", "from-the-env-1")
    assert LocalServerConfig.from_env().password == "from-the-env-1"
    short = CliRunner().invoke(app, ["neo4j", "start", "--password", "short"])
    assert short.exit_code == 2 and "at least 8 characters (got 5)" in short.output  # the option wins
    remote = CliRunner().invoke(
        app, ["neo4j", "start", "--listen", "10.0.0.7", "--password", "long-enough-1"]
    )
    assert remote.exit_code == 2 and "--allow-remote" in remote.output
    assert not (tmp_path / "home").exists()


def test_loopback_addresses() -> None:
    assert all(is_loopback(a) for a in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(a) for a in ("0.0.0.0", "::", "10.0.0.1", "example.org"))
    check_server_settings("127.0.0.1", False, LOCAL_PASSWORD)  # the documented local case passes
