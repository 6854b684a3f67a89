"""The drain's writer thread: a drain's commits, one at a time and in order, off the event
loop."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from model_foundry.lib.inbox import arrow_rows
from model_foundry.lib.inbox.drain.commit import Committed, ReadyBatch, commit_batch
from model_foundry.lib.storage import BatchWriter

# DuckDB threads of the drain's writer. A batch's statements touch a few thousand rows, too
# few to gain from parallel execution, and on a small machine a second DuckDB worker only
# competes with the event loop that fetches and validates the next batch.
WRITER_THREADS = 1


class _EarlierBatchNotCommitted(Exception):
    """A batch queued behind one whose commit failed: it is not written, so nothing is
    committed after a failed batch, and its messages are redelivered after ack_wait."""


class WriterThread:
    """The writer's own thread: it runs a drain's commits one at a time, in the order they
    were queued, and starts each as soon as the one before it returned, without waiting for
    the event loop (which may be validating a batch for a while between two awaits). Once a
    commit fails, none queued after it is written."""

    def __init__(self, writer: BatchWriter) -> None:
        self.writer = writer
        arrow_rows.warm()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-writer")
        self._failed = False

    def commit(self, stream: str, ready: ReadyBatch, budget: int) -> asyncio.Future[Committed]:
        return asyncio.wrap_future(self._thread.submit(self._commit, stream, ready, budget))

    def _commit(self, stream: str, ready: ReadyBatch, budget: int) -> Committed:
        if self._failed:
            raise _EarlierBatchNotCommitted
        try:
            committed = commit_batch(self.writer, stream, ready, budget)
        except BaseException:
            self._failed = True
            raise
        if committed.error is not None:
            self._failed = True
        return committed

    async def release(self) -> None:
        """Let the file go, after every commit queued before."""
        await asyncio.wrap_future(self._thread.submit(self.writer.release))

    def close(self) -> None:
        self._thread.shutdown(wait=False)


__all__ = ["WRITER_THREADS", "WriterThread"]
