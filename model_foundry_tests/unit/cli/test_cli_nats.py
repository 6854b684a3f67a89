"""model-foundry nats status: a table whose columns fit their content."""

from __future__ import annotations

from model_foundry.cli.nats import status_table
from model_foundry.lib.nats.consumers import ConsumerPending


def pending(subject: str, consumers: tuple[str, ...], waiting: int, acks: int) -> ConsumerPending:
    return ConsumerPending(
        subject=subject,
        consumer=" + ".join(consumers),
        num_pending=waiting,
        num_ack_pending=acks,
        num_redelivered=0,
        ack_wait_s=30.0,
        consumers=consumers,
    )


def test_status_columns_fit_the_longest_names() -> None:
    # A 2.9 server's partition drains a consumer per subject name: a long consumer column.
    long = ("inbox_llm_chat_persist", "inbox_pipeline_events_llm_chat_persist_legacy_name")
    table = status_table(
        [
            pending("llm.chat.persist", long, 1_234_567, 3),
            pending("llm.tool_call", ("inbox_llm_tool_call",), 0, 12),
        ]
    ).splitlines()
    joined = " + ".join(long)
    consumer = len(joined)  # the longest cell: the column's width
    assert table == [
        f"subject           {'consumer'.ljust(consumer)}    pending  ack_pending",
        f"llm.chat.persist  {joined}  1,234,567            3",
        f"llm.tool_call     {'inbox_llm_tool_call'.ljust(consumer)}          0           12",
    ]
    header, first, second = table
    # Text columns start under their header, numbers end under theirs.
    assert first.index("inbox_") == second.index("inbox_") == header.index("consumer")
    assert len(header) == len(first) == len(second)
