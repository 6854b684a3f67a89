"""``model-foundry bench client`` run tiny: every row goes through its real client against the
canned server and reports the figures the docs quote, each client receiving every token the
server sent (no timing is asserted: the ratios are the benchmark's, in docs/benchmarks.md)."""

from __future__ import annotations

import json

import pytest

from model_foundry.cli import build_parser

pytestmark = pytest.mark.timeout(600)

ROW_FIELDS = {
    "client", "stream", "requests", "cpu_s", "tokens_sent", "cpu_per_token_us",
    "startup_cpu_s", "offered_tps", "achieved_tps", "achieved_ratio", "client_wait_ms",
    "completed", "tokens_received", "max_in_flight", "stalled_ticks", "wall_s",
    "unknown_paths",
}  # fmt: skip


@pytest.mark.parametrize(
    ("api", "clients"),
    [
        ("chat", ["collect", "collect-nostream", "recipe", "sdk", "sdk-nostream", "lean"]),
        ("completions", ["collect", "sdk", "lean"]),
    ],
)
def test_bench_client_rows_receive_every_token_sent(
    api: str, clients: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tokens, in_flight = 12, 4
    args = build_parser().parse_args(
        ["bench", "client", "--tokens", str(tokens), "--interval-ms", "5", "--in-flight",
         str(in_flight), "--slots", "2", "--sizes", "3", "9", "--api", api,
         "--clients", *clients, "--json"]
    )  # fmt: skip
    code = args.func(args)
    *rows, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert code == 0, rows
    assert [r["client"] for r in rows] == clients
    for r in rows:
        assert set(r) == ROW_FIELDS, r
        # Sizes are rounded up to whole rounds of the places (2 slots x 2).
        assert r["requests"] == [4, 12], r
        assert r["completed"] == 12, r
        assert r["tokens_sent"] == [4 * tokens, 12 * tokens], r
        assert r["tokens_received"] == 12 * tokens, r
        # Never more requests at once than the slots allow, and no path the server lacks.
        assert 0 < r["max_in_flight"] <= in_flight, r
        assert r["unknown_paths"] == {}, r
        assert r["stream"] is (not r["client"].endswith("nostream"))
        assert r["startup_cpu_s"] is not None and 0 < r["startup_cpu_s"] < r["cpu_s"][0], r
        assert isinstance(r["cpu_per_token_us"], float), r
        assert r["offered_tps"] == in_flight * 200.0
        assert 0 < r["achieved_tps"] <= r["offered_tps"] * 1.05, r
        assert r["client_wait_ms"] >= 0, r
    assert summary["tokens_match"] is True
    assert summary["setup"]["sizes"] == [4, 12]
    if api == "chat":
        for key in ("collect_over_lean", "collect_over_sdk", "nostream_over_sdk"):
            assert isinstance(summary[key], float), summary
    assert summary["max_startup_cpu_s"] == max(
        r["startup_cpu_s"] for r in rows if r["client"] in ("collect", "collect-nostream", "recipe")
    )
