"""Errors karma raises around Neo4j, each with a message that tells the user what to do next."""

from __future__ import annotations


class KarmaNeo4jError(RuntimeError):
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
