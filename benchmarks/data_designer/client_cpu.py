"""The client CPU of one recipe, ``model-foundry recipe run`` against NVIDIA NeMo Data
Designer, on the same canned servers one after the other.

Run it with the Python of a venv that has ``data-designer`` installed (not the project's
venv), from the repository's root::

    /path/to/ddvenv/bin/python benchmarks/data_designer/client_cpu.py --json

The servers are ``bench client``'s canned server (``model_foundry.devtools.bench.
canned_server``, run by ``--mf-python`` in its own process): every answer is ``--tokens``
tokens at ``--interval-ms`` a token, so both tools wait the same on the same requests. Two
slots on it, ``--parallel`` places each (3 and 5). The recipe: ``--rows`` rows of a row
variable (a seed file for model-foundry, a UUID sampler for Data Designer) and three text
columns, each with the same long system turn: ``a`` on the first slot, ``b`` reading ``a``
on the second, ``c`` reading both on the first; so ``3 x rows`` answers.

Each tool runs as a child process, start to finish (imports, its own set-up, generation,
its own writes), and its CPU is the child's and its children's (``os.wait4``), the best of
``--repeat`` runs. model-foundry runs streaming (its default) and with ``stream: false``;
Data Designer does not stream. Nothing here imports ``model_foundry``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RECIPE = "client_cpu"
ROLES = ("worker", "cheap")
# A long system turn shared by every request, as a recipe's instructions are.
SYSTEM = " ".join(
    f"Rule {i}: answer plainly, in full sentences, without lists or headings." for i in range(1, 41)
)
PROMPTS = {
    "a": "Write a short note about {{ topic }}.",
    "b": "Summarise this note in one sentence: {{ a }}",
    "c": "Note: {{ a }}\nSummary: {{ b }}\nSay whether the summary is faithful.",
}
COLUMN_ROLES = {"a": "worker", "b": "cheap", "c": "worker"}


@contextmanager
def canned_server(mf_python: str, tokens: int, interval_ms: float, work: Path) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    log = (work / "canned.log").open("w")
    proc = subprocess.Popen(
        [mf_python, "-m", "model_foundry.devtools.bench.canned_server",
         "--tokens", str(tokens), "--interval-ms", str(interval_ms)],
        stdout=subprocess.PIPE, stderr=log, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the canned server did not start; see {work}/canned.log")
        yield f"http://127.0.0.1:{json.loads(line)['port']}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def measure(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run ``argv`` to its end: its CPU (with its children's) and wall seconds."""
    out, err = (cwd / "stdout.log").open("w"), (cwd / "stderr.log").open("w")
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    out.close()
    err.close()
    if os.waitstatus_to_exitcode(status) != 0:
        tail = (cwd / "stderr.log").read_text().strip().splitlines()[-5:]
        raise RuntimeError(f"{argv[1:4]} failed: {tail}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall}


def mf_run(args: argparse.Namespace, root: str, work: Path, stream: bool) -> dict[str, Any]:
    import yaml

    work.mkdir(parents=True)
    slots = {
        f"s{i}": {
            "roles": [role],
            "runtime": "vllm",
            "base_url": f"{root}/s{i}/v1",
            "model": "canned",
            "parallel": parallel,
            "api": "chat",
            "stream": stream,
            "context_tokens": 32768,
            "request_defaults": {"max_tokens": args.tokens, "temperature": 0.7},
        }
        for i, (role, parallel) in enumerate(zip(ROLES, args.parallel, strict=True))
    }
    slot_file = {
        "default_profile": "bench",
        "slots": slots,
        "profiles": {"bench": list(slots)},
        "roles": {role: {"thinking": False, "fallbacks": []} for role in ROLES},
    }
    (work / "slots.yaml").write_text(yaml.safe_dump(slot_file))
    (work / "seed.jsonl").write_text(
        "".join(json.dumps({"topic": f"topic number {i}"}) + "\n" for i in range(args.rows))
    )
    columns: list[dict[str, Any]] = [{"name": "topic", "type": "seed"}]
    for name, prompt in PROMPTS.items():
        columns.append({"name": name, "type": "llm_text", "role": COLUMN_ROLES[name],
                        "system": SYSTEM, "prompt": prompt})  # fmt: skip
    recipe = {
        "type": "model_foundry.DatasetRecipe",
        # The canned answers are one word repeated: a quality gate would hold them back.
        "attributes": {"name": RECIPE, "seed": {"file": "seed.jsonl"}, "rows": args.rows,
                       "gates": False, "columns": columns},
    }  # fmt: skip
    (work / "defs.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    (work / "dagster_home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_FOUNDRY_", "NATS_"))}
    env.update({
        "PYTHONPATH": str(REPO),
        "MODEL_FOUNDRY_SLOTS": str(work / "slots.yaml"),
        "MODEL_FOUNDRY_DATA_DIR": str(work / "data"),
        "MODEL_FOUNDRY_DUCKDB": str(work / "mf.duckdb"),
        "DAGSTER_HOME": str(work / "dagster_home"),
        "MODEL_FOUNDRY_SLOT_LIMITER": "flock",
        "MODEL_FOUNDRY_PROFILE": "bench",
    })  # fmt: skip
    argv = [args.mf_python, "-m", "model_foundry.cli", "recipe", "run", RECIPE,
            "--file", str(work / "defs.yaml")]  # fmt: skip
    return measure(argv, env, work)


def dd_child(root: str, rows: int, tokens: int, parallel: list[int], work: Path) -> None:
    """Data Designer's side, in the child process being measured."""
    os.environ.setdefault("NEMO_TELEMETRY_ENABLED", "false")
    os.environ.setdefault("DISABLE_DATA_DESIGNER_PLUGINS", "true")
    os.environ["DATA_DESIGNER_HOME"] = str(work / "dd-home")
    from data_designer.config.column_configs import LLMTextColumnConfig, SamplerColumnConfig
    from data_designer.config.config_builder import DataDesignerConfigBuilder
    from data_designer.config.models import (
        ChatCompletionInferenceParams,
        ModelConfig,
        ModelProvider,
    )
    from data_designer.config.run_config import RunConfig
    from data_designer.config.sampler_params import SamplerType, UUIDSamplerParams
    from data_designer.interface.data_designer import DataDesigner

    providers = [
        ModelProvider(
            name=f"s{i}", endpoint=f"{root}/s{i}/v1", provider_type="openai", api_key="dummy"
        )
        for i in range(len(ROLES))
    ]
    models = [
        ModelConfig(
            alias=role,
            model="canned",
            provider=f"s{i}",
            inference_parameters=ChatCompletionInferenceParams(
                temperature=0.7,
                max_tokens=tokens,
                max_parallel_requests=p,
            ),
        )
        for i, (role, p) in enumerate(zip(ROLES, parallel, strict=True))
    ]
    builder = DataDesignerConfigBuilder(model_configs=models)
    builder.add_column(
        SamplerColumnConfig(
            name="topic", sampler_type=SamplerType.UUID, params=UUIDSamplerParams(short_form=True)
        )
    )
    for name, prompt in PROMPTS.items():
        column = LLMTextColumnConfig(
            name=name, prompt=prompt, system_prompt=SYSTEM, model_alias=COLUMN_ROLES[name]
        )
        builder.add_column(column)
    designer = DataDesigner(artifact_path=work / "artifacts", model_providers=providers)
    designer.set_run_config(RunConfig(buffer_size=rows, otel_metrics_port=None))
    result = designer.create(builder, num_records=rows, dataset_name=RECIPE)
    frame = result.load_dataset()
    complete = int(frame[list(PROMPTS)].notna().all(axis=1).sum())
    print(json.dumps({"rows_complete": complete}))


def dd_run(args: argparse.Namespace, root: str, work: Path) -> dict[str, Any]:
    work.mkdir(parents=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "--dd-child", root,
            "--rows", str(args.rows), "--tokens", str(args.tokens),
            "--parallel", *map(str, args.parallel)]  # fmt: skip
    env = {**os.environ, "NEMO_TELEMETRY_ENABLED": "false"}
    result = measure(argv, env, work)
    done = json.loads((work / "stdout.log").read_text().strip().splitlines()[-1])
    return {**result, **done}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--interval-ms", type=float, default=2.0)
    parser.add_argument("--parallel", type=int, nargs=2, default=[3, 5])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--mf-python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--dd-child", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.dd_child:
        dd_child(args.dd_child, args.rows, args.tokens, args.parallel, Path.cwd())
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"mf": [], "mf_nostream": [], "dd": []}
    with tempfile.TemporaryDirectory(prefix="mf-client-cpu-") as tmp:
        work = Path(tmp)
        with canned_server(args.mf_python, args.tokens, args.interval_ms, work) as root:
            for n in range(args.repeat):
                runs["mf"].append(mf_run(args, root, work / f"mf-{n}", stream=True))
                runs["mf_nostream"].append(mf_run(args, root, work / f"mfns-{n}", stream=False))
                runs["dd"].append(dd_run(args, root, work / f"dd-{n}"))
    best = {k: min(v, key=lambda r: r["cpu_s"]) for k, v in runs.items()}
    out = {
        "rows": args.rows,
        "answers": 3 * args.rows,
        "tokens": args.tokens,
        "interval_ms": args.interval_ms,
        "parallel": args.parallel,
        "cpu_s": {k: round(v["cpu_s"], 3) for k, v in best.items()},
        "wall_s": {k: round(v["wall_s"], 2) for k, v in best.items()},
        "dd_rows_complete": best["dd"].get("rows_complete"),
        "mf_over_dd": round(best["mf"]["cpu_s"] / best["dd"]["cpu_s"], 3),
        "mf_nostream_over_dd": round(best["mf_nostream"]["cpu_s"] / best["dd"]["cpu_s"], 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>20}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
