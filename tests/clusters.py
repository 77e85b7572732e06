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
