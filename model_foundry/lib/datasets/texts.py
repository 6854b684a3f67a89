"""Record texts spooled to a file, read back by position: what near-duplicate search reads.

``lib/hygiene/dedup.find_duplicates`` takes a sequence of texts and reads them in order,
then a sample and the candidate pairs by position. Held in memory, a million 8 KB texts
would be 8 GB; here they are appended to one file and an offset array (8 bytes a text) finds
each, through the page cache (read with ``pread``, so it is not this process's memory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np


class TextSpool(Sequence[str]):
    """Append texts, then read them by position (after :meth:`close_writes`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._out = path.open("wb")
        self._ends = np.zeros(1024, dtype=np.int64)
        self._n = 0
        self._size = 0
        self._fd: int | None = None

    def append(self, text: str) -> None:
        data = text.encode("utf-8")
        self._out.write(data)
        self._size += len(data)
        if self._n == len(self._ends):
            self._ends = np.resize(self._ends, 2 * len(self._ends))
        self._ends[self._n] = self._size
        self._n += 1

    def close_writes(self) -> None:
        self._out.close()
        self._ends = self._ends[: self._n].copy()
        # pread, not mmap: mapped pages would count as this process's memory.
        self._fd = os.open(self.path, os.O_RDONLY)

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        start = int(self._ends[index - 1]) if index else 0
        end = int(self._ends[index])
        if self._fd is None:
            raise RuntimeError("TextSpool: close_writes() before reading")
        return os.pread(self._fd, end - start, start).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for i in range(self._n):
            yield self[i]


__all__ = ["TextSpool"]
