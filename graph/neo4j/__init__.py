"""Neo4j for karma: a local server without Docker, idempotent push, pull, and a Cypher-backed GraphStore.

The ``neo4j`` driver is imported only inside the functions that talk to a server, so importing this
package stays cheap.
"""

from graph.neo4j.connection import (
    LOCAL_PASSWORD,
    Neo4jSettings,
    check_server_version,
    open_driver,
    server_version,
)
from graph.neo4j.errors import (
    GraphPushError,
    KarmaNeo4jError,
    Neo4jAuthError,
    Neo4jServerError,
    Neo4jUnavailableError,
    Neo4jVersionError,
)
from graph.neo4j.server import LocalNeo4j, LocalServerConfig, ServerStatus

__all__ = [
    "LOCAL_PASSWORD",
    "GraphPushError",
    "KarmaNeo4jError",
    "LocalNeo4j",
    "LocalServerConfig",
    "Neo4jAuthError",
    "Neo4jServerError",
    "Neo4jSettings",
    "Neo4jUnavailableError",
    "Neo4jVersionError",
    "ServerStatus",
    "check_server_version",
    "open_driver",
    "server_version",
]
