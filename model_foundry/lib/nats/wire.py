"""The NATS and JetStream protocol values this code reads and writes: header names, the
status codes that end a pull request, the pull and ack subjects, and the acknowledgement
bodies.

They are the servers' spelling, not ours to choose; named once here so that every place that
uses one says which it means.
"""

from __future__ import annotations

# A publisher's id for its message: JetStream drops a second message with the same id inside
# the stream's duplicate window. Publishers set it to the event_id.
MSG_ID_HEADER = "Nats-Msg-Id"
# On a status message (no payload, no reply subject): its code, and the server's words.
STATUS_HEADER = "Status"
DESCRIPTION_HEADER = "Description"

# Status codes of the messages that answer a pull request.
STATUS_IDLE_HEARTBEAT = "100"
STATUS_NO_MESSAGES = "404"
STATUS_REQUEST_TIMEOUT = "408"
STATUS_NO_RESPONDERS = "503"

# A delivered message's reply subject starts ``$JS.ACK.``; its tokens carry the delivery.
ACK_SUBJECT_FIRST = "$JS"
ACK_SUBJECT_SECOND = "ACK"


def pull_next_subject(stream: str, consumer: str) -> str:
    """The JetStream API subject a pull request for ``consumer``'s next messages goes to."""
    return f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}"


# Acknowledgement bodies, published to a delivered message's reply subject: processed, or
# never to be redelivered.
ACK = b"+ACK"
TERM = b"+TERM"

__all__ = [
    "ACK",
    "ACK_SUBJECT_FIRST",
    "ACK_SUBJECT_SECOND",
    "DESCRIPTION_HEADER",
    "MSG_ID_HEADER",
    "STATUS_HEADER",
    "STATUS_IDLE_HEARTBEAT",
    "STATUS_NO_MESSAGES",
    "STATUS_NO_RESPONDERS",
    "STATUS_REQUEST_TIMEOUT",
    "TERM",
    "pull_next_subject",
]
