"""A graph too large for one GPU: R-MAT drawn on the workers of a Dask cluster (a worker per GPU)
straight into a dask-cuDF edge frame, never in one place, then every edge's Jaccard coefficient
computed on column slices of it; each worker's peak device memory is sampled while it runs.

    python examples/big_graph_on_workers.py --scale 26 --gpus 4

Needs the GPU extra with dask-cuda, dask-cudf and pylibraft. The result stays a dask-cuDF frame on
the workers (here only counted; ``out.to_parquet(folder)`` would write it from there).
"""
from __future__ import annotations

import argparse
import threading
import time
from typing import Any

import graphops as go
from graphops.plugin import bounded

_PEAK: dict[str, Any] = {}


def peak_start() -> None:  # on each worker: sample the device's used memory every 20 ms
    import cupy as cp

    _PEAK.update(stop=False, peak=0)

    def poll() -> None:
        while not _PEAK["stop"]:
            free, total = cp.cuda.runtime.memGetInfo()
            _PEAK["peak"] = max(_PEAK["peak"], total - free)
            time.sleep(0.02)

    _PEAK["thread"] = threading.Thread(target=poll, daemon=True)
    _PEAK["thread"].start()


def peak_stop() -> int:
    _PEAK["stop"] = True
    _PEAK["thread"].join()
    return int(_PEAK["peak"])


def rmat_share(scale: int, samples: int, seed: int) -> Any:  # on a worker: its share of the edges
    import cudf
    import cupy as cp
    from pylibraft.random import rmat

    theta = cp.tile(cp.asarray((0.57, 0.19, 0.19, 0.05), dtype=cp.float64), scale)
    pairs = cp.empty((samples, 2), dtype=cp.int64)
    rmat(pairs, theta, scale, scale, seed=seed)
    keep = pairs[:, 0] != pairs[:, 1]
    return cudf.DataFrame({"src": pairs[keep, 0], "dst": pairs[keep, 1]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=bounded("--scale", int, ge=1, le=32), default=26,
                    help="2**scale vertices, 16 samples per vertex")
    ap.add_argument("--gpus", type=bounded("--gpus", int, ge=1, le=1024), default=None,
                    help="workers (the first N GPUs; default all)")
    args = ap.parse_args()

    import dask
    import dask.dataframe as dd
    from dask_cuda import LocalCUDACluster
    from distributed import Client, wait

    with LocalCUDACluster(n_workers=args.gpus, dashboard_address=":0") as cluster, Client(cluster) as client:
        parts = 4 * len(client.scheduler_info()["workers"])
        samples = (16 << args.scale) // parts
        futures = [client.submit(rmat_share, args.scale, samples, 1000 + i, pure=False) for i in range(parts)]
        meta = client.submit(lambda f: f.iloc[:0], futures[0]).result()
        edges = dd.from_delayed([dask.delayed(f) for f in futures], meta=meta, verify_meta=False).persist()
        wait(edges)
        rows = int(edges.shape[0].compute())
        client.run(peak_start)
        t0 = time.perf_counter()
        out = go.run("jaccard", go.Graph.from_edgelist(edges), backend="gpu", client=client).persist()
        wait(out)
        seconds = time.perf_counter() - t0
        peaks = client.run(peak_stop)
        print(f"R-MAT {args.scale}: {rows / 1e6:,.0f} M edge rows drawn on {len(peaks)} worker(s); "
              f"{int(out.shape[0].compute()) / 1e6:,.0f} M distinct edges scored in {seconds:.1f} s; "
              f"peak device memory per GPU {max(peaks.values()) / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
