"""A graph too large for one GPU: R-MAT drawn on the workers of a Dask cluster (a worker per GPU)
straight into a dask-cuDF edge frame, never in one place, then every edge's Jaccard coefficient
computed on column slices of it; each worker's peak device memory is sampled while it runs
(:func:`graphops.engine.devmem.peak_device_memory`), and printed with the time and edges per second.

    python examples/big_graph_on_workers.py --scale 26 --gpus 4

Needs ``pip install 'graphops[gpu,dask]'`` (cuDF, pylibraft, dask-cuda, dask-cudf). The result
stays a dask-cuDF frame on the workers (here only counted; ``out.to_parquet(folder)`` would write
it from there).
"""
from __future__ import annotations

import argparse
import importlib.util
import time
from typing import Any

import graphops as go
from graphops.plugin import add_up, bounded, cuda_protocol, peak_device_memory


def rmat_share(scale: int, samples: int, seed: int) -> Any:  # on a worker: its share of the edges
    import cudf
    import cupy as cp
    from pylibraft.random import rmat

    theta = cp.tile(cp.asarray((0.57, 0.19, 0.19, 0.05), dtype=cp.float64), scale)
    pairs = cp.empty((samples, 2), dtype=cp.int64)
    rmat(pairs, theta, scale, scale, seed=seed)
    keep = pairs[:, 0] != pairs[:, 1]
    return cudf.DataFrame({"src": pairs[keep, 0], "dst": pairs[keep, 1]})


def degree_counts(part: Any, n: int) -> Any:  # on a worker: each vertex's distinct edges in a partition
    import cupy as cp

    ends = cp.concatenate([part["first"].values, part["second"].values])
    return cp.bincount(ends, minlength=n).astype(cp.int64)


def min_degree_sum(part: Any, degrees: Any) -> int:  # on a worker: Σ min(d_u, d_v) of a partition's edges
    import cupy as cp

    return int(cp.minimum(degrees[part["first"].values], degrees[part["second"].values]).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=bounded("--scale", int, ge=1, le=32), default=26,
                    help="2**scale vertices, 16 samples per vertex; 1 to 32 (default: 26)")
    ap.add_argument("--gpus", type=bounded("--gpus", int, ge=1, le=1024), default=None,
                    help="workers: the first N GPUs, 1 to 1024 (default: all)")
    ap.add_argument("--repeat", type=bounded("--repeat", int, ge=1, le=100), default=2,
                    help="calls timed (the first builds the column slices, later ones reuse them); 1 to 100 "
                         "(default: 2)")
    args = ap.parse_args()

    missing = [m for m in ("cudf", "pylibraft", "dask_cuda", "dask_cudf") if importlib.util.find_spec(m) is None]
    if missing:  # looked up, not imported: no CUDA context in this process before the workers start
        ap.exit(2, f"{ap.prog}: needs a CUDA host with pip install 'graphops[gpu,dask]' (cuDF, pylibraft, dask-cuda, "
                   f"dask-cudf); missing here: {', '.join(missing)}\n")

    import dask
    import dask.dataframe as dd
    from dask_cuda import LocalCUDACluster
    from distributed import Client, wait

    with LocalCUDACluster(n_workers=args.gpus, dashboard_address=":0", protocol=cuda_protocol()) as cluster, \
            Client(cluster) as client:
        parts = 4 * len(client.scheduler_info()["workers"])
        samples = (16 << args.scale) // parts
        futures = [client.submit(rmat_share, args.scale, samples, 1000 + i, pure=False) for i in range(parts)]
        meta = client.submit(lambda f: f.iloc[:0], futures[0]).result()
        edges = dd.from_delayed([dask.delayed(f) for f in futures], meta=meta, verify_meta=False).persist()
        wait(edges)
        rows = int(edges.shape[0].compute())
        graph = go.Graph.from_edgelist(edges)
        times = []
        with peak_device_memory(client) as peaks:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                done = go.execute_call("jaccard", graph, backend="gpu", client=client)
                out = done.result.persist()
                wait(out)
                times.append(time.perf_counter() - t0)
        scored = int(out.shape[0].compute())
        n = 1 << args.scale
        degrees = client.compute(dask.delayed(add_up)(*[dask.delayed(degree_counts)(p, n) for p in out.to_delayed()]))
        work = sum(client.gather(client.compute([dask.delayed(min_degree_sum)(p, degrees) for p in out.to_delayed()])))
        best = min(times)
        print(f"R-MAT {args.scale}: {rows / 1e6:,.0f} M edge rows drawn on {len(peaks)} worker(s) "
              f"({cluster.scheduler_address.split(':')[0]}); {scored / 1e6:,.0f} M distinct edges scored; calls "
              f"{', '.join(f'{t:.2f}' for t in times)} s (the first builds the column slices)")
        print(f"best call {best:.2f} s: {scored / best / 1e6:,.1f} M edges/s; work Σ min(d_u, d_v) = {work:.3e}, "
              f"{work / best / 1e9:,.2f} G/s")
        for address, peak in sorted(peaks.items()):
            spent = done.details["workers"].get(address, {}).get("phases_s", {})  # the last call's tasks, by kind
            print(f"  {address}: peak device memory {_gib(peak)}; last call: "
                  + ", ".join(f"{name} {s:.2f} s" for name, s in sorted(spent.items(), key=lambda x: -x[1])))
        known = [p for p in peaks.values() if p is not None]
        print(f"peak device memory per GPU: max {_gib(max(known) if known else None)}")


def _gib(nbytes: int | None) -> str:
    return "unknown (no usable GPU)" if nbytes is None else f"{nbytes / 2**30:.1f} GiB"


if __name__ == "__main__":
    main()
