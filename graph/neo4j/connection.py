"""Where karma's Neo4j is and how to log in, and a driver that fails with clear errors.

Resolution order for every setting: explicit argument (``--uri/--user/--password/--database``), then
the environment (``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``), then the
defaults of the local server that ``karma neo4j start`` runs.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel

from graph.neo4j.errors import Neo4jAuthError, Neo4jUnavailableError, Neo4jVersionError

if TYPE_CHECKING:
    import neo4j

LOCAL_PASSWORD = "karma-neo4j-local"
"""Password karma gives the local server's ``neo4j`` user on its first start (Neo4j wants >= 8 chars)."""
DEFAULT_USER = "neo4j"
DEFAULT_DATABASE = "neo4j"
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
"""URI schemes karma accepts (the driver's HTTP preview is not used)."""
MIN_MAJOR_VERSION = 5
"""Oldest Neo4j major version karma supports (5.26 LTS is the one it is tested on; 2025.x also works)."""


def local_bolt_port() -> int:
    """Bolt port of the local server (``KARMA_NEO4J_BOLT_PORT``, default 7687)."""
    return int(os.environ.get("KARMA_NEO4J_BOLT_PORT", "7687"))


def local_http_port() -> int:
    """HTTP port of the local server and its Browser (``KARMA_NEO4J_HTTP_PORT``, default 7474)."""
    return int(os.environ.get("KARMA_NEO4J_HTTP_PORT", "7474"))


class Neo4jSettings(BaseModel):
    """How to reach a Neo4j database."""

    uri: str
    """Bolt URI, e.g. ``bolt://127.0.0.1:7687`` or ``neo4j+s://host``."""
    user: str = DEFAULT_USER
    """User name."""
    password: str = LOCAL_PASSWORD
    """Password (never printed)."""
    database: str = DEFAULT_DATABASE
    """Database name (Community edition has one user database, ``neo4j``)."""

    @classmethod
    def resolve(
        cls,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
    ) -> Neo4jSettings:
        """Arguments first, then ``NEO4J_*`` environment variables, then the local server's defaults."""
        env = os.environ
        return cls(
            uri=uri or env.get("NEO4J_URI") or f"bolt://127.0.0.1:{local_bolt_port()}",
            user=user or env.get("NEO4J_USER") or DEFAULT_USER,
            password=password or env.get("NEO4J_PASSWORD") or LOCAL_PASSWORD,
            database=database or env.get("NEO4J_DATABASE") or DEFAULT_DATABASE,
        )

    def browser_url(self) -> str:
        """The Neo4j Browser for this server: port 7474 for the local one, else a best guess by host."""
        host = re.sub(r"^[a-z+]+://", "", self.uri).split("/")[0].rsplit(":", 1)[0] or "127.0.0.1"
        if host in {"127.0.0.1", "localhost"}:
            return f"http://{host}:{local_http_port()}/browser/"
        return f"http://{host}:7474/browser/"


def parse_version(text: str) -> tuple[int, int]:
    """``"5.26.30"`` -> (5, 26); calendar versions ``"2025.10.1"`` -> (2025, 10)."""
    match = re.match(r"^\s*(\d+)\.(\d+)", text)
    if not match:
        raise Neo4jVersionError(f"cannot read the Neo4j server version {text!r}")
    return int(match.group(1)), int(match.group(2))


def check_server_version(version: str, uri: str = "the server") -> tuple[int, int]:
    """Raise Neo4jVersionError unless the server is Neo4j 5.x or a calendar-versioned release (2025+)."""
    major, minor = parse_version(version)
    if major < MIN_MAJOR_VERSION:
        raise Neo4jVersionError(
            f"{uri} runs Neo4j {version}, but karma needs Neo4j {MIN_MAJOR_VERSION}.x or newer "
            "(5.26 LTS is tested; `karma neo4j start` runs one locally). Upgrade the server or point "
            "--uri / NEO4J_URI at a newer one."
        )
    return major, minor


def open_driver(settings: Neo4jSettings, check_version: bool = True) -> neo4j.Driver:
    """A connected driver; raises Neo4jUnavailableError / Neo4jAuthError / Neo4jVersionError.

    The caller closes it. Connectivity is checked here so that every command fails early with one
    clear message instead of deep inside a transaction.
    """
    import neo4j
    from neo4j import exceptions as nx

    scheme = settings.uri.split("://", 1)[0] if "://" in settings.uri else ""
    if scheme not in BOLT_SCHEMES:
        raise Neo4jUnavailableError(
            f"invalid Neo4j URI {settings.uri!r}: use a Bolt URI ({', '.join(s + '://' for s in BOLT_SCHEMES)}), "
            "e.g. bolt://127.0.0.1:7687"
        )
    try:
        driver = neo4j.GraphDatabase.driver(
            settings.uri,
            auth=(settings.user, settings.password),
            connection_timeout=10,
            max_transaction_retry_time=10,
            notifications_min_severity="OFF",
        )
    except (ValueError, nx.ConfigurationError) as exc:
        raise Neo4jUnavailableError(f"invalid Neo4j URI {settings.uri!r}: {exc}") from exc
    try:
        driver.verify_connectivity()
        if check_version:
            records, _, _ = driver.execute_query(
                "CALL dbms.components() YIELD name, versions RETURN versions[0] AS version",
                database_="system",
                routing_=neo4j.RoutingControl.READ,
            )
            check_server_version(records[0]["version"], settings.uri)
    except nx.AuthError as exc:
        driver.close()
        raise Neo4jAuthError(
            f"Neo4j at {settings.uri} refused user {settings.user!r} with the given password "
            f"({exc.message or exc}). Pass --user/--password or set NEO4J_USER/NEO4J_PASSWORD; the local "
            f"server started by `karma neo4j start` uses user {DEFAULT_USER!r}, password {LOCAL_PASSWORD!r}."
        ) from exc
    except (nx.ServiceUnavailable, nx.SessionExpired, OSError) as exc:
        driver.close()
        raise Neo4jUnavailableError(
            f"no Neo4j answers at {settings.uri} ({exc}). Start the local one with `karma neo4j start` "
            "(or `bash scripts/neo4j.sh start`), or pass --uri / set NEO4J_URI to your server."
        ) from exc
    except Neo4jVersionError:
        driver.close()
        raise
    return driver


def server_version(driver: neo4j.Driver) -> str:
    """The server's Neo4j version string (e.g. ``5.26.30``)."""
    import neo4j

    records, _, _ = driver.execute_query(
        "CALL dbms.components() YIELD versions RETURN versions[0] AS version",
        database_="system",
        routing_=neo4j.RoutingControl.READ,
    )
    return str(records[0]["version"])
