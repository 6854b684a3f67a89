"""Two Python environments with Hugging Face ``datasets`` for the export loading tests.

A dataset export must load with the ``datasets`` release people still pin (3.6.0) and the
current one (5.x), each with ``huggingface_hub`` for ``DatasetCard``. They conflict with each
other and with nothing in model-foundry, so each gets its own venv in the cache
(``$MODEL_FOUNDRY_CACHE``, default ``~/.cache/model-foundry``), built once: ``make
hf-datasets``. The tests run a loader script in each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

from model_foundry.devtools.llama_server import cache_root

# Each environment: its folder name and what pip installs in it.
ENVIRONMENTS: dict[str, list[str]] = {
    "hf-datasets-3.6.0": ["datasets==3.6.0", "huggingface_hub<1"],
    "hf-datasets-5": ["datasets>=5,<6", "huggingface_hub"],
}
_STAMP = ".installed"


class EnvironmentUnavailable(RuntimeError):
    """An environment could not be built (no network, no package index)."""


def python_of(name: str) -> Path:
    return cache_root() / name / "bin" / "python"


_checked: set[str] = set()


def _usable(name: str) -> bool:
    """The environment's python imports ``datasets``: a stamp alone does not prove it (a venv
    whose pyvenv.cfg went missing has a python that no longer sees its own packages)."""
    if name in _checked:
        return True
    python = python_of(name)
    if not python.is_file():
        return False
    ok = subprocess.run([str(python), "-c", "import datasets"], capture_output=True).returncode == 0
    if ok:
        _checked.add(name)
    return ok


def build(name: str, log: bool = True) -> Path:
    """Build environment ``name`` into the cache (no-op when it is there); its python."""
    root = cache_root() / name
    if (root / _STAMP).is_file() and _usable(name):
        return python_of(name)
    if log:
        print(f"building {root} ({', '.join(ENVIRONMENTS[name])})", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    done = subprocess.run(
        [str(python_of(name)), "-m", "pip", "install", "--quiet", *ENVIRONMENTS[name]],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise EnvironmentUnavailable(
            f"pip could not install {ENVIRONMENTS[name]}: {' '.join(tail)}"
        )
    (root / _STAMP).write_text(" ".join(ENVIRONMENTS[name]) + "\n", encoding="utf-8")
    return python_of(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model_foundry.devtools.hf_datasets",
        description="Build the datasets 3.6 and 5.x environments once into the cache.",
    )
    parser.add_argument("command", choices=["build", "path"])
    parser.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="exit 0 when pip cannot install (no network): the loading tests then skip",
    )
    args = parser.parse_args(argv)
    for name in ENVIRONMENTS:
        if args.command == "path":
            print(python_of(name))
            continue
        try:
            print(build(name))
        except EnvironmentUnavailable as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            return 0 if args.skip_unavailable else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
