"""``model-foundry bench prefill``: prompt prefill saved by families, on real llama-servers.

Serves the real Gemma 3 270M weights (``make real-model``) on three ``llama-server``s with the
project's Gemma template, one CPU thread each, under the same flags in both runs
(:data:`SERVER_FLAGS`): a worker and a cheap slot for the fan-out over two roles (the cheap one
also summarises), and a judge. Then runs the workload of ``prefill_workload.py`` twice:

- ``off``: today's behaviour before families: one line of requests in order, the server
  choosing a slot for each by prompt similarity (``DispatchOptions(families=False)``);
- ``on``: families (``WorkQueue``) and each request pinned to its place's server slot.

Each run starts on servers started afresh, so no cache holds anything of the workload, and
writes to a DuckDB file of its own (a second run on the same file would answer from the
store). Per step it reports the prompt tokens the servers computed (prompt tokens less
``timings.cache_n``), the tokens generated, generated tokens per second of the step's wall
time, and the slot-fill ratio (request time over the step's places x its wall time). The last
line carries ``prefill_ratio`` (prefill tokens computed per generated token, on over off, the
whole workload) and ``throughput_ratio`` (generated tokens per second, on over off).

Each step also reports its share of the run's prefill floor (``prefill_floor.py``): the fewest
prompt tokens any order or routing of the same requests could have computed on the same
servers, reusing exact prefixes. ``floor_ratio`` is that floor per generated token over what
the off run computed: the lowest ``prefill_ratio`` the workload allows.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from model_foundry.devtools import llama_server, real_model
from model_foundry.devtools.bench.prefill_floor import run_floor
from model_foundry.devtools.bench.prefill_workload import StepResult, Workload, steps
from model_foundry.lib.llm.causes import failure_cause
from model_foundry.lib.recipes.roles import JudgeSlots
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.slots.errors import first_line

# Beside real_model.SERVING_FLAGS (--swa-full), which every real-weights server gets: one
# thread a server, as the tests run them. Both runs use the same flags.
SERVER_FLAGS = ("--threads", "1")
MODEL = "gemma3-270m-q4_k_m"


@dataclass(frozen=True)
class Server:
    name: str
    roles: tuple[str, ...]
    parallel: int
    window: int  # tokens one request may use: -c is parallel x window
    max_tokens: int
    cut: bool  # answers run to max_tokens (ignore_eos), so both runs generate alike


SERVERS = (
    Server("naughty", ("worker",), 3, 1024, 16, True),
    Server("kindergarten", ("cheap", "summary"), 3, 1024, 16, True),
    # The judge's grammar ends each verdict; its max_tokens leaves room for the reason.
    Server("grandpa", (), 3, 1536, 128, False),
)
PLACES = {"fanout": 6, "mapreduce": 3, "judge": 3}


def slot_file_data(urls: dict[str, str]) -> dict[str, Any]:
    slots = {}
    for s in SERVERS:
        defaults: dict[str, Any] = {"max_tokens": s.max_tokens, "temperature": 0.7}
        if s.cut:
            defaults["extra_body"] = {"ignore_eos": True}
        slots[s.name] = {
            "roles": list(s.roles), "runtime": "llamacpp", "base_url": f"{urls[s.name]}/v1",
            "model": MODEL, "parallel": s.parallel, "api": "chat",
            "request_defaults": defaults, "timeouts": {"connect_s": 5, "request_s": 600},
        }  # fmt: skip
    return {
        "default_profile": "standard",
        "slots": slots,
        "profiles": {"standard": ["naughty", "kindergarten"]},
        "roles": {r: {"thinking": False, "fallbacks": []} for r in ("worker", "cheap", "summary")},
    }


class BenchSlots:
    """The run's slots as ``LlmRun`` asks for them (``SlotSource``), families on or off."""

    def __init__(self, path: Path, *, families: bool, lock_dir: Path) -> None:
        self.path = path
        self.options = DispatchOptions(families=families, slot_limiter="flock", lock_dir=lock_dir)

    @property
    def profile(self) -> str | None:
        return None

    def load(self) -> SlotFile:
        return load_slot_file(self.path)

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        return ContextBook(slot_file.live_slots(None))

    def dispatch_options(self) -> DispatchOptions:
        return self.options


@contextmanager
def servers(binary: Path, model: Path, log_dir: Path) -> Iterator[dict[str, str]]:
    """Every server started afresh with :data:`SERVER_FLAGS`; their URLs by slot name."""
    with ExitStack() as stack:
        urls = {}
        for s in SERVERS:
            server = stack.enter_context(
                real_model.serving(
                    binary, model, log_dir=log_dir, ctx=s.parallel * s.window,
                    parallel=s.parallel, extra=list(SERVER_FLAGS),
                )
            )  # fmt: skip
            urls[s.name] = server.url
        yield urls


def one_run(
    families: bool, workload: Workload, binary: Path, model: Path, work: Path
) -> list[StepResult]:
    name = "on" if families else "off"
    folder = work / name
    folder.mkdir(parents=True)
    with servers(binary, model, folder) as urls:
        path = folder / "slots.yaml"
        path.write_text(yaml.safe_dump(slot_file_data(urls), sort_keys=False))
        source = BenchSlots(path, families=families, lock_dir=folder / "locks")
        db = folder / "bench.duckdb"
        results = list(steps(workload, source, JudgeSlots(source), db, PLACES))
        # The floor's prompts are tokenized by the run's servers before they stop.
        floors = run_floor(db, source.load(), [r.attempts for r in results])
        return [replace(r, **vars(f)) for r, f in zip(results, floors, strict=True)]


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def totals(results: list[StepResult]) -> dict[str, Any]:
    figures = [r.figures() for r in results]
    computed = sum(f["prefill_tokens_computed"] for f in figures)
    generated = sum(f["generated_tokens"] for f in figures)
    floor = sum(r.floor for r in results) if all(r.floor is not None for r in results) else None
    seconds = sum(r.seconds for r in results)
    return {
        "prefill_tokens_computed": computed,
        "generated_tokens": generated,
        "prefill_per_generated_token": round(computed / generated, 3) if generated else None,
        "prefill_floor_tokens": floor,
        "floor_per_generated_token": round(floor / generated, 3)
        if generated and floor is not None
        else None,
        # The prompts tokenized for the floor came to what the servers reported prefilling.
        "floor_counts_reported_tokens": all(
            f["prompt_tokens_tokenized"] == f["prompt_tokens"] for f in figures
        ),
        "generated_tps": round(generated / seconds, 2) if seconds else None,
        "wall_s": round(seconds, 2),
        "errors": sum(f["errors"] for f in figures),
        "failed_requests": sum(f["errors"] - f["retried"] for f in figures),
        # Why attempts failed (retried ones too: errors counts them), so a run with errors
        # says what they were.
        "failure_causes": dict(
            Counter(failure_cause(a) for r in results for a in r.attempts if not a.ok)
        ),
        # And what the client saw, which the cause's sentence leaves out (the transport's
        # exception behind an unreachable slot).
        "failure_errors": dict(
            Counter(first_line(a.error or "") for r in results for a in r.attempts if not a.ok)
        ),
    }


def compare(off: list[StepResult], on: list[StepResult]) -> dict[str, Any]:
    t_off, t_on = totals(off), totals(on)
    per_step = {
        a.name: _ratio(a.figures()["generated_tps"], b.figures()["generated_tps"])
        for a, b in zip(on, off, strict=True)
    }
    return {
        "off": t_off,
        "on": t_on,
        "prefill_ratio": _ratio(
            t_on["prefill_per_generated_token"], t_off["prefill_per_generated_token"]
        ),
        # The lowest prefill_ratio exact prefix reuse allows on this workload: the floor of
        # the on run's requests per generated token, over what the off run computed.
        "floor_ratio": _ratio(
            t_on["floor_per_generated_token"], t_off["prefill_per_generated_token"]
        ),
        "throughput_ratio": _ratio(t_on["generated_tps"], t_off["generated_tps"]),
        "step_throughput_ratios": per_step,
        "server_flags": " ".join((*real_model.SERVING_FLAGS, *SERVER_FLAGS)),
    }


def run_bench_prefill(workload: Workload, *, emit: Any = print) -> dict[str, Any]:
    """Both runs, off then on; ``emit`` gets each step's figures as they come."""
    binary = llama_server.find_binary() or llama_server.build()
    model = real_model.build()
    runs: dict[str, list[StepResult]] = {}
    with tempfile.TemporaryDirectory(prefix="mf-bench-prefill-") as tmp:
        for families in (False, True):
            name = "on" if families else "off"
            runs[name] = one_run(families, workload, binary, model, Path(tmp))
            for r in runs[name]:
                emit({"run": name, **r.figures()})
    return compare(runs["off"], runs["on"])


def workload_from(args: argparse.Namespace) -> Workload:
    w = Workload()
    fields = ("seed", "prompts", "samples", "sessions", "session_lines", "judged_prompts")
    return replace(w, **{f: getattr(args, f) for f in fields if getattr(args, f) is not None})


def main(args: argparse.Namespace) -> int:
    def emit(row: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{row['run']:>3} {row['step']:<9} {row['requests']:>3} requests: "
                f"{row['prefill_tokens_computed']:>6} prefill tokens computed "
                f"(floor {row['prefill_floor_tokens']}), "
                f"{row['generated_tokens']:>5} generated, {row['generated_tps']} tok/s, "
                f"{row['wall_s']} s, fill {row['slot_fill_ratio']}",
                flush=True,
            )

    try:
        result = run_bench_prefill(workload_from(args), emit=emit)
    except (
        llama_server.ToolchainMissing,
        real_model.ModelUnavailable,
        real_model.ModelBroken,
    ) as exc:
        print(f"error: bench prefill needs llama-server and the real model: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"prefill ratio {result['prefill_ratio']} (target <= 0.5; exact prefix reuse "
            f"cannot go below {result['floor_ratio']}), throughput ratio "
            f"{result['throughput_ratio']} (target >= 1.15), per step "
            f"{result['step_throughput_ratios']}"
        )
    for run in ("off", "on"):
        for cause, count in result[run]["failure_causes"].items():
            print(f"{run}: {count} x {cause}", file=sys.stderr)
        for error, count in result[run]["failure_errors"].items():
            print(f"{run}: {count} x {error}", file=sys.stderr)
    # An attempt that failed and was asked again is in the figures like any other; a request
    # that finally failed leaves its step's figures short.
    failed = result["off"]["failed_requests"] + result["on"]["failed_requests"]
    return 0 if failed == 0 else 1


__all__ = ["SERVERS", "SERVER_FLAGS", "compare", "main", "run_bench_prefill", "slot_file_data"]
