"""Which process runs a Dagster run, recorded so that a dead one can be told from a slow one.

A pid alone is not enough: the kernel hands a dead worker's pid to the next process, and
after a reboot any pid may belong to anything. A worker counts as alive only if its pid runs
a process that started at the recorded time, in the same boot, on this host. Plain code: where
the record is kept and what is done about a dead worker is ``defs/run_health/``.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str | None:
    """``/proc/sys/kernel/random/boot_id``: a new value on every boot; None off Linux."""
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def process_start_ticks(pid: int) -> int | None:
    """When ``pid``'s process started (ticks since boot); None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")": the fields
    # after the last ")" start at field 3, so the start time (field 22) is the 20th of them.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class RunWorker:
    """The process running ``run_id``: enough to tell later whether it is still that process."""

    run_id: str
    pid: int
    host: str
    boot_id: str | None = None
    start_ticks: int | None = None

    @classmethod
    def of(cls, run_id: str, pid: int) -> RunWorker:
        return cls(run_id, pid, socket.gethostname(), boot_id(), process_start_ticks(pid))

    def alive(self) -> bool | None:
        """Whether the worker process still exists; None when this host cannot tell."""
        if self.host != socket.gethostname():
            return None
        if self.boot_id is not None and self.boot_id != boot_id():
            return False
        if self.start_ticks is not None:
            return process_start_ticks(self.pid) == self.start_ticks
        # No /proc start time was available when it was recorded: the pid is all there is.
        return _pid_exists(self.pid)

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunWorker | None:
        """The record, or None for text that is not one (written by hand, or truncated)."""
        try:
            fields = json.loads(text)
            return cls(
                run_id=str(fields["run_id"]),
                pid=int(fields["pid"]),
                host=str(fields["host"]),
                boot_id=fields.get("boot_id"),
                start_ticks=fields.get("start_ticks"),
            )
        except (ValueError, TypeError, KeyError):
            return None


__all__ = ["RunWorker", "boot_id", "process_start_ticks"]
