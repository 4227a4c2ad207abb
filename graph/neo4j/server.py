"""A real local Neo4j 5.26 LTS Community server without Docker: installed from Maven Central, run on Java.

Neo4j is neither on PyPI nor in Debian, so karma assembles it: ``resources/pom.xml`` (package data
beside this module) lists the server, Bolt and the Browser; Maven copies their runtime jars into
``<home>/lib``; the configuration is rendered from ``resources/neo4j.conf.template``; ``java ... CommunityEntryPoint`` runs it
bound to 127.0.0.1. Everything lives in a git-ignored home (``.cache/neo4j/home`` by default, or
``KARMA_NEO4J_HOME``); Maven's own cache (``~/.m2``) is reused, so a fresh clone on the same machine
installs from disk in seconds.

Also runnable as ``python -m graph.neo4j start|stop|status|install`` (what scripts/neo4j.sh does).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from graph.neo4j.binding import LOOPBACK, advertised_address, check_server_settings
from graph.neo4j.connection import (
    DEFAULT_USER,
    LOCAL_PASSWORD,
    local_bolt_port,
    local_http_port,
)
from graph.neo4j.errors import Neo4jServerError
from karma.core.atomic import atomic_write_text
from karma.core.paths import cache_dir, package_data, project_root

RESOURCES = package_data("graph.neo4j", "resources")
"""Holds pom.xml and neo4j.conf.template (package data: found in a checkout and an installed wheel)."""


def _default_home() -> Path:
    """``.cache/neo4j/home`` in a source checkout (git-ignored); karma's cache root otherwise."""
    root = project_root()
    return root / ".cache" / "neo4j" / "home" if root is not None else cache_dir("neo4j") / "home"


MIN_JAVA = 17
# JVM flags: G1 (Neo4j's recommended collector) with a fixed heap (-Xms = -Xmx, set below: a heap
# that starts small leaves G1 a young generation of about 20 MB and bulk pushes then spend a third of
# their time in young collections), plus the module openings Neo4j 5 needs on Java 17 (the official
# launcher passes the same ones).
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
]
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class LocalServerConfig(BaseModel):
    """Where and how the local server runs."""

    home: Path
    """NEO4J_HOME: lib/, conf/, data/, logs/, run/ (git-ignored)."""
    bolt_port: int = 7687
    """Bolt port on 127.0.0.1."""
    http_port: int = 7474
    """HTTP port on 127.0.0.1 (Neo4j Browser at /browser/)."""
    heap: str = "1g"
    """Maximum Java heap (-Xmx)."""
    pagecache: str = "512m"
    """Neo4j page cache size."""
    password: str = LOCAL_PASSWORD
    """Password set for user ``neo4j`` on first start."""
    listen_address: str = LOOPBACK
    """Address Bolt and HTTP listen on; anything but loopback needs ``allow_remote`` (graph.neo4j.binding)."""
    allow_remote: bool = False
    """The user asked explicitly for a non-loopback ``listen_address``."""

    @classmethod
    def from_env(cls) -> LocalServerConfig:
        """Defaults, overridden by KARMA_NEO4J_HOME / _BOLT_PORT / _HTTP_PORT / _HEAP / _PAGECACHE and
        NEO4J_PASSWORD."""
        env = os.environ
        return cls(
            home=Path(env.get("KARMA_NEO4J_HOME") or _default_home()).resolve(),
            bolt_port=local_bolt_port(),
            http_port=local_http_port(),
            heap=env.get("KARMA_NEO4J_HEAP", "1g"),
            pagecache=env.get("KARMA_NEO4J_PAGECACHE", "512m"),
            password=env.get("NEO4J_PASSWORD") or LOCAL_PASSWORD,
            listen_address=env.get("KARMA_NEO4J_LISTEN") or LOOPBACK,
            allow_remote=env.get("KARMA_NEO4J_ALLOW_REMOTE", "").strip().lower() in ("1", "true", "yes"),
        )

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/"


class ServerStatus(BaseModel):
    """What ``karma neo4j status`` reports."""

    installed_version: str | None
    """Neo4j version whose jars are in <home>/lib, or None when not installed."""
    running: bool
    """A karma-started Neo4j process for this home is alive."""
    ready: bool
    """It answers on Bolt and HTTP."""
    pid: int | None
    """Process id when running."""
    home: str
    """The server's home folder."""
    bolt_uri: str
    """Where Bolt listens."""
    browser_url: str
    """Where Neo4j Browser is served."""


def pinned_version() -> str:
    """The Neo4j version pinned in graph/neo4j/resources/pom.xml."""
    text = (RESOURCES / "pom.xml").read_text()
    match = re.search(r"<neo4j.version>([^<]+)</neo4j.version>", text)
    if not match:
        raise Neo4jServerError(f"{RESOURCES / 'pom.xml'}: no <neo4j.version> property")
    return match.group(1).strip()


def _port_open(port: int, timeout: float = 0.5) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def find_java() -> str:
    """Path of a Java >= 17 (JAVA_HOME first, then PATH); raises with a fix when there is none."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise Neo4jServerError(
            "Java not found: Neo4j 5.26 needs Java 17 or 21 (Debian: `apt-get install openjdk-17-jre-headless`),"
            " or set JAVA_HOME."
        )
    out = subprocess.run([candidate, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)', out)
    if not match or int(match.group(1)) < MIN_JAVA:
        raise Neo4jServerError(f"{candidate} is not Java {MIN_JAVA}+ ({out.strip()[:120]!r}); set JAVA_HOME")
    return candidate


class LocalNeo4j:
    """Install, start, stop and inspect karma's local Neo4j server. Every operation is idempotent."""

    def __init__(self, config: LocalServerConfig | None = None, log: Log = _stderr) -> None:
        self.config = config or LocalServerConfig.from_env()
        self.log = log

    # -- paths ----------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.config.home

    @property
    def lib(self) -> Path:
        return self.home / "lib"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "karma-neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def _marker(self) -> Path:
        return self.lib / ".karma-install.json"

    @property
    def _password_marker(self) -> Path:
        return self.home / "data" / ".karma-password-set"

    # -- install --------------------------------------------------------------------------------
    def _install_key(self) -> dict[str, str]:
        pom = (RESOURCES / "pom.xml").read_bytes()
        return {"neo4j_version": pinned_version(), "pom_sha256": hashlib.sha256(pom).hexdigest()}

    def installed_version(self) -> str | None:
        """The version installed in <home>/lib, or None."""
        try:
            return json.loads(self._marker.read_text())["neo4j_version"]
        except (OSError, ValueError, KeyError):
            return None

    def is_installed(self) -> bool:
        """Installed from the current pom.xml (a changed pom means a reinstall)."""
        try:
            return json.loads(self._marker.read_text()) == self._install_key()
        except (OSError, ValueError):
            return False

    def install(self) -> None:
        """Copy Neo4j's runtime jars from Maven Central (or ~/.m2) into <home>/lib; no-op when done."""
        if self.is_installed():
            return
        mvn = shutil.which("mvn")
        if not mvn:
            raise Neo4jServerError(
                "Maven (mvn) not found: it assembles Neo4j from Maven Central (Debian: `apt-get install maven`)."
            )
        version = pinned_version()
        self.home.mkdir(parents=True, exist_ok=True)
        staging = self.home / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        maven_log = self.home / "maven.log"
        self.log(
            f"[neo4j] installing Neo4j {version} Community + Browser from Maven Central into {self.lib} "
            f"(first use: downloads about 140 MB into ~/.m2, a few minutes; log: {maven_log})"
        )
        cmd = [
            mvn,
            "-B",
            "-f",
            str(RESOURCES / "pom.xml"),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={staging}",
        ]
        with maven_log.open("w") as out:
            rc = subprocess.run(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False
            )
        if rc.returncode != 0:
            tail = "\n".join(maven_log.read_text(errors="replace").splitlines()[-25:])
            raise Neo4jServerError(
                f"Maven could not assemble Neo4j {version} (exit {rc.returncode}):\n{tail}"
            )
        if not any(staging.glob("neo4j-server-*.jar")) or not any(staging.glob("neo4j-browser-*.jar")):
            raise Neo4jServerError(f"Maven finished but {staging} lacks neo4j-server or neo4j-browser jars")
        atomic_write_text(staging / ".karma-install.json", json.dumps(self._install_key()))
        shutil.rmtree(self.lib, ignore_errors=True)
        staging.rename(self.lib)
        self.log(f"[neo4j] installed {len(list(self.lib.glob('*.jar')))} jars")

    def write_conf(self) -> Path:
        """Render neo4j/neo4j.conf.template into <home>/conf/neo4j.conf (ports, memory)."""
        check_server_settings(self.config.listen_address, self.config.allow_remote, self.config.password)
        template = string.Template((RESOURCES / "neo4j.conf.template").read_text())
        text = template.substitute(
            BOLT_PORT=self.config.bolt_port,
            HTTP_PORT=self.config.http_port,
            PAGECACHE=self.config.pagecache,
            LISTEN=self.config.listen_address,
            ADVERTISED=advertised_address(self.config.listen_address),
        )
        conf = self.home / "conf" / "neo4j.conf"
        atomic_write_text(conf, text)
        return conf

    # -- process --------------------------------------------------------------------------------
    def _pid_alive(self) -> int | None:
        """The pid from the pid file when that process is still karma's Neo4j for this home."""
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        args = [a.decode(errors="replace") for a in cmdline]
        if ENTRY_POINT in args and f"--home-dir={self.home}" in args:
            return pid
        return None

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.console_log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no console log)"

    def is_ready(self) -> bool:
        """Bolt accepts connections and the HTTP endpoint answers."""
        return _port_open(self.config.bolt_port) and _http_ok(f"http://127.0.0.1:{self.config.http_port}/")

    def status(self) -> ServerStatus:
        pid = self._pid_alive()
        return ServerStatus(
            installed_version=self.installed_version(),
            running=pid is not None,
            ready=pid is not None and self.is_ready(),
            pid=pid,
            home=str(self.home),
            bolt_uri=self.config.bolt_uri,
            browser_url=self.config.browser_url,
        )

    def start(self, timeout: float = 180.0) -> ServerStatus:
        """Start (installing first if needed) and wait until Bolt and the Browser answer."""
        check_server_settings(self.config.listen_address, self.config.allow_remote, self.config.password)
        pid = self._pid_alive()
        if pid is not None:
            self._wait_ready(pid, None, timeout)
            self.log(
                f"[neo4j] already running (pid {pid}) at {self.config.bolt_uri}; Browser: {self.config.browser_url}"
            )
            return self.status()
        for port, name in ((self.config.bolt_port, "Bolt"), (self.config.http_port, "HTTP")):
            if _port_open(port):
                raise Neo4jServerError(
                    f"cannot start Neo4j: {name} port {port} on 127.0.0.1 is already used by another process "
                    f"(not karma's server for {self.home}). Stop it, or use other ports via "
                    "KARMA_NEO4J_BOLT_PORT / KARMA_NEO4J_HTTP_PORT (and NEO4J_URI for clients)."
                )
        java = find_java()
        self.install()
        self.write_conf()
        for sub in ("data", "logs", "run"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        cmd = [
            java,
            f"-Xms{self.config.heap}",
            f"-Xmx{self.config.heap}",
            *JVM_FLAGS,
            "-cp",
            f"{self.lib}/*",
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.home / 'conf'}",
            "--console-mode",
        ]
        started = time.monotonic()
        with self.console_log.open("a") as out:
            # Own session: the server outlives this command and a Ctrl-C in the caller's terminal.
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        atomic_write_text(self.pid_file, str(proc.pid))
        self.log(f"[neo4j] starting Neo4j {pinned_version()} (pid {proc.pid}, log {self.console_log})")
        self._wait_ready(proc.pid, proc, timeout)
        self._ensure_password()
        self.log(
            f"[neo4j] ready in {time.monotonic() - started:.0f} s: {self.config.bolt_uri} "
            f"(user {DEFAULT_USER!r}); Browser: {self.config.browser_url}"
        )
        return self.status()

    def _wait_ready(self, pid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise Neo4jServerError(
                    f"Neo4j exited with code {proc.returncode} while starting; last lines of "
                    f"{self.console_log}:\n{self._log_tail()}"
                )
            if proc is None and self._pid_alive() is None:
                raise Neo4jServerError(
                    f"Neo4j (pid {pid}) exited; see {self.console_log}:\n{self._log_tail()}"
                )
            if self.is_ready():
                return
            time.sleep(1.0)
        raise Neo4jServerError(
            f"Neo4j (pid {pid}) did not answer on ports {self.config.bolt_port}/{self.config.http_port} within "
            f"{timeout:.0f} s; it is left running (stop it with `karma neo4j stop`). Log tail:\n{self._log_tail()}"
        )

    def _ensure_password(self) -> None:
        """Replace the expired default password ``neo4j`` by the configured one, once per database.

        Done over Bolt with ``ALTER CURRENT USER`` (what Neo4j Browser does on first login), so no
        admin tool is needed. The marker avoids failed logins that count towards Neo4j's lockout.
        """
        import neo4j
        from neo4j import exceptions as nx

        if self._password_marker.exists():
            return
        uri, new = self.config.bolt_uri, self.config.password
        try:
            with neo4j.GraphDatabase.driver(uri, auth=(DEFAULT_USER, "neo4j")) as driver:
                driver.execute_query(
                    "ALTER CURRENT USER SET PASSWORD FROM $old TO $new",
                    old="neo4j",
                    new=new,
                    database_="system",
                )
            self.log(f"[neo4j] set the initial password of user {DEFAULT_USER!r} (see docs/neo4j.md)")
        except nx.AuthError:
            # Already changed earlier (e.g. by hand): accept it when the configured password works.
            try:
                with neo4j.GraphDatabase.driver(uri, auth=(DEFAULT_USER, new)) as driver:
                    driver.verify_connectivity()
            except nx.AuthError as exc:
                raise Neo4jServerError(
                    f"the server in {self.home} has a password for {DEFAULT_USER!r} other than the one karma "
                    "was given (NEO4J_PASSWORD or the default in docs/neo4j.md). Set NEO4J_PASSWORD to it, or "
                    f"stop the server and delete {self.home / 'data'} to start with an empty database."
                ) from exc
        atomic_write_text(self._password_marker, "1\n")

    def stop(self, timeout: float = 90.0) -> bool:
        """SIGTERM and wait for a clean shutdown; True when a server was stopped, False when none ran."""
        pid = self._pid_alive()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            self.log("[neo4j] not running")
            return False
        self.log(f"[neo4j] stopping (SIGTERM to pid {pid})")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pid_alive() is None:
                self.pid_file.unlink(missing_ok=True)
                self.log("[neo4j] stopped")
                return True
            time.sleep(0.5)
        # A server that ignores SIGTERM this long is wedged: do not leave it holding the ports.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        raise Neo4jServerError(f"Neo4j (pid {pid}) did not stop within {timeout:.0f} s of SIGTERM; killed it")


def main(argv: list[str] | None = None) -> int:
    """``python -m graph.neo4j start|stop|status|install`` (used by scripts/neo4j.sh)."""
    parser = argparse.ArgumentParser(prog="neo4j.sh", description="karma's local Neo4j server (no Docker).")
    parser.add_argument("action", choices=["start", "stop", "status", "install"])
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for start/stop")
    args = parser.parse_args(argv)
    server = LocalNeo4j()
    try:
        if args.action == "start":
            server.start(timeout=args.timeout)
        elif args.action == "stop":
            server.stop(timeout=args.timeout)
        elif args.action == "install":
            server.install()
            _stderr(f"[neo4j] Neo4j {server.installed_version()} installed in {server.home}")
        else:
            status = server.status()
            print(status.model_dump_json(indent=2))
            return 0 if status.ready else 3
    except Neo4jServerError as exc:
        _stderr(f"[neo4j] error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
