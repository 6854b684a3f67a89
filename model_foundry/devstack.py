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
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from model_foundry import settings
from model_foundry.local_nats import LocalNatsServer, port_open

LOCAL_NATS_PORT = 4222


def _dagster_home() -> Path:
    home = Path(os.environ.get("DAGSTER_HOME") or settings.data_dir() / "dagster_home")
    home.mkdir(parents=True, exist_ok=True)
    # The instance settings live at the project root, where people edit them.
    shutil.copyfile(settings.PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


@contextmanager
def local_nats(*, port: int | None, store_dir: Path) -> Iterator[str]:
    """The NATS URL to use: ``NATS_URL`` if set, else a local server this call starts."""
    if os.environ.get("NATS_URL"):
        yield os.environ["NATS_URL"]
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
    if os.environ.get("MODEL_FOUNDRY_SLOTS"):
        yield
        return
    from model_foundry.slot_config import load_slot_file

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


def up(port: int = 3000) -> int:
    with ExitStack() as stack:
        url = stack.enter_context(
            local_nats(port=LOCAL_NATS_PORT, store_dir=settings.data_dir() / "nats")
        )
        os.environ["NATS_URL"] = url
        from model_foundry.nats_resource import nats_resource_from_env

        for item in nats_resource_from_env(resolve_secrets=True).setup():
            print(f"created {item}")
        stack.enter_context(local_slots())
        env = dict(os.environ, DAGSTER_HOME=str(_dagster_home()))
        print(f"Dagster UI on http://127.0.0.1:{port} (Ctrl-C stops everything)")
        dagster = shutil.which("dagster", path=str(Path(sys.executable).parent)) or "dagster"
        proc = subprocess.Popen(
            [dagster, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=settings.PROJECT_ROOT,
            env=env,
        )
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            return proc.wait()


def demo(events: int = 200) -> int:
    """Publish sample events, materialize the real assets, print a report from DuckDB."""
    import tempfile

    with ExitStack() as stack:
        store = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mf-demo-nats-")))
        url = stack.enter_context(local_nats(port=None, store_dir=store))
        os.environ["NATS_URL"] = url
        from model_foundry.demo import run_demo

        return run_demo(events=events)


__all__ = ["demo", "local_nats", "local_slots", "up"]
