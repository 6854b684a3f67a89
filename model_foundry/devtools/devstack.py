"""``make up`` and ``make demo``: the whole stack on one machine with embedded defaults.

``up`` starts what is not configured elsewhere (a local nats-server when ``NATS_URL`` is
unset, the slot simulator when ``MODEL_FOUNDRY_SLOTS`` is unset) and then the Dagster UI and
daemon on ``workspace.yaml``. ``demo`` is one shot: it runs the real assets on sample events
and prints what landed in DuckDB.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import yaml

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import port_open
from model_foundry.lib import settings
from model_foundry.lib.dagster_instance import check_reachable, describe, storage_section
from model_foundry.lib.settings import DagsterPostgres

LOCAL_NATS_PORT = 4222


def _dagster_home() -> Path:
    """``$DAGSTER_HOME`` with the project's dagster.yaml, storage chosen by the environment."""
    home = settings.dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    pg = settings.dagster_postgres()
    if pg is not None:
        check_reachable(
            pg, settings.secret("DAGSTER_PG_URL"), settings.secret("DAGSTER_PG_PASSWORD")
        )
    # The instance settings live at the project root, where people edit them; only the
    # storage section is added here (SQLite stays Dagster's default under DAGSTER_HOME).
    write_instance_config(home, {"storage": storage_section(pg)})
    print(describe(pg, str(home)))
    initialize_instance(home)
    return home


def write_instance_config(home: Path, extra: dict[str, Any], *, queued: bool = True) -> Path:
    """The project's dagster.yaml, comments and all, in ``home``, plus ``extra`` sections.

    A ``storage`` section the project's file already has wins over the one from the
    environment.
    """
    home.mkdir(parents=True, exist_ok=True)
    text = (settings.PROJECT_ROOT / "dagster.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text) or {}
    if not queued:
        config.pop("run_coordinator", None)
        text = yaml.safe_dump(config, sort_keys=False)
    extra = {k: v for k, v in extra.items() if v and k not in config}
    if extra:
        text += (
            "\n# Added by model-foundry (storage from DAGSTER_PG_* or DAGSTER_PG_URL when set).\n"
            "# Dagster reads the {env: ...} values when it starts: no password is written here.\n"
            + yaml.safe_dump(extra, sort_keys=False)
        )
    path = home / "dagster.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@contextmanager
def local_nats(*, port: int | None, store_dir: Path) -> Iterator[str]:
    """The NATS URL to use: ``NATS_URL`` if set, else a local server this call starts."""
    if settings.nats_url_set():
        yield ",".join(settings.nats_urls())
        return
    if port is not None and port_open("127.0.0.1", port):
        print(f"using the NATS server already listening on 127.0.0.1:{port}")
        yield f"nats://127.0.0.1:{port}"
        return
    with LocalNatsServer(store_dir=store_dir, port=port) as server:
        print(f"started nats-server {server.url} (JetStream store {store_dir})")
        yield server.url


@contextmanager
def local_slots() -> Iterator[None]:
    """Serve the shipped slot file with the simulator unless real slots are configured."""
    if settings.slot_file_set():
        yield
        return
    from model_foundry.lib.slots.config import load_slot_file

    slot_file = load_slot_file()
    busy = [s.name for s in slot_file.slots.values() if port_open(*s.host_port())]
    if busy:
        print(f"slot ports already served ({', '.join(busy)}); not starting the simulator")
        yield
        return
    proc = subprocess.Popen(
        [sys.executable, "-m", "model_foundry.cli", "simulate-slots", "--all"],
        stdin=subprocess.DEVNULL,
    )
    print("started the slot simulator (dev tool) for the shipped slot file")
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def simulator_process(
    work_dir: Path,
    *,
    speed: float = 20.0,
    extra_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Path]:
    """Every slot of the slot file served by a simulator process on free ports.

    Yields a copy of the slot file pointing at the ports it really bound; free ports, so it
    never collides with a running ``make up`` or real servers. Its log is in ``work_dir``.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    slot_path = work_dir / "slots.yaml"
    with (work_dir / "simulator.log").open("w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "model_foundry.devtools.simulator",
                "--all",
                "--free-ports",
                "--speed",
                str(speed),
                "--write-slot-file",
                str(slot_path),
                *extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not slot_path.exists():
                if proc.poll() is not None:
                    raise RuntimeError("the slot simulator exited before it was ready")
                if time.monotonic() > deadline:
                    raise RuntimeError("the slot simulator did not start within 60s")
                time.sleep(0.05)
            yield slot_path
        finally:
            stop_process_group(proc)


@contextmanager
def slot_file_env(path: Path) -> Iterator[Path]:
    """``MODEL_FOUNDRY_SLOTS`` pointing at ``path`` meanwhile, then as it was."""
    previous = os.environ.get("MODEL_FOUNDRY_SLOTS")
    os.environ["MODEL_FOUNDRY_SLOTS"] = str(path)
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop("MODEL_FOUNDRY_SLOTS", None)
        else:
            os.environ["MODEL_FOUNDRY_SLOTS"] = previous


@contextmanager
def simulated_slots(work_dir: Path, *, speed: float = 20.0) -> Iterator[Path]:
    """:func:`simulator_process` with ``MODEL_FOUNDRY_SLOTS`` pointing at it meanwhile."""
    with simulator_process(work_dir, speed=speed) as slot_path, slot_file_env(slot_path):
        yield slot_path


def stop_process_group(proc: subprocess.Popen[Any], timeout_s: float = 20.0) -> None:
    """SIGINT to the process group (a daemon's code server and run workers too), then SIGKILL.

    Falls back to the process alone when it does not lead its own group.
    """
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except OSError:
            proc.send_signal(signal.SIGINT)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout_s)
    # Whatever the group left behind (run workers, code servers) goes now.
    with suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def write_dagster_home(
    home: Path, *, queued: bool = True, postgres: DagsterPostgres | None = None
) -> Path:
    """A throwaway instance in ``home``: SQLite inside it, or ``postgres`` (whose DAGSTER_PG_*
    variables the processes using it must have)."""
    write_instance_config(
        home,
        {
            "storage": storage_section(postgres, sqlite_dir=str(home / "storage")),
            "local_artifact_storage": {
                "module": "dagster._core.storage.root",
                "class": "LocalArtifactStorage",
                "config": {"base_dir": str(home / "artifacts")},
            },
        },
        queued=queued,
    )
    initialize_instance(home)
    return home


def initialize_instance(home: Path) -> None:
    """Create the instance's storage once (SQLite or PostgreSQL), before the daemon and the UI.

    Two processes that find a fresh DAGSTER_HOME at the same moment both create and stamp the
    schema, leaving two alembic heads; every later load of the code location then fails.
    """
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.get_runs_count()


def _slot_limits_line() -> str:
    from model_foundry.lib.nats.connection import NatsClient
    from model_foundry.lib.slots.leases import DEFAULT_BUCKET

    if settings.slot_limiter() == "flock":
        return "Slot limits: flock files on this machine only (MODEL_FOUNDRY_SLOT_LIMITER=flock)"
    servers = NatsClient(servers=",".join(settings.nats_urls())).redacted_servers
    return (
        f"Slot limits: NATS leases in bucket {DEFAULT_BUCKET} on {servers}, shared by every "
        f"worker; a dead worker's places return within {settings.slot_lease_ttl_s():g}s"
    )


def _exit_on_sigterm() -> None:
    # A service manager or `timeout` stops us with SIGTERM; turning it into SystemExit runs
    # the cleanup below, so nats-server, the simulator and Dagster are never left orphaned.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _metrics_command() -> list[list[str]]:
    """The Prometheus exporter, unless something already serves its port (a second ``up``)."""
    port = settings.metrics_port()
    if port_open("127.0.0.1", port):
        print(f"127.0.0.1:{port} is taken; not starting the metrics exporter")
        return []
    print(f"Prometheus metrics on http://127.0.0.1:{port}/metrics")
    return [[sys.executable, "-m", "model_foundry.cli", "metrics", "--port", str(port)]]


def check_slot_file() -> None:
    """The slot file the stack would use (``MODEL_FOUNDRY_SLOTS``, else the shipped one the
    simulator serves), refused in its one sentence before anything starts."""
    from model_foundry.lib.slots.config import load_slot_file

    load_slot_file(settings.slot_file_path())


def up(port: int = 3000) -> int:
    check_slot_file()
    _exit_on_sigterm()
    with ExitStack() as stack:
        url = stack.enter_context(
            local_nats(port=LOCAL_NATS_PORT, store_dir=settings.data_dir() / "nats")
        )
        os.environ["NATS_URL"] = url
        from model_foundry.lib.nats.connection import nats_client_from_env

        for change in nats_client_from_env().setup():
            print(change)
        stack.enter_context(local_slots())
        print(_slot_limits_line())
        home = _dagster_home()
        env = dict(os.environ, DAGSTER_HOME=str(home))
        workspace = str(settings.PROJECT_ROOT / "workspace.yaml")
        bin_dir = Path(sys.executable).parent
        # The UI and the daemon as two processes, as in production (`dagster dev` is
        # superseded and warns). They run in DAGSTER_HOME so Dagster finds only that copy
        # of dagster.yaml.
        commands = [
            [str(bin_dir / "dagster-daemon"), "run", "-w", workspace],
            [
                str(bin_dir / "dagster-webserver"),
                "-w",
                workspace,
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
            ],
        ]
        commands += _metrics_command()
        procs = [subprocess.Popen(cmd, cwd=home, env=env) for cmd in commands]
        print(f"Dagster UI on http://127.0.0.1:{port} (Ctrl-C stops everything)")
        try:
            while all(p.poll() is None for p in procs):
                time.sleep(0.5)
            return next(p.returncode for p in procs if p.returncode is not None)
        except KeyboardInterrupt:
            return 130
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            for p in procs:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()


def demo(events: int = 400, *, real: bool = False) -> int:
    """Publish sample events, materialize the real assets, print a report from DuckDB.

    The demo never touches the user's data: its DuckDB file, datasets and NATS store live in
    ``<data dir>/demo/`` (emptied at the start of each demo), and it always starts its own
    NATS server on a free port, because draining sample events through the user's real
    stream would acknowledge them away from the real inbox. Real slots are used when
    ``MODEL_FOUNDRY_SLOTS`` names them; otherwise the slot simulator runs on free ports.
    ``real``: every slot is a llama-server on the real model instead (``real_demo.py``).
    """
    import tempfile

    check_slot_file()
    _exit_on_sigterm()
    demo_dir = settings.data_dir() / "demo"
    shutil.rmtree(demo_dir, ignore_errors=True)
    demo_dir.mkdir(parents=True)
    os.environ["MODEL_FOUNDRY_DATA_DIR"] = str(demo_dir)
    os.environ["MODEL_FOUNDRY_DUCKDB"] = str(demo_dir / "model_foundry.duckdb")
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mf-demo-")))
        server = stack.enter_context(LocalNatsServer(store_dir=demo_dir / "nats"))
        os.environ["NATS_URL"] = server.url
        for var in settings.NATS_SECRET_VARS.values():
            os.environ.pop(var, None)
        if real:
            from model_foundry.devtools.real_demo import real_slots

            print("starting llama-servers with the real model (Gemma 3 270M, CPU):")
            stack.enter_context(slot_file_env(stack.enter_context(real_slots(work))))
        elif not settings.slot_file_set():
            stack.enter_context(simulated_slots(work))
            print("started the slot simulator (dev tool) on free ports")
        from model_foundry.devtools.demo import run_demo

        return run_demo(events=events, real=real)


__all__ = [
    "check_slot_file",
    "demo",
    "initialize_instance",
    "local_nats",
    "local_slots",
    "simulated_slots",
    "simulator_process",
    "slot_file_env",
    "stop_process_group",
    "up",
    "write_dagster_home",
]
