"""Where the local Neo4j may listen, and with which password (checked before anything starts).

The local server listens on loopback only (127.0.0.1) by default: its documented default password
``karma-neo4j-local`` is fine there and nowhere else. Listening on any other address needs an
explicit ``--allow-remote`` (``KARMA_NEO4J_ALLOW_REMOTE=1``) and a password of the user's own
(``--password`` / ``NEO4J_PASSWORD``); Neo4j itself refuses passwords shorter than 8 characters.
"""

from __future__ import annotations

import ipaddress
import socket

from graph.neo4j.connection import LOCAL_PASSWORD
from karma.core.errors import InputError

LOOPBACK = "127.0.0.1"
MIN_PASSWORD_LENGTH = 8
"""Neo4j 5's ``dbms.security.auth_minimum_password_length`` default."""


class Neo4jConfigError(InputError):
    """A listen address or password the local server refuses to start with."""


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_server_settings(listen_address: str, allow_remote: bool, password: str) -> None:
    """Refuse a non-loopback bind without ``allow_remote`` or with the default password, and short passwords."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise Neo4jConfigError(
            f"Neo4j password must have at least {MIN_PASSWORD_LENGTH} characters (got {len(password)})"
        )
    if is_loopback(listen_address):
        return
    if not allow_remote:
        raise Neo4jConfigError(
            f"refusing to bind Neo4j to {listen_address!r}: the local server listens on loopback only "
            "(127.0.0.1) unless you pass --allow-remote (KARMA_NEO4J_ALLOW_REMOTE=1) explicitly"
        )
    if password == LOCAL_PASSWORD:
        raise Neo4jConfigError(
            f"refusing to bind Neo4j to {listen_address!r} with the documented default password; "
            "set your own with --password or NEO4J_PASSWORD"
        )


def advertised_address(listen_address: str) -> str:
    """The address clients are told to use: loopback stays 127.0.0.1, a wildcard becomes the host name."""
    if is_loopback(listen_address):
        return LOOPBACK
    if listen_address in ("0.0.0.0", "::", "[::]"):
        return socket.gethostname()
    return listen_address
