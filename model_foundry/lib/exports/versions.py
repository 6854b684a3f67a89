"""Dataset versions: the default name, and a finished version never written again.

A version is finished once its export folder holds ``manifest.json``: the writer builds the
folder beside its place and renames it there whole, manifest included, so a folder either is
finished or is not there. The default version is the UTC date; when that date is finished,
the first of ``<date>.2``, ``<date>.3``, ... that is not. An unfinished version (a collection
killed before its export) is resumed, never skipped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from model_foundry.lib.exports.names import UnsafeNameError, check_name, export_dir

MANIFEST = "manifest.json"


class FinishedVersionError(UnsafeNameError):
    """A run asked to write a version that is already exported."""


def is_finished(out_root: Path, name: str, version: str) -> bool:
    return (export_dir(out_root, name, version) / MANIFEST).is_file()


def default_version(out_root: Path, name: str, now: datetime | None = None) -> str:
    """Today's UTC date, or its first free suffix when a version of that date is finished."""
    base = (now or datetime.now(UTC)).strftime("%Y%m%d")
    version, n = base, 1
    while is_finished(out_root, name, version):
        n += 1
        version = f"{base}.{n}"
    return version


def choose_version(out_root: Path, name: str, version: str | None) -> str:
    """The version a run writes: ``version`` if it is safe and not finished, else the
    default; a finished one is refused in one sentence."""
    check_name(name, "name")
    if version is None:
        return default_version(out_root, name)
    check_name(version, "version")
    if is_finished(out_root, name, version):
        raise FinishedVersionError(
            f"dataset {name} version {version} is already exported to "
            f"{export_dir(out_root, name, version)} and is never changed: choose another "
            "--version, or leave it out for a new one"
        )
    return version


__all__ = ["MANIFEST", "FinishedVersionError", "choose_version", "default_version", "is_finished"]
