"""``model-foundry bench recipe``: a recipe generated row by row against column after column.

One fixed recipe (:data:`RECIPE`) over N empty rows on the shipped slot file's simulator:
``a``, text on the worker role (naughty, parallel 3); ``b``, text on the cheap role
(kindergarten, parallel 5) reading ``a``; ``c``, a pointwise judge (grandpa, parallel 1)
reading both. The prompts' lengths are set so that each slot has about the same work for
its places (rows x latency / parallel), as a recipe that keeps every slot busy would be.

It runs twice, each on a simulator started afresh with a DuckDB file of its own (a second
run on the same file would answer from the store):

- ``rows``: ``Generation``, row by row (``lib/recipes/generate.py``);
- ``barrier``: column after column over buffers of ``buffer`` rows, as column-at-a-time
  generators do (Data Designer's builder before 0.9's async scheduler): each buffer's column
  is one round of ``LlmRun.ask``, waited for before the next.

Both ask through the same ``LlmRun`` with the same slot caps. Per run: the makespan, the
slot-fill ratio (request time the client saw, over parallel x makespan, summed over the
slots the recipe uses) and, per slot, the most requests the simulator had in flight at once.
The last line carries ``fill_ratio`` (row by row) and ``makespan_ratio`` (row by row over
the barrier run). Targets: ``fill_ratio >= 0.95``, ``makespan_ratio <= 0.8``, and no slot
ever above its ``parallel``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_foundry.devtools.bench.slot_common import simulator_stats, subprocess_simulator
from model_foundry.lib.llm import LlmRun
from model_foundry.lib.recipes.generate import RUN_VERSION, Generation, llm_request
from model_foundry.lib.recipes.parse import parse_recipe
from model_foundry.lib.recipes.roles import JudgeSlots
from model_foundry.lib.recipes.seeds import SeedRow, seed_rows
from model_foundry.lib.recipes.spec import Recipe
from model_foundry.lib.slots.config import SlotFile, load_slot_file
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions

PROFILE = "full"
# Words the worker's prompt has: its answer echoes them, and so on down the columns; chosen
# so the three slots' work per place is about even on the simulator's latency model.
A_WORDS = 50
B_WORDS = 12
FILLER = "word"

RECIPE: dict[str, Any] = {
    "name": "bench_recipe",
    "rows": 500,
    # The simulator echoes prompts: the quality gates would reject the bench's answers.
    "gates": False,
    "columns": [
        {"name": "a", "type": "llm_text", "role": "worker",
         "prompt": " ".join([FILLER] * A_WORDS)},
        {"name": "b", "type": "llm_text", "role": "cheap",
         "prompt": " ".join([FILLER] * B_WORDS) + " {{ a }}"},
        {"name": "c", "type": "llm_judge",
         "prompt": "A: {{ a }} B: {{ b }}",
         "scores": [{"name": "useful", "description": "Is B useful?", "max": 5}]},
    ],
}  # fmt: skip


class BenchSlots:
    """The simulator's slots as ``LlmRun`` asks for them (``SlotSource``)."""

    def __init__(self, slot_file: SlotFile, lock_dir: Path) -> None:
        self.slot_file = slot_file
        self.options = DispatchOptions(slot_limiter="flock", lock_dir=lock_dir)

    @property
    def profile(self) -> str | None:
        return PROFILE

    def load(self) -> SlotFile:
        return self.slot_file

    def context_book(self, slot_file: SlotFile) -> ContextBook:
        return ContextBook(slot_file.live_slots(PROFILE))

    def dispatch_options(self) -> DispatchOptions:
        return self.options


def bench_recipe(rows: int) -> Recipe:
    return parse_recipe({**RECIPE, "rows": rows}, "bench recipe")


def by_rows(recipe: Recipe, run: LlmRun, rows: list[SeedRow]) -> int:
    """Row by row; the rows complete."""
    return Generation(recipe, run, rows, RUN_VERSION, None).generate().complete_rows()


def by_columns(recipe: Recipe, run: LlmRun, rows: list[SeedRow], buffer: int) -> int:
    """Column after column over buffers of ``buffer`` rows, one round a column; the rows
    complete."""
    values: dict[str, dict[str, Any]] = {r.row_id: {} for r in rows}
    for start in range(0, len(rows), buffer):
        part = rows[start : start + buffer]
        for column in recipe.columns:
            ready = [r for r in part if set(column.reads) <= set(values[r.row_id])]
            planned = [
                run.plan(llm_request(recipe, column, r.row_id, 0, values[r.row_id])) for r in ready
            ]
            batch = run.ask(planned, f"bench {column.name}")
            for r, p in zip(ready, planned, strict=True):
                answer = batch.results.get(p.key)
                if answer is not None:
                    values[r.row_id][column.name] = answer.content.strip()
    return sum(1 for v in values.values() if len(v) == len(recipe.columns))


async def one_run(
    name: str, rows: int, buffer: int, speed: float, slot_file: SlotFile, work: Path
) -> dict[str, Any]:
    folder = work / name
    folder.mkdir(parents=True)
    recipe = bench_recipe(rows)
    db = folder / "bench.duckdb"
    async with subprocess_simulator(slot_file, PROFILE, speed, folder) as live:
        source = JudgeSlots(BenchSlots(live, folder / "locks"))
        seeds = seed_rows(recipe, db, folder)
        log = logging.getLogger("model_foundry.bench.recipe")
        # The transport loads with the first request: loaded here, so the makespan is the
        # generation's, as Data Designer's timed build starts with its SDK loaded
        # (benchmarks/data_designer/compare.py).
        importlib.import_module("aiohttp")
        with LlmRun(db, source, run_id=None, asset="bench_recipe", log=log) as run:
            started = time.monotonic()
            if name == "rows":
                complete = await asyncio.to_thread(by_rows, recipe, run, seeds)
            else:
                complete = await asyncio.to_thread(by_columns, recipe, run, seeds, buffer)
            makespan = time.monotonic() - started
        stats = await simulator_stats(live, PROFILE)
    attempts = run.batch.dispatch.attempts if run.batch.dispatch else []
    busy: dict[str, float] = {}
    for a in attempts:
        busy[a.slot] = busy.get(a.slot, 0.0) + (a.latency_s or 0.0)
    used = sorted(busy)
    places = sum(live.slots[s].parallel for s in used)
    slots = {
        s: {
            "parallel": live.slots[s].parallel,
            "max_in_flight": stats[s]["max_in_flight"],
            "requests": stats[s]["completed"],
            "busy_share": round(busy[s] / (live.slots[s].parallel * makespan), 3),
        }
        for s in used
    }
    return {
        "run": name,
        "rows": rows,
        "rows_complete": complete,
        "requests": len(attempts),
        "errors": sum(1 for a in attempts if not a.ok),
        "makespan_s": round(makespan, 3),
        "fill_ratio": round(sum(busy.values()) / (places * makespan), 3) if makespan else None,
        "slots": slots,
    }


def run_bench_recipe(
    rows: int = 500,
    *,
    buffer: int = 100,
    speed: float = 2.0,
    emit: Callable[[dict[str, Any]], Any] = print,
) -> dict[str, Any]:
    """Both runs, row by row then column after column; ``emit`` gets each run's figures."""
    slot_file = load_slot_file()
    runs = {}
    with tempfile.TemporaryDirectory(prefix="mf-bench-recipe-") as tmp:
        for name in ("rows", "barrier"):
            runs[name] = asyncio.run(one_run(name, rows, buffer, speed, slot_file, Path(tmp)))
            emit(runs[name])
    over = [
        f"{r['run']}:{s}" for r in runs.values() for s, v in r["slots"].items()
        if v["max_in_flight"] > v["parallel"]
    ]  # fmt: skip
    fill = runs["rows"]["fill_ratio"]
    makespan_ratio = round(runs["rows"]["makespan_s"] / runs["barrier"]["makespan_s"], 3)
    return {
        "rows": rows,
        "buffer": buffer,
        "speed": speed,
        "fill_ratio": fill,
        "barrier_fill_ratio": runs["barrier"]["fill_ratio"],
        "makespan_ratio": makespan_ratio,
        "max_in_flight": {
            name: {s: v["max_in_flight"] for s, v in r["slots"].items()} for name, r in runs.items()
        },
        "over_parallel": over,
        "targets_met": fill is not None and fill >= 0.95 and makespan_ratio <= 0.8 and not over,
    }


def main(args: argparse.Namespace) -> int:
    def emit(row: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(row), flush=True)
            return
        print(
            f"{row['run']:<7} {row['rows']} rows ({row['rows_complete']} complete), "
            f"{row['requests']} requests, makespan {row['makespan_s']} s, "
            f"fill {row['fill_ratio']}",
            flush=True,
        )
        for s, v in row["slots"].items():
            print(
                f"  {s:<14} parallel={v['parallel']} max_in_flight={v['max_in_flight']} "
                f"requests={v['requests']} busy_share={v['busy_share']}"
            )

    result = run_bench_recipe(args.rows, buffer=args.buffer, speed=args.speed, emit=emit)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"fill ratio {result['fill_ratio']} row by row (target >= 0.95), "
            f"{result['barrier_fill_ratio']} column after column; makespan ratio "
            f"{result['makespan_ratio']} (target <= 0.8)"
        )
    return 1 if result["over_parallel"] else 0


__all__ = ["RECIPE", "bench_recipe", "by_columns", "by_rows", "main", "run_bench_recipe"]
