"""One ``dataset collect`` process against two that share the same slots, on ``bench client``'s
canned server: does a second worker raise the tokens a second the slots get?

Run it with the project's venv, from the repository's root::

    .venv/bin/python benchmarks/client/two_workers.py --interval-ms 5 --requests 1024

The canned server (``model_foundry.devtools.bench.canned_server``, its own process) serves
``--slots`` slots of ``--in-flight`` places in all, each answer ``--tokens`` tokens at
``--interval-ms`` a token, so the offered rate is places x 1000 / interval tokens a second.
One worker collects ``--requests`` prompts; two workers collect half each, at the same
time, with one slot-lock folder, so together they hold at most the places the slots have
(the flock limiter: on one machine it shares places as the NATS leases do across machines).
Each worker writes its own DuckDB file. Rounds alternate one and two workers (``--rounds``
pairs). The figures are the server's own: tokens sent over the span from the first request
to the last answer, against the offered rate, and the most requests it had at once; and
the workers' CPU, start-up included.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.client import Setup, canned_server, prepare, server_call


def run(setup: Setup, root: str, work: Path, workers: int, requests: int) -> dict[str, Any]:
    """``workers`` collect processes sharing the slots, ``requests`` prompts between them."""
    locks = work / "shared-data"
    started = []
    for w in range(workers):
        folder = work / f"worker-{w}"
        job = prepare("collect", setup, root, requests // workers, folder)
        # One data folder for all: the slot locks live in it, so the places are shared.
        job.env["MODEL_FOUNDRY_DATA_DIR"] = str(locks)
        started.append((job, folder))
    server_call(root, "/_bench/reset", {})
    began = time.monotonic()
    procs = []
    for job, folder in started:
        with (folder / "stdout.log").open("w") as out, (folder / "stderr.log").open("w") as err:
            procs.append((subprocess.Popen(job.argv, env=job.env, cwd=folder, stdout=out,
                                           stderr=err), folder))  # fmt: skip
    cpu = 0.0
    for proc, folder in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        cpu += usage.ru_utime + usage.ru_stime
        if os.waitstatus_to_exitcode(status) != 0:
            tail = (folder / "stderr.log").read_text().strip().splitlines()[-3:]
            raise SystemExit(f"a worker failed: {tail}")
    wall = time.monotonic() - began
    stats = server_call(root, "/_bench/stats")
    span = stats["span_s"] or float("nan")
    return {
        "workers": workers,
        "requests": requests,
        "tokens_sent": stats["tokens_sent"],
        "span_s": round(span, 2),
        "achieved_tps": round(stats["tokens_sent"] / span, 1),
        "achieved_ratio": round(stats["tokens_sent"] / span / setup.offered_tps, 3),
        "max_in_flight": stats["max_in_flight"],
        "places": setup.places,
        "workers_cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval-ms", type=float, default=5.0, help="a token (5)")
    parser.add_argument("--tokens", type=int, default=256, help="tokens an answer (256)")
    parser.add_argument("--in-flight", type=int, default=256, help="places in all (256)")
    parser.add_argument("--slots", type=int, default=8, help="slots sharing them (8)")
    parser.add_argument("--requests", type=int, default=1024, help="prompts a round (1024)")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of rounds (2)")
    args = parser.parse_args()
    setup = Setup(args.tokens, args.interval_ms, args.in_flight, args.slots)
    ratios: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="mf-two-workers-") as tmp:
        work = Path(tmp)
        with canned_server(setup, work) as root:
            for n in range(args.rounds):
                for workers in (1, 2):
                    row = run(setup, root, work / f"round-{n}-{workers}", workers, args.requests)
                    ratios[workers].append(row["achieved_ratio"])
                    print(json.dumps(row), flush=True)
    print(json.dumps({"offered_tps": setup.offered_tps, "one": ratios[1], "two": ratios[2]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
