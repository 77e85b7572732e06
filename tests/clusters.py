"""CPU Dask clusters for the tests of cluster calls (a module's ``client`` fixture)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest


def cpu_client(workers: int) -> Iterator[Any]:
    """A client of ``workers`` CPU worker processes, one thread each, no GPU visible to them (also on
    a GPU host); closed with its cluster after. Skips where Dask is not installed."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       env={"CUDA_VISIBLE_DEVICES": ""})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


class FileLanding:
    """A CPU stand-in for :class:`graphops.engine.landing.Landing` (CUDA IPC needs GPUs): a part's
    value written by its worker into a file the caller reads, so that the engine's path for
    values that land outside Dask's messages is tested on CPU clusters."""

    def __init__(self, path: str, offset: int, nbytes: int, dtype: str) -> None:
        self.path, self.offset, self.nbytes, self.dtype = path, offset, nbytes, dtype

    def receive(self, value: Any) -> Any:
        import numpy as np

        from graphops.engine.landing import Landed

        if str(value.dtype) != self.dtype or value.nbytes != self.nbytes:
            return value
        with open(self.path, "r+b") as fh:
            fh.seek(self.offset)
            fh.write(np.ascontiguousarray(value).tobytes())
        return Landed(self.nbytes)


class FileStaging:
    """The caller's side of :class:`FileLanding`: a file of ``nbytes`` bytes."""

    def __init__(self, path: str, nbytes: int) -> None:
        self.path, self.nbytes, self.busy, self.confirming = path, nbytes, True, False
        with open(path, "wb") as fh:
            fh.truncate(nbytes)

    def landing(self, offset: int, nbytes: int, dtype: str) -> FileLanding:
        return FileLanding(self.path, offset, nbytes, dtype)

    def view(self, offset: int, count: int, dtype: str) -> Any:
        import numpy as np

        return np.fromfile(self.path, dtype=dtype, count=count, offset=offset)
