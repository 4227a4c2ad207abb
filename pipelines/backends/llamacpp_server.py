"""Start and stop a real llama.cpp OpenAI-compatible server on loopback: ``python -m llama_cpp.server``
(``LlamaServer``, installed by scripts/setup.sh) or llama.cpp's C++ ``llama-server`` with parallel slots
(``NativeLlamaServer``, built on demand by scripts/build_llama_server.sh).

Used by the openai backend's tests, by evaluation benchmarks, and by anyone who wants the embedded
model behind HTTP::

    with LlamaServer(n_ctx=2048) as server:
        backend = get_backend("openai", base_url=server.base_url)

The server binds 127.0.0.1 on a free port, is ready when ``/v1/models`` answers, and is stopped
with SIGTERM (then SIGKILL after a grace period). Its output goes to a log file whose tail is
quoted if it fails to start. On Linux the server is also told to end when the thread that started it
ends (``PR_SET_PDEATHSIG``), so a test runner or a ``karma`` command killed with SIGKILL leaves no
orphaned server behind; start it from a thread that lives as long as you need the server.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from karma.core.errors import InputError, RunError
from pipelines.models import smollm2_gguf_path


def _end_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when the parent thread dies.

    ``start_new_session`` keeps a Ctrl-C of the runner away from the server (stop() ends it), but it
    also means a SIGKILL of the runner would leave the server running forever on its port.
    """
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


class LlamaServerError(RunError):
    """The server did not come up; the message quotes its log."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """A ``llama_cpp.server`` child process serving one GGUF on 127.0.0.1."""

    label = "llama_cpp.server"
    """How errors name this server."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        model_alias: str | None = None,
        startup_timeout_s: float = 120.0,
        extra_args: list[str] | None = None,
        python: str | None = None,
    ):
        """Describe the server; ``start()`` (or ``with``) launches it.

        model_path: GGUF to serve; default: the packaged SmolLM2-135M-Instruct.
        port: TCP port on 127.0.0.1; default: a free one.
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation; default: llama.cpp's choice.
        model_alias: the model name the server reports; default: the GGUF file stem.
        startup_timeout_s: how long to wait for ``/v1/models``.
        extra_args: further ``llama_cpp.server`` options, e.g. ``["--n_batch", "256"]``.
        python: interpreter to run the server with; default: this one.
        """
        self.model_path = Path(model_path) if model_path else smollm2_gguf_path()
        self.host = "127.0.0.1"  # loopback only, always
        self.port = port or free_port(self.host)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.model_alias = model_alias or self.model_path.stem
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = list(extra_args or [])
        self.python = python or sys.executable
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._log_file = None

    @property
    def base_url(self) -> str:
        """The API root for OpenAI clients (``http://127.0.0.1:PORT/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name to send in requests."""
        return self.model_alias

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        """The exact command line (arguments as a list: never a shell string)."""
        cmd = [
            self.python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
        ]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        return cmd + self.extra_args

    def start(self) -> LlamaServer:
        if self.running:
            return self
        if not self.model_path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {self.model_path}")
        fd, log = tempfile.mkstemp(prefix="karma-llama-server-", suffix=".log")
        os.close(fd)
        self._log_path = Path(log)
        self._log_file = open(self._log_path, "wb")  # noqa: SIM115  (closed in stop())
        self._proc = subprocess.Popen(
            self.command(),
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # our SIGTERM reaches the server, not the test runner
            preexec_fn=_end_with_parent if sys.platform.startswith("linux") else None,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise LlamaServerError(
                    f"{self.label} exited with code {self._proc.returncode} before it was ready:\n"
                    + self.log_tail()
                )
            try:
                if httpx.get(url, timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise LlamaServerError(
            f"{self.label} did not answer {url} within {self.startup_timeout_s:g}s:\n" + self.log_tail()
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's output."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        text = self._log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM, wait up to ``grace_s``, then SIGKILL. Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=grace_s)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


LLAMA_SERVER_ENV = "KARMA_LLAMA_SERVER"
"""Environment variable naming a ``llama-server`` binary to use instead of the built one."""


def find_llama_server() -> Path | None:
    """The ``llama-server`` binary: ``$KARMA_LLAMA_SERVER``, else the one scripts/build_llama_server.sh
    cached for the installed llama-cpp-python version; None when neither exists."""
    explicit = os.environ.get(LLAMA_SERVER_ENV)
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    from importlib.metadata import PackageNotFoundError, version

    try:  # the version from the package metadata: no need to load llama.cpp's library for it
        installed = version("llama-cpp-python")
    except PackageNotFoundError:
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(os.environ.get("KARMA_LLAMA_SERVER_CACHE") or base / "karma" / "llama-server")
    binary = cache / installed / "bin" / "llama-server"
    return binary if binary.is_file() else None


class NativeLlamaServer(LlamaServer):
    """llama.cpp's C++ ``llama-server`` serving one GGUF on 127.0.0.1 with ``parallel`` slots.

    Unlike ``llama_cpp.server`` (one request at a time), it decodes the requests in its slots together
    (continuous batching). Each slot gets ``n_ctx`` tokens of context.
    """

    label = "llama-server"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        parallel: int = 4,
        binary: str | Path | None = None,
        **options: Any,
    ):
        """As ``LlamaServer`` (``options``: port, n_ctx, n_threads, model_alias, startup_timeout_s,
        extra_args, the latter as ``llama-server`` options), plus ``parallel`` (slots: requests
        decoded together) and ``binary`` (default: ``find_llama_server()``)."""
        if "python" in options:
            raise TypeError("NativeLlamaServer runs a binary, not a Python interpreter")
        super().__init__(model_path, **options)
        if parallel < 1:
            raise InputError(f"parallel must be >= 1, got {parallel}")
        self.parallel = parallel
        found = Path(binary) if binary else find_llama_server()
        if found is None or not found.is_file():
            raise FileNotFoundError(
                f"llama-server binary not found ({binary or 'not built'}): run scripts/build_llama_server.sh "
                f"or set {LLAMA_SERVER_ENV}"
            )
        self.binary = found

    def command(self) -> list[str]:
        cmd = [
            str(self.binary),
            "--model",
            str(self.model_path),
            "--alias",
            self.model_alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--parallel",
            str(self.parallel),
            # The context is shared by the slots: give each one n_ctx.
            "--ctx-size",
            str(self.n_ctx * self.parallel),
            "--no-webui",
        ]
        if self.n_threads:
            cmd += ["--threads", str(self.n_threads), "--threads-batch", str(self.n_threads)]
        return cmd + self.extra_args
