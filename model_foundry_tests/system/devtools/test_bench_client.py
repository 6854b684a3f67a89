"""``model-foundry bench client`` run tiny: every row goes through its real client against the
canned server and reports the figures the docs quote, each client receiving every token the
server sent (no timing is asserted: the ratios are the benchmark's, in docs/benchmarks.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from model_foundry.cli import build_parser
from model_foundry.devtools.bench.client import Run, Setup, canned_server, measure

pytestmark = pytest.mark.timeout(600)

ROW_FIELDS = {
    "client", "stream", "requests", "cpu_s", "tokens_sent", "cpu_per_token_us",
    "startup_cpu_s", "offered_tps", "achieved_tps", "achieved_ratio", "client_wait_ms",
    "completed", "tokens_received", "max_in_flight", "stalled_ticks", "wall_s",
    "unknown_paths", "cpu_per_request_ms", "asleep_cpu_share",
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
         str(in_flight), "--slots", "2", "--sizes", "3", "9", "--api", api, "--hold-s", "1",
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
        assert isinstance(r["cpu_per_request_ms"], float), r
        # Every client had its round of requests out at once, so the hold read its CPU.
        assert r["asleep_cpu_share"] is not None and 0 <= r["asleep_cpu_share"] < 1, r
    assert summary["tokens_match"] is True
    assert summary["setup"]["sizes"] == [4, 12]
    if api == "chat":
        for key in ("collect_over_lean", "collect_over_sdk", "nostream_over_sdk"):
            assert isinstance(summary[key], float), summary
        assert summary["recipe_cell_ms"] == round(
            rows[2]["cpu_per_request_ms"] - rows[0]["cpu_per_request_ms"], 3
        )
        assert summary["max_asleep_cpu_share"] == max(r["asleep_cpu_share"] for r in rows[:3])
    assert summary["max_startup_cpu_s"] == max(
        r["startup_cpu_s"] for r in rows if r["client"] in ("collect", "collect-nostream", "recipe")
    )


_HELD_CLIENT = """
import select, socket, sys, time
port, busy = int(sys.argv[1]), sys.argv[2] == "busy"
body = b'{"stream": true}'
socks = []
for _ in range(2):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /s0/v1/chat/completions HTTP/1.1\\r\\nhost: x\\r\\ncontent-length: %d"
              b"\\r\\n\\r\\n%s" % (len(body), body))
    socks.append(s)
while busy and not select.select(socks, [], [], 0)[0]:
    pass
for s in socks:
    data = b""
    while not data.endswith(b"0\\r\\n\\r\\n"):
        data += s.recv(65536)
"""


@pytest.mark.parametrize("busy", [False, True])
def test_the_hold_reads_the_clients_cpu_while_every_request_is_out(
    busy: bool, tmp_path: Path
) -> None:
    """The asleep figure can tell a client that spins from one that sleeps: a raw client
    opens two requests, then either blocks on its sockets or polls them in a loop."""
    setup = Setup(tokens=3, interval_ms=5.0)
    with canned_server(setup, tmp_path) as root:
        port = root.rsplit(":", 1)[1]
        argv = [sys.executable, "-c", _HELD_CLIENT, port, "busy" if busy else "asleep"]
        folder = tmp_path / "run"
        folder.mkdir()
        figures = measure(
            Run(argv, {}, lambda _out: None), root, folder, {"hold_at": 2, "hold_s": 1.0}
        )
    assert figures["held"] == 2, figures
    assert figures["completed"] == 2 and figures["tokens_sent"] == 6, figures
    assert figures["hold_span_s"] >= 1.0, figures
    share = figures["hold_cpu_s"] / figures["hold_span_s"]
    # A spinning process gets a tenth of a core and more even with every core busy (the suite's
    # other worker and more: a share of 0.25 failed once on a machine running three other
    # jobs); a blocked one is charged a tick (0.01 s) at most.
    assert share > 0.1 if busy else share < 0.05, figures
