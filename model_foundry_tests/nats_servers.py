"""Both nats-server lines the project supports: the current release and Debian 12's 2.9.

``both_nats_servers`` parametrizes a fixture over them. Debian's build is at
``/usr/sbin/nats-server`` (``.ci/run`` installs it); where it is missing the 2.9 case skips
with that reason outside CI and fails in CI, so CI never passes without testing 2.9.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_foundry.devtools.local_nats import LocalNatsServer

DEBIAN_NATS_SERVER = "/usr/sbin/nats-server"

both_nats_servers = pytest.mark.parametrize(
    "nats_binary", [None, DEBIAN_NATS_SERVER], ids=["nats-current", "nats-2.9"]
)


def require_binary(binary: str | None) -> None:
    if binary is None or Path(binary).exists():
        return
    message = f"{binary} is missing (apt-get install nats-server brings Debian's 2.9 build)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def started_server(binary: str | None, store_dir: Path) -> Iterator[LocalNatsServer]:
    """A fixture body: one server of the given build on a free loopback port."""
    require_binary(binary)
    with LocalNatsServer(store_dir=store_dir, binary=binary) as server:
        yield server
