"""The names an export may use: one safe path segment each, inside the export root.

The folder itself is written by ``writer.py`` (views, card, manifest), versions are chosen by
``versions.py``.
"""

import re
from pathlib import Path

# A dataset name or version becomes a folder under data/datasets/: one path segment of
# letters, digits, dot, dash and underscore, not starting with a dot (no "..", no "/").
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")


class UnsafeNameError(ValueError):
    """A dataset name or version that could leave the export folder."""


def check_name(value: str, what: str) -> str:
    if not SAFE_NAME.fullmatch(value or ""):
        raise UnsafeNameError(
            f"dataset {what} {value!r} is not allowed: use letters, digits, '.', '-' and '_' "
            "(at most 100, not starting with '.'), so the export stays inside its folder"
        )
    return value


def export_dir(out_root: Path, name: str, version: str) -> Path:
    """``<out_root>/<name>/<version>``, refusing anything that resolves outside ``out_root``."""
    out = (out_root / check_name(name, "name") / check_name(version, "version")).resolve()
    if not out.is_relative_to(out_root.resolve()):
        raise UnsafeNameError(f"dataset export {out} would leave {out_root}")
    return out


__all__ = ["UnsafeNameError", "check_name", "export_dir"]
