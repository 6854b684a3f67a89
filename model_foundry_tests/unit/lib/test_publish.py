"""publish --file: the whole file is checked first, each bad line one sentence naming it."""

import json
from pathlib import Path

import pytest

from model_foundry.cli import main
from model_foundry.lib.events import ALL_SUBJECTS
from model_foundry.lib.publish import (
    MAX_BAD_LINES_SHOWN,
    OutgoingEvent,
    bad_lines_shown,
    check_line,
    read_jsonl,
)

GOOD = {"event_id": "g1", "correlation_id": "s", "subject": "llm.tool_call", "payload": {}}


def _line(body: object) -> bytes:
    return json.dumps(body).encode() + b"\n"


def test_each_kind_of_bad_line_gets_its_reason() -> None:
    assert check_line(b"nope\n").startswith("not JSON")  # type: ignore[union-attr]
    assert check_line(_line([1])) == "not a JSON object (a list)"
    assert check_line(_line({"event_id": "x"})) == 'no "subject" field and no --subject given'
    unknown = check_line(_line({**GOOD, "subject": "llm.toolcall"}))
    assert isinstance(unknown, str) and unknown.startswith("unknown subject 'llm.toolcall'")
    # The sentence names every subject the stream takes, the older names included.
    assert all(s in unknown for s in ALL_SUBJECTS)
    assert isinstance(check_line(_line({**GOOD, "subject": 5})), str)


def test_good_lines_keep_their_bytes_subject_and_id() -> None:
    line = _line(GOOD)
    assert check_line(line) == OutgoingEvent("llm.tool_call", "g1", line.rstrip(b"\n"))
    legacy = _line({**GOOD, "subject": "knowledge.embedding"})
    assert check_line(legacy).subject == "knowledge.embedding"  # type: ignore[union-attr]
    # A default subject fills a missing one, and sends what is not an object as is (to
    # exercise the dead-letter path from a file).
    assert check_line(_line({"event_id": "x"}), "llm.tool_call").subject == "llm.tool_call"  # type: ignore[union-attr]
    assert check_line(b"raw bytes\r\n", "llm.tool_call") == OutgoingEvent(
        "llm.tool_call", "", b"raw bytes"
    )


def test_the_whole_file_is_read_and_each_bad_line_named(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(GOOD) + b"nope\n\n" + _line({**GOOD, "subject": "x.y"}) + _line(GOOD))
    read = read_jsonl(path)
    assert [e.event_id for e in read.events] == ["g1", "g1"]
    assert [b.split(": ")[0] for b in read.bad] == [f"{path}:2", f"{path}:4"]
    assert read.lines == 4


def test_past_the_limit_bad_lines_are_counted() -> None:
    bad = [f"f:{i}: not JSON" for i in range(MAX_BAD_LINES_SHOWN + 5)]
    shown = bad_lines_shown(bad)
    assert shown[:-1] == bad[:MAX_BAD_LINES_SHOWN] and shown[-1] == "... and 5 more bad lines"
    assert bad_lines_shown(bad[:3]) == bad[:3]


def test_a_bad_line_stops_the_publish_before_any_connection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The unit tier refuses sockets: reaching NATS at all would fail this test.
    path = tmp_path / "events.jsonl"
    path.write_bytes(_line(GOOD) + b"nope\n" + _line({**GOOD, "subject": "x.y"}))
    assert main(["publish", "--file", str(path)]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 3, err
    assert lines[0].startswith(f"{path}:2: not JSON")
    assert lines[1].startswith(f"{path}:3: unknown subject 'x.y'")
    assert lines[2] == (
        f"model-foundry: {path}: 2 of 3 lines are bad, so nothing was published; "
        "--skip-bad publishes the other 1"
    )
    assert main(["publish", "--file", str(path), "--subject", "x.y"]) == 1
    assert capsys.readouterr().err.startswith("model-foundry: --subject: unknown subject 'x.y'")
