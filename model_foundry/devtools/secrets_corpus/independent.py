"""The exports' scrubber on ``model_foundry_tests/fixtures/independent/`` (written by a
helper that had not read lib/hygiene): recall whole and in fragments per kind, negatives kept
per kind, and whether scrubbing the output again changes it.

``python -m model_foundry.devtools.secrets_corpus.independent [--leaks]`` prints the table;
``--leaks`` adds each value that survived and each negative that did not.

A value leaks *whole* when it is still in the output, and *in a fragment* when 8 of its
consecutive characters are in the output more often than in the text around the value (so a
provider's name written next to its token, ``rubygems key rubygems_<hex>``, is no fragment).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber

CORPUS = Path(__file__).parents[3] / "model_foundry_tests" / "fixtures" / "independent"
_FRAGMENT = 8


@dataclass
class Result:
    values: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    negatives: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    leaks: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    not_idempotent: int = 0

    def totals(self) -> tuple[int, int, int, int, int]:
        """Values, whole-free, fragment-free, negatives, negatives kept."""
        v = [sum(row[i] for row in self.values.values()) for i in range(3)]
        n = [sum(row[i] for row in self.negatives.values()) for i in range(2)]
        return v[0], v[1], v[2], n[0], n[1]


def _rows(name: str) -> list[dict]:
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _fragment_left(value: str, out: str, around: str) -> bool:
    return any(
        out.count(value[i : i + _FRAGMENT]) > around.count(value[i : i + _FRAGMENT])
        for i in range(len(value) - _FRAGMENT + 1)
    )


def measure(backstop: bool = True) -> Result:
    scrubber = RecordScrubber(HygieneConfig(backstop=backstop), salt=b"independent-corpus")
    result = Result()
    for row in _rows("secrets.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        result.not_idempotent += scrubber.scrub(out)[0] != out
        around = row["text"]
        for value in row["secrets"]:
            around = around.replace(value, "\0")
        for value in row["secrets"]:
            tally = result.values[row["kind"]]
            whole = value in out
            fragment = _fragment_left(value, out, around)
            tally[0] += 1
            tally[1] += not whole
            tally[2] += not fragment
            if whole or fragment:
                result.leaks.append(f"{row['id']} {row['kind']} {'whole' if whole else 'fragment'}")
    for row in _rows("negatives.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        result.not_idempotent += scrubber.scrub(out)[0] != out
        for keep in row["keep"]:
            tally = result.negatives[row["kind"]]
            tally[0] += 1
            tally[1] += keep in out
            if keep not in out:
                result.lost.append(f"{row['id']} {row['kind']}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leaks", action="store_true", help="list what leaked and was lost")
    parser.add_argument("--no-backstop", action="store_true", help="the rules alone")
    args = parser.parse_args(argv)
    result = measure(backstop=not args.no_backstop)
    values, whole, fragment, negatives, kept = result.totals()
    print(f"values {values}: no whole leak {whole} ({whole / values:.1%}), no fragment "
          f"{fragment} ({fragment / values:.1%}); negatives kept {kept} of {negatives}; "
          f"texts changed by a second scrub: {result.not_idempotent}")  # fmt: skip
    print("kinds with a leak:")
    for kind, (n, w, f) in sorted(result.values.items()):
        if w < n or f < n:
            print(f"  {kind}: {w}/{n} whole, {f}/{n} fragment-free")
    print("negatives per kind:")
    for kind, (n, k) in sorted(result.negatives.items()):
        print(f"  {kind}: {k}/{n}")
    if args.leaks:
        print("\n".join(["leaked:", *result.leaks, "lost:", *result.lost]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
