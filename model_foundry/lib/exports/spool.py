"""Texts' shingle sets spooled to a file, read back by position: what near-duplicate search
reads.

``lib/hygiene/dedup.find_duplicate_sketches`` reads each text's sorted shingle set (uint64)
by position: a sample, then every set in order, then the candidate pairs. Held in memory, a
million records' sets would be gigabytes; here each set is appended to one file as it is
made and an offset array (8 bytes a text) finds it again, through the page cache (read with
``pread``, so it is not this process's memory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
_ITEM = np.dtype(np.uint64).itemsize


class HashSpool(Sequence[U64]):
    """Append uint64 arrays, then read them by position (after :meth:`close_writes`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._out = path.open("wb")
        self._ends = np.zeros(1024, dtype=np.int64)
        self._n = 0
        self._size = 0
        self._fd: int | None = None

    def append(self, values: U64) -> None:
        data = np.ascontiguousarray(values, dtype=np.uint64).tobytes()
        self._out.write(data)
        self._size += len(data) // _ITEM
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
    def __getitem__(self, index: int) -> U64: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[U64]: ...
    def __getitem__(self, index: int | slice) -> U64 | Sequence[U64]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        start = int(self._ends[index - 1]) if index else 0
        end = int(self._ends[index])
        if self._fd is None:
            raise RuntimeError("HashSpool: close_writes() before reading")
        data = os.pread(self._fd, (end - start) * _ITEM, start * _ITEM)
        return np.frombuffer(data, dtype=np.uint64)

    def __iter__(self) -> Iterator[U64]:
        for i in range(self._n):
            yield self[i]


__all__ = ["HashSpool"]
