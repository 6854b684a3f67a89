"""The answer gates on real model answers: Gemma 3 270M (``make real-model``) answers the
prompts of the independent corpora (``model_foundry_tests/fixtures/heldout3`` and
``heldout4``, ``good.jsonl``: written by helpers that read none of the gates), and each answer
goes through the gates an export applies (``lib.gates.answers.gate``, with its prompt).

It prints, per cause, how many answers were held back, and writes every answer with its
verdict to ``--out`` (JSON lines) to be read by eye: whether a held-back answer is noise and
a kept one is not is a person's call, not this script's. From the repository's root::

    .venv/bin/python benchmarks/gates/gemma_answers.py --out /tmp/gemma-answers.jsonl

The server runs on every core with two places; sampling is seeded per prompt.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from model_foundry.devtools import llama_server, real_model
from model_foundry.lib.gates.answers import gate

REPO = Path(__file__).resolve().parents[2]
CORPORA = ("heldout3", "heldout4")


def prompts() -> list[dict[str, str]]:
    out = []
    for corpus in CORPORA:
        path = REPO / "model_foundry_tests" / "fixtures" / corpus / "good.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append({"id": row["id"], "lang": row["lang"], "prompt": row["prompt"]})
    return out


def ask(url: str, prompt: str, seed: int, max_tokens: int) -> dict[str, Any]:
    body = {
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0.7,
        "top_p": 0.95,
        "seed": seed,
    }
    request = urllib.request.Request(
        f"{url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as resp:
        choice = json.loads(resp.read())["choices"][0]
    return {"answer": choice["message"]["content"] or "", "finish": choice["finish_reason"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-tokens", type=int, default=160)
    args = parser.parse_args()
    binary, model = llama_server.find_binary(), real_model.find_model()
    if binary is None or model is None:
        raise SystemExit("run `make llama-server real-model` first")
    rows = prompts()
    with (
        tempfile.TemporaryDirectory() as logs,
        real_model.serving(binary, model, log_dir=Path(logs), ctx=4096, parallel=2) as server,
        ThreadPoolExecutor(2) as pool,
    ):
        answers = list(
            pool.map(
                lambda n: ask(server.url, rows[n]["prompt"], 1000 + n, args.max_tokens),
                range(len(rows)),
            )
        )
    causes: Counter[str] = Counter()
    with args.out.open("w", encoding="utf-8") as fh:
        for row, answer in zip(rows, answers, strict=True):
            cause = gate(answer["answer"], prompt=row["prompt"])
            causes[cause or "kept"] += 1
            fh.write(json.dumps({**row, **answer, "cause": cause}, ensure_ascii=False) + "\n")
    print(json.dumps({"answers": len(rows), "by_cause": dict(causes.most_common())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
