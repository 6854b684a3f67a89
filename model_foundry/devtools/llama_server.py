"""A real llama.cpp ``llama-server`` for the tests and for trying slots without a GPU.

``make llama-server`` (``python -m model_foundry.devtools.llama_server build``) builds it once
into a cache directory outside the repo, from the llama.cpp sources that the llama-cpp-python
sdist on PyPI vendors: no git clone, no download but the sdist from the package registry.
CPU only, and with the web UI off, because llama.cpp's default build fetches a prebuilt UI
from the network (``LLAMA_USE_PREBUILT_UI``) and this project never needs it.

The cache is ``$MODEL_FOUNDRY_CACHE`` (default ``~/.cache/model-foundry``), then
``llama-server-<sdist version>/bin/llama-server``; a second build is a no-op.
``$LLAMA_SERVER_BIN`` points the tests at a binary of your own instead.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from model_foundry.devtools.ports import free_port

# The llama-cpp-python release whose vendored llama.cpp is built. Pinned so every machine
# and CI runs the same server; bump it here (and the cache directory follows).
LLAMA_CPP_PYTHON_VERSION = "0.3.36"

CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    # The web UI is either downloaded (prebuilt) or built with npm: neither is wanted here.
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    # A portable binary: the cache may be shared between machines of different CPUs.
    "-DGGML_NATIVE=OFF",
)


class ToolchainMissing(RuntimeError):
    """No C++ toolchain (cmake and a C++ compiler) to build llama-server with."""


class ServerExited(RuntimeError):
    """llama-server ended before it was healthy; ``returncode`` is negative for a signal."""

    def __init__(self, message: str, returncode: int) -> None:
        super().__init__(message)
        self.returncode = returncode


def cache_root() -> Path:
    # Read here rather than through lib.settings: this is a dev tool, not product config.
    base = os.environ.get("MODEL_FOUNDRY_CACHE") or str(Path.home() / ".cache" / "model-foundry")
    return Path(base)


def cached_binary() -> Path:
    return cache_root() / f"llama-server-{LLAMA_CPP_PYTHON_VERSION}" / "bin" / "llama-server"


def find_binary() -> Path | None:
    """``$LLAMA_SERVER_BIN`` if set, else the cached build; ``None`` when neither exists."""
    own = os.environ.get("LLAMA_SERVER_BIN")
    if own:
        return Path(own) if Path(own).is_file() else None
    path = cached_binary()
    return path if path.is_file() else None


def missing_toolchain() -> str | None:
    """Why llama-server cannot be built here, or ``None`` when it can."""
    needed = {"cmake": shutil.which("cmake"), "a C++ compiler (c++/g++/clang++)": None}
    needed["a C++ compiler (c++/g++/clang++)"] = next(
        (p for p in (shutil.which(c) for c in ("c++", "g++", "clang++")) if p), None
    )
    absent = [name for name, path in needed.items() if not path]
    if absent:
        return "no " + " and no ".join(absent) + " on PATH to build llama-server with"
    return None


def _download_sdist(dest: Path) -> Path:
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
        "--no-binary", ":all:", "-d", str(dest),
        f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}",
    ]  # fmt: skip
    subprocess.run(cmd, check=True)
    found = sorted(dest.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        raise RuntimeError(f"pip download left no llama-cpp-python sdist in {dest}")
    return found[0]


def build(*, jobs: int | None = None, log: bool = True) -> Path:
    """Build llama-server into the cache (no-op when it is there) and return its path."""
    target = cached_binary()
    if target.is_file():
        return target
    why = missing_toolchain()
    if why:
        raise ToolchainMissing(why)
    jobs = jobs or os.cpu_count() or 2
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent.parent.parent) as tmp:
        work = Path(tmp)
        sdist = _download_sdist(work)
        with tarfile.open(sdist) as tar:
            tar.extractall(work, filter="data")
        src = next(work.glob("llama_cpp_python-*/vendor/llama.cpp"))
        out = work / "build"
        started = time.monotonic()
        subprocess.run(
            ["cmake", "-S", str(src), "-B", str(out), *generator, *CMAKE_FLAGS], check=True
        )
        subprocess.run(
            ["cmake", "--build", str(out), "--target", "llama-server", "-j", str(jobs)], check=True
        )
        built = out / "bin" / "llama-server"
        target.parent.mkdir(parents=True, exist_ok=True)
        # Copy then rename: a concurrent reader never sees half a binary.
        partial = target.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.replace(target)
        if log:
            print(f"built {target} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return target


@dataclass
class LlamaServer:
    """A running llama-server on a loopback port."""

    url: str  # http://127.0.0.1:PORT (no /v1)
    process: subprocess.Popen[bytes]
    args: list[str]
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Until ``GET /health`` answers 200 (503 while the model loads)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerExited(
                f"llama-server exited with {process.returncode} before {url} was up",
                process.returncode,
            )
        with (
            contextlib.suppress(urllib.error.URLError, OSError),
            urllib.request.urlopen(f"{url}/health", timeout=2) as resp,
        ):
            if resp.status == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"llama-server at {url} not healthy after {timeout:.0f} s")


def start(
    binary: Path,
    model: Path,
    *,
    ctx: int = 4096,
    parallel: int = 5,
    log_dir: Path,
    port: int | None = None,
    extra: list[str] | None = None,
) -> LlamaServer:
    port = port or free_port()
    args = [
        str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
        "-c", str(ctx), "--parallel", str(parallel), "--threads", "1",
        "--metrics", "--slots", "--no-webui", *(extra or []),
    ]  # fmt: skip
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"llama-server-{port}.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = LlamaServer(f"http://127.0.0.1:{port}", proc, args, log_path)
    try:
        wait_healthy(server.url, proc)
    except Exception as exc:
        server.stop()
        raise RuntimeError(f"{exc}\n{server.log_tail()}") from exc
    return server


@contextlib.contextmanager
def running(binary: Path, model: Path, **kwargs: object) -> Iterator[LlamaServer]:
    server = start(binary, model, **kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model_foundry.devtools.llama_server",
        description="Build llama.cpp's llama-server (CPU) once into the cache.",
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build into the cache unless it is there")
    b.add_argument(
        "--skip-without-toolchain",
        action="store_true",
        help="exit 0 with a note when there is no C++ toolchain (the real-server tests skip)",
    )
    b.add_argument("--jobs", type=int, default=None)
    sub.add_parser("path", help="print the binary's path (exit 1 when it is not built)")
    args = parser.parse_args(argv)
    if args.cmd == "path":
        found = find_binary()
        print(found or cached_binary())
        return 0 if found else 1
    try:
        print(build(jobs=args.jobs))
    except ToolchainMissing as exc:
        if args.skip_without_toolchain:
            print(
                f"llama-server not built: {exc}; the real-llama.cpp tests will skip",
                file=sys.stderr,
            )
            return 0
        print(f"llama-server not built: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
