"""``model-foundry bench client``: what the slot client costs per token, beside the SDK and a
lean client, against a canned server in its own process.

The canned server (``canned_server``) streams every answer at ``--interval-ms`` a token per
request, ``--tokens`` tokens long, with its bytes built before the first request. Each client
runs as its own process, twice (``--sizes``: a small and a big number of requests, multiples
of ``--in-flight``), so its start-up cancels out of the cost per token:

- ``collect`` / ``collect-nostream``: ``model-foundry dataset collect`` itself (the CLI, a
  slot file pointing at the canned server, a DuckDB file of its own), streaming or with the
  slots' ``stream: false``;
- ``recipe``: ``model-foundry recipe run`` on a one-column recipe, one cell a request;
- ``sdk`` / ``sdk-nostream``: the openai SDK alone (``client_refs``);
- ``lean``: a lean streaming client written the way vLLM's benchmark client is
  (``client_refs``).

Per row:

- ``cpu_per_token_us``: (CPU of the big run - CPU of the small run) / (tokens of the big
  run - tokens of the small run), the CPU being the process's and its children's
  (``os.wait4``) after its first request reached the server;
- ``startup_cpu_s``: the client's CPU when its first request reached the server (the
  server reads ``/proc/<pid>/stat`` then), the smaller of the two runs;
- ``offered_tps`` / ``achieved_tps``: every place busy at the server's rate, against the
  tokens the big run was sent over the time from its first request to its last byte;
- ``client_wait_ms``: per request of the big run, the time a place stood empty while the
  run was on (``in_flight`` x span - the requests' own time): the requests the client had
  not sent yet, or sent late;
- ``tokens_received`` against ``tokens_sent``: what the client stored (or counted) against
  what the server sent, for the big run;
- ``cpu_per_request_ms``: the same difference over the runs' requests instead of tokens;
- ``asleep_cpu_share``: from a third run of one round (every place once), the client's CPU
  over a hold of ``--hold-s`` seconds while every request is out and the server sends
  nothing (``canned_server``'s hold), as a share of one core. ``/proc`` counts CPU in ticks
  of 10 ms, so over 4 s the share is good to about 0.005.

The last object (``--json``) carries the ratios: ``collect`` over ``lean`` and over ``sdk``
per streamed token, ``collect-nostream`` over ``sdk-nostream``, the most start-up CPU and
the most CPU asleep of the model-foundry rows, and ``recipe_cell_ms``: what a recipe cell
costs beyond a collected row making the same request (``recipe`` less ``collect`` per
request; both go through the same slot client and store one row per answer).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_foundry.lib.errors import UserError

CLIENTS = ("collect", "collect-nostream", "recipe", "sdk", "sdk-nostream", "lean")
MF_CLIENTS = ("collect", "collect-nostream", "recipe")
MODEL = "canned"
ROLE = "worker"
RECIPE_NAME = "bench_client"
DATASET_NAME = "bench_client"


@dataclass(frozen=True)
class Setup:
    tokens: int = 256
    interval_ms: float = 2.0
    in_flight: int = 16
    slots: int = 1
    sizes: tuple[int, int] = (32, 160)
    api: str = "chat"
    hold_s: float = 4.0

    @property
    def parallel(self) -> int:
        """Places a slot: ``in_flight`` split over the slots."""
        return max(1, self.in_flight // self.slots)

    @property
    def places(self) -> int:
        return self.parallel * self.slots

    @property
    def offered_tps(self) -> float:
        return self.places * 1000.0 / self.interval_ms

    def requests(self, size: int) -> int:
        """``size`` rounded up to whole rounds of every place, so no place idles at the end
        for want of requests."""
        return -(-size // self.places) * self.places


# ---------------------------------------------------------------------------------------------
# The canned server.


@contextlib.contextmanager
def canned_server(setup: Setup, folder: Path) -> Iterator[str]:
    """The canned server in a process of its own; its root URL."""
    log = (folder / "canned_server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "model_foundry.devtools.bench.canned_server",
         "--tokens", str(setup.tokens), "--interval-ms", str(setup.interval_ms)],
        stdout=subprocess.PIPE, stderr=log, text=True, env=_child_env({}),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the canned server did not start; see {folder}/canned_server.log")
        yield f"http://127.0.0.1:{json.loads(line)['port']}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def server_call(root: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(root + path, data=data, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=10) as resp:
        result: dict[str, Any] = json.loads(resp.read())
        return result


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_FOUNDRY_", "NATS_"))}
    env.pop("DAGSTER_HOME", None)
    env["PYTHONUNBUFFERED"] = "1"
    return {**env, **extra}


# ---------------------------------------------------------------------------------------------
# The clients: what each run starts, and what it received.


def slot_file(setup: Setup, root: str, *, stream: bool) -> dict[str, Any]:
    """The bench's slot file: ``slots`` slots on the canned server, each serving ``worker``."""
    slots = {
        f"s{i}": {
            "roles": [ROLE],
            "runtime": "vllm",
            "base_url": f"{root}/s{i}/v1",
            "model": MODEL,
            "parallel": setup.parallel,
            "api": setup.api,
            "stream": stream,
            # Known, so no run asks the server for its window.
            "context_tokens": 32768,
            "request_defaults": {"max_tokens": setup.tokens, "temperature": 0.7},
            "timeouts": {"connect_s": 5, "request_s": 600},
        }
        for i in range(setup.slots)
    }
    return {
        "default_profile": "bench",
        "slots": slots,
        "profiles": {"bench": list(slots)},
        "roles": {ROLE: {"thinking": False, "fallbacks": []}},
    }


def _recipe_file(rows: int) -> dict[str, Any]:
    return {
        "type": "model_foundry.DatasetRecipe",
        "attributes": {
            "name": RECIPE_NAME,
            "seed": {"file": "seed.jsonl"},
            "rows": rows,
            # The canned answers are one word repeated: a quality gate would reject them.
            "gates": False,
            "columns": [
                {"name": "topic", "type": "seed"},
                {
                    "name": "answer",
                    "type": "llm_text",
                    "role": ROLE,
                    "prompt": "Write about {{ topic }}.",
                },
            ],
        },
    }


@dataclass
class Run:
    """One client run's command line, environment, and how to count what it received."""

    argv: list[str]
    env: dict[str, str]
    received: Callable[[str], int | None]


def _stored_tokens(db: Path) -> Callable[[str], int | None]:
    def count(_stdout: str) -> int | None:
        import duckdb

        if not db.exists():
            return None
        with duckdb.connect(str(db), read_only=True) as con:
            row = con.execute(
                "SELECT sum(len(string_split(trim(content), ' '))) FROM llm_completions "
                "WHERE status = 'ok' AND content IS NOT NULL"
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    return count


def _printed_tokens(stdout: str) -> int | None:
    for line in reversed(stdout.splitlines()):
        with contextlib.suppress(ValueError):
            return int(json.loads(line)["tokens_received"])
    return None


def prepare(client: str, setup: Setup, root: str, n: int, folder: Path) -> Run:
    """What running ``client`` for ``n`` requests takes, its files written under ``folder``."""
    import yaml

    folder.mkdir(parents=True)
    if client in ("sdk", "sdk-nostream", "lean"):
        argv = [
            sys.executable, "-m", "model_foundry.devtools.bench.client_refs",
            "sdk" if client.startswith("sdk") else "lean",
            "--urls", *[f"{root}/s{i}/v1" for i in range(setup.slots)],
            "--api", setup.api, "--model", MODEL, "--requests", str(n),
            "--parallel", str(setup.parallel), "--tokens", str(setup.tokens),
        ]  # fmt: skip
        if not client.endswith("nostream"):
            argv.append("--stream")
        return Run(argv, _child_env({}), _printed_tokens)
    slots = folder / "slots.yaml"
    slots.write_text(yaml.safe_dump(slot_file(setup, root, stream=client != "collect-nostream")))
    db = folder / "bench.duckdb"
    (folder / "dagster_home").mkdir()
    env = _child_env({
        "MODEL_FOUNDRY_SLOTS": str(slots),
        "MODEL_FOUNDRY_DATA_DIR": str(folder / "data"),
        "MODEL_FOUNDRY_DUCKDB": str(db),
        "DAGSTER_HOME": str(folder / "dagster_home"),
        "MODEL_FOUNDRY_SLOT_LIMITER": "flock",
        "MODEL_FOUNDRY_PROFILE": "bench",
    })  # fmt: skip
    cli = [sys.executable, "-m", "model_foundry.cli"]
    if client == "recipe":
        recipe_dir = folder / "recipe"
        recipe_dir.mkdir()
        (recipe_dir / "seed.jsonl").write_text(
            "".join(json.dumps({"topic": f"topic number {i}"}) + "\n" for i in range(n))
        )
        defs = recipe_dir / "defs.yaml"
        defs.write_text(yaml.safe_dump(_recipe_file(n), sort_keys=False))
        argv = [*cli, "recipe", "run", RECIPE_NAME, "--file", str(defs)]
        return Run(argv, env, _stored_tokens(db))
    prompts = folder / "prompts"
    prompts.mkdir()
    (prompts / "bench.jsonl").write_text(
        "".join(
            json.dumps({"id": f"p{i}", "prompt": f"prompt {i}: say something"}) + "\n"
            for i in range(n)
        )
    )
    argv = [*cli, "dataset", "collect", "--name", DATASET_NAME, "--prompt-dir", str(prompts),
            "--no-chat-sessions", "--no-export", "--roles", ROLE]  # fmt: skip
    return Run(argv, env, _stored_tokens(db))


def measure(
    run: Run, root: str, folder: Path, hold: dict[str, float] | None = None
) -> dict[str, Any]:
    """Start ``run``, tell the server its process (and ``hold``: ``hold_at``, ``hold_s``), wait
    for it; its CPU and the server's figures."""
    out_path, err_path = folder / "stdout.log", folder / "stderr.log"
    with out_path.open("w") as out, err_path.open("w") as err:
        server_call(root, "/_bench/reset", {})
        proc = subprocess.Popen(run.argv, env=run.env, stdout=out, stderr=err, cwd=folder)
        # The child is still loading Python when the server learns its pid.
        server_call(root, "/_bench/reset", {"pid": proc.pid, **(hold or {})})
        started = time.monotonic()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    stats = server_call(root, "/_bench/stats")
    stdout = out_path.read_text()
    if proc.returncode != 0:
        tail = err_path.read_text().strip().splitlines()[-5:]
        raise RuntimeError(f"{' '.join(run.argv[2:5])} failed ({proc.returncode}): {tail}")
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall,
        "tokens_received": run.received(stdout),
        **stats,
    }


def one_row(client: str, setup: Setup, root: str, work: Path) -> dict[str, Any]:
    """``client`` at both sizes, and the row's figures."""
    runs = []
    for size in setup.sizes:
        n = setup.requests(size)
        folder = work / f"{client}-{n}"
        runs.append(
            {"requests": n, **measure(prepare(client, setup, root, n, folder), root, folder)}
        )
    small, big = runs
    asleep = asleep_share(client, setup, root, work) if setup.hold_s > 0 else None
    extra_tokens = big["tokens_sent"] - small["tokens_sent"]
    starts = [r["client_cpu_at_first_request_s"] for r in runs]
    # The CPU after each run's first request: the start-up's own spread from one process to
    # the next (about a tenth of it here) is then no part of the difference.
    after = [r["cpu_s"] - (r["client_cpu_at_first_request_s"] or 0.0) for r in runs]
    per_token = (after[1] - after[0]) / extra_tokens if extra_tokens > 0 else None
    extra_requests = big["requests"] - small["requests"]
    span = big["span_s"] or 0.0
    empty = setup.places * span - big["busy_s"]
    return {
        "client": client,
        "stream": not client.endswith("nostream"),
        "requests": [small["requests"], big["requests"]],
        "cpu_s": [round(small["cpu_s"], 3), round(big["cpu_s"], 3)],
        "tokens_sent": [small["tokens_sent"], big["tokens_sent"]],
        "cpu_per_token_us": round(per_token * 1e6, 2) if per_token is not None else None,
        "cpu_per_request_ms": round((after[1] - after[0]) / extra_requests * 1000, 3),
        "asleep_cpu_share": asleep,
        "startup_cpu_s": min((s for s in starts if s is not None), default=None),
        "offered_tps": round(setup.offered_tps, 1),
        "achieved_tps": round(big["tokens_sent"] / span, 1) if span > 0 else None,
        "achieved_ratio": round(big["tokens_sent"] / span / setup.offered_tps, 3)
        if span > 0
        else None,
        "client_wait_ms": round(max(0.0, empty) / big["completed"] * 1000, 2)
        if big["completed"]
        else None,
        "completed": big["completed"],
        "tokens_received": big["tokens_received"],
        "max_in_flight": big["max_in_flight"],
        "stalled_ticks": big["stalled_ticks"],
        "wall_s": [round(small["wall_s"], 2), round(big["wall_s"], 2)],
        "unknown_paths": big["unknown_paths"],
    }


def asleep_share(client: str, setup: Setup, root: str, work: Path) -> float | None:
    """``client``'s CPU, as a share of one core, while the server holds every place's request
    unanswered for ``setup.hold_s`` (one round of requests); None if it never had them all
    out at once."""
    n = setup.places
    folder = work / f"{client}-asleep"
    hold = {"hold_at": n, "hold_s": setup.hold_s}
    figures = measure(prepare(client, setup, root, n, folder), root, folder, hold)
    cpu, span = figures["hold_cpu_s"], figures["hold_span_s"]
    if figures["held"] != n or cpu is None or not span:
        return None
    return round(cpu / span, 4)


def _ratio(rows: dict[str, dict[str, Any]], a: str, b: str) -> float | None:
    if a not in rows or b not in rows:
        return None
    x, y = rows[a]["cpu_per_token_us"], rows[b]["cpu_per_token_us"]
    return round(x / y, 3) if x is not None and y else None


def summary(setup: Setup, rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    starts = [rows[c]["startup_cpu_s"] for c in MF_CLIENTS if c in rows]
    asleep = [rows[c]["asleep_cpu_share"] for c in MF_CLIENTS if c in rows]
    cell = (
        round(rows["recipe"]["cpu_per_request_ms"] - rows["collect"]["cpu_per_request_ms"], 3)
        if "recipe" in rows and "collect" in rows
        else None
    )
    return {
        "setup": {
            "tokens": setup.tokens,
            "interval_ms": setup.interval_ms,
            "in_flight": setup.places,
            "slots": setup.slots,
            "api": setup.api,
            "sizes": [setup.requests(s) for s in setup.sizes],
            "hold_s": setup.hold_s,
        },
        "collect_over_lean": _ratio(rows, "collect", "lean"),
        "collect_over_sdk": _ratio(rows, "collect", "sdk"),
        "nostream_over_sdk": _ratio(rows, "collect-nostream", "sdk-nostream"),
        "recipe_over_lean": _ratio(rows, "recipe", "lean"),
        "max_startup_cpu_s": max((s for s in starts if s is not None), default=None),
        "recipe_cell_ms": cell,
        # None when a model-foundry row never had every place's request out at once.
        "max_asleep_cpu_share": None
        if None in asleep or not asleep
        else max(a for a in asleep if a is not None),
        "tokens_match": all(r["tokens_received"] == r["tokens_sent"][1] for r in rows.values()),
    }


def run_bench_client(
    setup: Setup,
    clients: tuple[str, ...] = CLIENTS,
    *,
    emit: Callable[[dict[str, Any]], Any] = print,
) -> dict[str, Any]:
    """Every client in ``clients`` against one canned server; ``emit`` gets each row."""
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mf-bench-client-") as tmp:
        work = Path(tmp)
        with canned_server(setup, work) as root:
            for client in clients:
                rows[client] = one_row(client, setup, root, work)
                emit(rows[client])
    return summary(setup, rows)


def _print_row(row: dict[str, Any]) -> None:
    print(
        f"{row['client']:<17} {row['cpu_per_token_us']} us/token, start-up "
        f"{row['startup_cpu_s']} s CPU, achieved {row['achieved_tps']} of "
        f"{row['offered_tps']} tokens/s, client wait {row['client_wait_ms']} ms/request, "
        f"received {row['tokens_received']} of {row['tokens_sent'][1]} tokens, "
        f"{row['cpu_per_request_ms']} ms/request, asleep {row['asleep_cpu_share']} of a core",
        flush=True,
    )


def main(args: argparse.Namespace) -> int:
    setup = Setup(
        tokens=args.tokens,
        interval_ms=args.interval_ms,
        in_flight=args.in_flight,
        slots=args.slots,
        sizes=(args.sizes[0], args.sizes[1]),
        api=args.api,
        hold_s=args.hold_s,
    )
    small, big = (setup.requests(s) for s in setup.sizes)
    if not 0 < small < big:
        # The cost per token is the difference of the two runs over their tokens.
        raise UserError(
            f"--sizes {args.sizes[0]} {args.sizes[1]} make {small} and {big} requests (whole "
            f"rounds of {setup.places} places); the second must make more than the first"
        )
    clients = tuple(args.clients or CLIENTS)
    unknown = sorted(set(clients) - set(CLIENTS))
    if unknown:
        raise UserError(f"unknown --clients {', '.join(unknown)}; known: {', '.join(CLIENTS)}")
    emit = (lambda row: print(json.dumps(row), flush=True)) if args.json else _print_row
    result = run_bench_client(setup, clients, emit=emit)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"collect / lean {result['collect_over_lean']} (target <= 1.25), collect / sdk "
            f"{result['collect_over_sdk']}, not streaming collect / sdk "
            f"{result['nostream_over_sdk']} (target <= 1.5), start-up CPU "
            f"{result['max_startup_cpu_s']} s (target <= 2), a recipe cell "
            f"{result['recipe_cell_ms']} ms beyond its request (target <= 3), asleep "
            f"{result['max_asleep_cpu_share']} of a core (target <= 0.01)"
        )
    return 0 if result["tokens_match"] else 1


__all__ = [
    "CLIENTS",
    "Setup",
    "canned_server",
    "main",
    "prepare",
    "run_bench_client",
    "server_call",
    "slot_file",
]
