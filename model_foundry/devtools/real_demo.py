"""``model-foundry demo --real``: the demo's story told by a real model on real llama.cpp.

There is no vLLM without a GPU, so every slot is a ``llama-server`` (``make llama-server``)
serving Gemma 3 270M (``make real-model``), on CPU, with the project's Gemma chat template:
a worker slot with 3 places, a cheap slot (summaries) with 5, a translator and a judge. The
translator is a chat slot given a translation instruction, as the pipeline does for any chat
slot that translates: plamo's completions format means nothing to Gemma.

The model is small and a base model, not an instruction-tuned one: it rarely stops by
itself, so answers are kept short and stop where it starts a new turn, and what it writes is
what the quality gates are for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

from model_foundry.devtools import llama_server, real_model
from model_foundry.lib.errors import UserError

# (name, roles, parallel, -c): llama.cpp gives each request -c / parallel tokens.
REAL_SLOTS: tuple[tuple[str, list[str], int, int], ...] = (
    ("naughty", ["worker"], 3, 6144),
    ("kindergarten", ["summary", "cheap"], 5, 10240),
    ("translator", ["translation"], 1, 2048),
    ("grandpa", ["reasoning"], 1, 4096),
)
# A base model rarely ends an answer by itself (most run to max_tokens) and goes on with
# turns of its own invention. The worker and the translator stop at the end of a line, so
# the dataset gets answers that end, which the judge compares (it skips cut-off ones); the
# summary slot stops only where a turn would begin, so the gates meet cut-off answers too.
TURN_STOPS = ["<end_of_turn>", "<start_of_turn>"]
STOPS = {
    "naughty": ["\n", *TURN_STOPS],
    "kindergarten": TURN_STOPS,
    "translator": ["\n", *TURN_STOPS],
    # The verdict's JSON schema bounds the judge's answer instead (below).
    "grandpa": [],
}
# The model's name in the slot file and llm_completions (llama-server serves any name).
MODEL = "gemma3-270m-q4_k_m"
# The judge's is raised to what a verdict needs by the judging itself (judge.verdict_params).
MAX_TOKENS = {"naughty": 96, "kindergarten": 128, "translator": 96, "grandpa": 128}


def real_slot_file(servers: dict[str, llama_server.LlamaServer]) -> dict[str, Any]:
    """The demo's slot file: the shipped file's shape, every slot on a real llama-server."""
    slots: dict[str, Any] = {}
    for name, roles, parallel, _ in REAL_SLOTS:
        slots[name] = {
            "roles": roles,
            "runtime": "llamacpp",
            "base_url": servers[name].base_url,
            "model": MODEL,
            "parallel": parallel,
            "api": "chat",
            "request_defaults": {
                "max_tokens": MAX_TOKENS[name],
                "temperature": 0 if name in ("translator", "grandpa") else 0.7,
                **({"stop": STOPS[name]} if STOPS[name] else {}),
            },
            "timeouts": {"connect_s": 5, "request_s": 300},
        }
    return {
        "default_profile": "standard",
        "slots": slots,
        "profiles": {"standard": ["naughty", "kindergarten", "translator"]},
        "roles": {
            "reasoning": {"fallbacks": ["worker"]},
            "worker": {"thinking": False, "fallbacks": ["kindergarten"]},
            "summary": {"thinking": False, "fallbacks": ["worker"]},
            "cheap": {"thinking": False, "fallbacks": ["worker"]},
            "translation": {"fallbacks": []},
        },
    }


@contextmanager
def real_slots(work_dir: Path) -> Iterator[Path]:
    """Build or reuse llama-server and the model, serve every slot meanwhile; their slot
    file's path."""
    try:
        binary = llama_server.build()
        model = real_model.build()
    except (
        llama_server.ToolchainMissing,
        real_model.ModelUnavailable,
        real_model.ModelBroken,
    ) as exc:
        raise UserError(f"demo --real needs llama-server and the model: {exc}") from None
    with ExitStack() as stack:
        servers = {}
        for name, _, parallel, ctx in REAL_SLOTS:
            try:
                servers[name] = stack.enter_context(
                    llama_server.running(
                        binary, model, ctx=ctx, parallel=parallel, log_dir=work_dir,
                        extra=[*real_model.template_args(), *real_model.SERVING_FLAGS],
                    )
                )  # fmt: skip
            except RuntimeError as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UserError(
                    f"llama-server for slot {name} did not start: {first} (log in {work_dir})"
                ) from None
            print(f"  {name}: llama-server on {servers[name].url} (--parallel {parallel})")
        path = work_dir / "real-slots.yaml"
        path.write_text(yaml.safe_dump(real_slot_file(servers), sort_keys=False))
        yield path


__all__ = ["REAL_SLOTS", "real_slot_file", "real_slots"]
