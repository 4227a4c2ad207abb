"""Errors karma raises around Neo4j, each with a message that tells the user what to do next.

They are :class:`karma.core.errors.RunError` s (still RuntimeErrors), so every command prints them
as one line with exit code 1 rather than as an "internal error".
"""

from __future__ import annotations

from karma.core.errors import RunError


class KarmaNeo4jError(RunError):
    """Base class: anything that went wrong talking to, or running, Neo4j."""


class Neo4jUnavailableError(KarmaNeo4jError):
    """No Neo4j answers at the given URI (server down, wrong host or port)."""


class Neo4jAuthError(KarmaNeo4jError):
    """The server refused the user name or password."""


class Neo4jVersionError(KarmaNeo4jError):
    """The server's Neo4j version is one karma does not support."""


class Neo4jServerError(KarmaNeo4jError):
    """The local server managed by karma could not be installed, started or stopped."""


class GraphPushError(KarmaNeo4jError):
    """The graph cannot be pushed as it is (e.g. an edge whose endpoint is not a node)."""


class Neo4jGraphMismatchError(KarmaNeo4jError):
    """The database holds another graph than the one the command reads (``neo4j-hybrid``)."""

    def __init__(self, message: str, held: str, wanted: str) -> None:
        super().__init__(message)
        self.held = held
        """content_hash() of the graph in the database."""
        self.wanted = wanted
        """content_hash() of the graph the command reads."""
