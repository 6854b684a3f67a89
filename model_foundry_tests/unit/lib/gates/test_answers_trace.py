"""A program's output given as the answer: a stack trace or log lines alone (``noise_layout``),
kept when the prompt asks for one."""

from __future__ import annotations

from model_foundry.lib.gates.answers import gate

TRACE = """Traceback (most recent call last):
  File "app.py", line 12, in <module>
    main()
  File "app.py", line 8, in main
    return rows[3]
IndexError: list index out of range
"""
LOGS = """2026-12-07 10:41:02,118 INFO worker started
2026-12-07 10:41:02,140 WARNING queue empty, sleeping 5 s
2026-12-07 10:41:07,145 ERROR connection reset by peer
"""


def test_a_trace_or_a_log_as_the_whole_answer_is_noise() -> None:
    # The code a trace quotes under each File line is the trace's own.
    assert gate(TRACE, prompt="What is the capital of Portugal?") == "noise_layout"
    assert gate(LOGS, prompt="Summarise the plot of Hamlet.") == "noise_layout"


def test_a_trace_or_a_log_asked_for_is_kept() -> None:
    assert gate(LOGS, prompt="Give me three sample log lines from a worker.") is None
    assert gate(TRACE, prompt="What does a Python IndexError traceback look like?") is None


def test_an_answer_that_explains_a_trace_is_kept() -> None:
    answer = "The list has three items, so rows[3] is past its end:\n\n" + TRACE
    assert gate(answer, prompt="Why does my script fail?") is None


def test_a_schedule_of_dated_lines_is_no_log() -> None:
    schedule = (
        "2026-12-07 10:00 standup with the team\n2026-12-07 11:00 design review\n"
        "2026-12-07 14:00 Demo to the lab"
    )
    assert gate(schedule, prompt="What is on my calendar today?") is None
