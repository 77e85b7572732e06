"""Scale-out benchmark: graphops on 1, 2, 4… GPUs through Dask, beside cuGraph's single- and
multi-GPU Jaccard, in one process (needs dask-cuda, dask-cudf, cuGraph and pylibraft)::

    python -m graphops.cli.scaling --gpus 1 2 4 --scales 22 24 --train 100000 --big-scale 26 --out scaling.json

* **jaccard**: every edge of an R-MAT graph (``rmat(device="gpu")``, edge factor 16) scored by
  graphops' gpu backend on one GPU, then on ``LocalCUDACluster`` s of k GPUs (the graph sent to
  every worker once, the pairs split by work), beside ``cugraph.jaccard`` and ``cugraph.dask``'s
  multi-GPU Jaccard; the values are checked equal to one GPU's, bit for bit.
* **Gram matrices** (mg_kernel, sp_kernel): a test set against ``--train`` generated
  molecule-sized graphs, rows of the matrix split over the workers; checked equal.
* **a graph too large for one GPU** (``--big-scale``): R-MAT drawn on the workers straight into a
  dask-cuDF frame (each worker its share of the samples), scored on column slices; the peak
  device memory of each worker is sampled, and the same frame is tried on one GPU first.

Times are medians of ``--repeat`` calls after one untimed call (the first call's time, which
includes sending the inputs, is reported too). The speed-up is over graphops on one GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from typing import Any, Callable

import graphops as go
from graphops.engine.cluster import cuda_protocol

_PEAK: dict[str, Any] = {}


def _peak_start() -> None:  # on a worker (or here): sample the device's used memory every 20 ms
    import cupy as cp

    _PEAK.update(stop=False, peak=0)

    def poll() -> None:
        while not _PEAK["stop"]:
            free, total = cp.cuda.runtime.memGetInfo()
            _PEAK["peak"] = max(_PEAK["peak"], total - free)
            time.sleep(0.02)

    _PEAK["thread"] = threading.Thread(target=poll, daemon=True)
    _PEAK["thread"].start()


def _peak_stop() -> int:
    _PEAK["stop"] = True
    _PEAK["thread"].join()
    return int(_PEAK["peak"])


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, tuple[float, ...], Any]:
    """(first call's seconds, later calls' seconds, the last value), timed by graphops.base.timing
    (queued GPU work included); only the last value is kept."""
    from graphops.base.timing import timed

    last: list[Any] = [None]

    def call() -> None:
        last[0] = fn()

    first = timed(call).times[0]
    return first, timed(call, repeat).times, last[0]


def _sync_frame(frame: Any) -> Any:
    """A Dask frame's partitions computed and waited for on the workers (not brought here)."""
    from distributed import wait

    persisted = frame.persist()
    wait(persisted)
    return persisted


class Table:
    """Rows printed as they come (and written to ``out``), then as a Markdown table."""

    def __init__(self, out: str | None, device: str = "gpu"):
        self.rows: list[dict[str, Any]] = []
        self.out, self.device = out, device

    def add(self, **row: Any) -> None:
        self.rows.append(row)
        base = [r for r in self.rows if r["case"] == row["case"] and r.get("baseline")]
        if base and row.get("median") and base[0].get("median"):
            row["speedup"] = base[0]["median"] / row["median"]
        line = " | ".join(f"{k}={_fmt(v)}" for k, v in row.items())
        print(line, flush=True)
        if self.out:
            with open(self.out, "w") as f:
                json.dump({"machine": _machine(self.device), "date": time.strftime("%Y-%m-%d %H:%M"), "rows": self.rows}, f,
                          indent=1, default=str)

    def markdown(self) -> str:
        lines = [f"| case | run | {'GPUs' if self.device == 'gpu' else 'workers'} | first call s | median s | speed-up vs one device | equal | note |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            lines.append(f"| {r['case']} | {r['run']} | {r['gpus']} | {_fmt(r.get('first'))} | {_fmt(r.get('median'))} | "
                         f"{_fmt(r.get('speedup'), 'x')} | {_fmt(r.get('equal'))} | {r.get('note', '')} |")
        return "\n".join(lines)


def _fmt(v: Any, suffix: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}{suffix}" if v < 100 else f"{v:,.0f}{suffix}"
    return str(v)


def _machine(device: str = "gpu") -> dict[str, Any]:
    import platform

    if device == "cpu":
        return {"workers of": "CPU processes", "cpus": os.cpu_count(), "cpu": platform.processor() or platform.machine()}
    import cupy as cp

    n = cp.cuda.runtime.getDeviceCount()
    return {"gpus": n, "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cpus": os.cpu_count(),
            "protocol": PROTOCOL}


PROTOCOL = "tcp"  # --protocol: how GPU workers and this process move data (graphops.engine.cluster.cuda_protocol)


def _cluster(k: int, device: str = "gpu") -> Any:
    """k GPU workers (dask-cuda), or k CPU worker processes sharing the cores (``--device cpu``,
    to try this benchmark on a machine without GPUs)."""
    if device == "cpu":
        from distributed import LocalCluster

        return LocalCluster(n_workers=k, threads_per_worker=max(1, (os.cpu_count() or 1) // k), processes=True,
                            dashboard_address=":0", env={"CUDA_VISIBLE_DEVICES": ""})
    from dask_cuda import LocalCUDACluster

    return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(k)), dashboard_address=":0",
                            protocol=PROTOCOL)


def _equal(a: Any, b: Any) -> bool:
    from graphops.base.device import device_of

    return bool(device_of(a).xp.array_equal(a, b))


def jaccard(scale: int, gpus: list[int], repeat: int, table: Table, device: str = "gpu") -> None:
    from distributed import Client

    from graphops.io.generate import rmat

    g = rmat(scale, 16, seed=42, device=device)
    case = f"jaccard R-MAT {scale} ({g.n_edges:,} edges)"
    first, times, ref = _timed(lambda: go.run("jaccard", g, backend=device), repeat)
    table.add(case=case, run=f"graphops {device}", gpus=1, first=first, median=statistics.median(times), baseline=True)
    ref_j = ref["jaccard_coeff"].values
    if device == "gpu":
        first, times, peer = _timed(lambda: go.run("jaccard", g, backend="cugraph"), 1)
        table.add(case=case, run="cugraph.jaccard", gpus=1, first=first, median=statistics.median(times),
                  note="same pairs; its own order")
        del peer
    for k in gpus:
        with _cluster(k, device) as cluster, Client(cluster) as client:
            first, times, out = _timed(lambda: go.run("jaccard", g, backend=device, client=client), repeat)
            table.add(case=case, run=f"graphops {device}, graph on every worker", gpus=k, first=first,
                      median=statistics.median(times), equal=_equal(out["jaccard_coeff"].values, ref_j),
                      note="first call sends the graph")
            del out
            if device == "gpu":
                _cugraph_dask(g, k, client, repeat, case, table)
            _dask_frame(g, k, client, ref_j, repeat, case, table, device)


def _cugraph_dask(g: Any, k: int, client: Any, repeat: int, case: str, table: Table) -> None:
    try:
        import cugraph
        import cugraph.dask as dcg
        from cugraph.dask.comms import comms
    except ImportError as exc:
        table.add(case=case, run="cugraph.dask.jaccard", gpus=k, note=f"not run: {exc}")
        return
    comms.initialize(p2p=True)
    try:
        edges = _scattered_frame(client, g.edges[["src", "dst"]], k)
        G = cugraph.Graph(directed=False)
        G.from_dask_cudf_edgelist(edges, source="src", destination="dst")
        pairs = edges.rename(columns={"src": "first", "dst": "second"})
        first, times, _ = _timed(lambda: _sync_frame(dcg.jaccard(G, vertex_pair=pairs)), repeat)
        table.add(case=case, run="cugraph.dask.jaccard", gpus=k, first=first, median=statistics.median(times),
                  note="multi-GPU cuGraph; graph built before timing")
    finally:
        comms.destroy()


def _scattered_frame(client: Any, frame: Any, parts: int) -> Any:
    """``frame`` as a Dask frame of ``parts`` partitions already on the workers (scattered, not
    embedded in a task graph: Dask warns about and slows down graphs of hundreds of MiB)."""
    from graphops.engine.slices import frame_on

    bounds = [len(frame) * j // parts for j in range(parts + 1)]
    return frame_on(client.scatter([frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]), frame.iloc[:0])


def _dask_frame(g: Any, k: int, client: Any, ref_j: Any, repeat: int, case: str, table: Table,
                device: str = "gpu") -> None:
    dg = go.Graph.from_edgelist(_scattered_frame(client, g.edges[["src", "dst"]], 4 * k))
    first, times, out = _timed(lambda: _sync_frame(go.run("jaccard", dg, backend=device, client=client)), repeat)
    got = out.compute()["jaccard_coeff"].values
    table.add(case=case, run=f"graphops {device}, Dask edge frame (column slices)", gpus=k, first=first,
              median=statistics.median(times), equal=_equal(got, ref_j), note="first call builds the slices; later calls reuse them")


def gram(train: int, test: int, gpus: list[int], repeat: int, table: Table, device: str = "gpu") -> None:
    import numpy as np
    from distributed import Client

    from graphops.base.device import Device, to_device
    from graphops.io.generate import gnp_set
    from graphops.kernels import Constant, KroneckerDelta

    sizes = {12: train // 4, 18: train // 4, 24: train // 4, 30: train - 3 * (train // 4)}
    train_set = gnp_set(sizes, p=0.12, seed=7)
    test_set = gnp_set({20: test}, p=0.12, seed=8)
    kd = KroneckerDelta(0.5, on="label")
    calls = {"mg_kernel": dict(node_kernel=kd, edge_kernel=Constant(1.0)), "sp_kernel": {}}
    for name, kw in calls.items():
        case = f"{name} {test} x {train:,} molecule-sized graphs"
        first, times, ref = _timed(lambda: go.run(name, test_set, train_set, backend=device, **kw), repeat)
        ref = to_device(ref, Device.CPU)
        table.add(case=case, run=f"graphops {device}", gpus=1, first=first, median=statistics.median(times),
                  baseline=True)
        for k in gpus:
            with _cluster(k, device) as cluster, Client(cluster) as client:
                first, times, out = _timed(lambda: go.run(name, test_set, train_set, backend=device, client=client,
                                                          **kw), repeat)
                out = to_device(out, Device.CPU)
                table.add(case=case, run=f"graphops {device}, Gram blocks on workers", gpus=k, first=first,
                          median=statistics.median(times), equal=bool(np.array_equal(out, ref)))


def _rmat_share(scale: int, samples: int, seed: int) -> Any:  # on a worker
    import cupy as cp
    import cudf
    from pylibraft.random import rmat as raft_rmat

    theta = cp.tile(cp.asarray((0.57, 0.19, 0.19, 0.05), dtype=cp.float64), scale)
    pairs = cp.empty((samples, 2), dtype=cp.int64)
    raft_rmat(pairs, theta, scale, scale, seed=seed)
    keep = pairs[:, 0] != pairs[:, 1]
    return cudf.DataFrame({"src": pairs[keep, 0], "dst": pairs[keep, 1]})


def big(scale: int, k: int, table: Table) -> None:
    """A graph drawn on the workers (never on one GPU), scored on column slices; then the same
    frame tried on one GPU."""
    import dask
    import dask.dataframe as dd
    from distributed import Client

    case = f"jaccard R-MAT {scale}, drawn on the workers"
    samples = 16 << scale
    with _cluster(k) as cluster, Client(cluster) as client:
        parts = 4 * k
        futures = [client.submit(_rmat_share, scale, samples // parts, 1000 + i, pure=False) for i in range(parts)]
        meta = client.submit(lambda f: f.iloc[:0], futures[0]).result()
        ddf = _sync_frame(dd.from_delayed([dask.delayed(f) for f in futures], meta=meta, verify_meta=False))
        rows = int(ddf.shape[0].compute())
        client.run(_peak_start)
        t0 = time.perf_counter()
        try:
            out = _sync_frame(go.run("jaccard", go.Graph.from_edgelist(ddf), backend="gpu", client=client))
            seconds = time.perf_counter() - t0
            pairs = int(out.shape[0].compute())
            note = f"{rows / 1e6:,.0f} M rows, {pairs / 1e6:,.0f} M distinct edges scored"
        except Exception as exc:  # the measurement is the point: say what happened
            seconds, note = None, f"failed: {type(exc).__name__}: {str(exc)[:200]}"
        peaks = client.run(_peak_stop)
        peak = max(peaks.values()) / 2**30
        table.add(case=case, run="graphops gpu, dask-cuDF edge frame (column slices)", gpus=k, median=seconds,
                  note=f"{note}; peak device memory per GPU {peak:.1f} GiB")
        if seconds is None:
            return
        del out
        local = ddf.compute()  # the same edges on one GPU (here, GPU 0)
    _peak_start()
    t0 = time.perf_counter()
    try:
        res = go.run("jaccard", go.Graph.from_edgelist(local), backend="gpu")
        seconds, note = time.perf_counter() - t0, f"{len(res) / 1e6:,.0f} M pairs"
    except Exception as exc:
        seconds, note = None, f"{type(exc).__name__}: {str(exc)[:160]}"
    peak = _peak_stop() / 2**30
    table.add(case=case, run="graphops gpu, whole graph on one GPU", gpus=1, median=seconds,
              note=f"{note}; peak device memory {peak:.1f} GiB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m graphops.cli.scaling", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=[2, 4], help="cluster sizes (one GPU is always run)")
    ap.add_argument("--scales", type=int, nargs="*", default=[22, 24], help="R-MAT scales for jaccard")
    ap.add_argument("--train", type=int, default=100_000, help="graphs in the Gram matrices' training set (0: skip)")
    ap.add_argument("--test", type=int, default=200, help="graphs in the test set")
    ap.add_argument("--big-scale", type=int, default=0, help="R-MAT scale drawn on the workers (0: skip)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=["jaccard", "gram", "big"], nargs="*")
    ap.add_argument("--out", help="JSON of the rows, written as they come")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu",
                    help="cpu: worker processes instead of GPUs (no cuGraph, no --big-scale), to try it anywhere")
    ap.add_argument("--protocol", choices=["auto", "tcp", "ucx"], default="auto",
                    help="GPU clusters: ucx (NVLink / CUDA IPC; auto: when distributed-ucxx is installed) or tcp")
    args = ap.parse_args(argv)
    global PROTOCOL
    PROTOCOL = cuda_protocol(args.protocol)
    if args.device == "gpu":
        import cupy as cp

        have = cp.cuda.runtime.getDeviceCount()
    else:
        have = os.cpu_count() or 1
    gpus = [k for k in args.gpus if 1 <= k <= have]
    table = Table(args.out, args.device)
    only = set(args.only or ["jaccard", "gram", "big"])
    if "jaccard" in only:
        for scale in args.scales:
            jaccard(scale, gpus, args.repeat, table, args.device)
    if "gram" in only and args.train:
        gram(args.train, args.test, gpus, args.repeat, table, args.device)
    if "big" in only and args.big_scale:
        if args.device != "gpu":
            ap.error("--big-scale draws its graph with pylibraft on GPU workers: it needs --device gpu")
        big(args.big_scale, max(gpus), table)
    print(f"\n{_machine(args.device)}, {time.strftime('%Y-%m-%d %H:%M')}\n")
    print(table.markdown())
    return 0


if __name__ == "__main__":
    # Run from the imported module, not from __main__: functions sent to workers (client.run,
    # submit) are then pickled by reference, and module state such as _PEAK lives on the workers.
    from graphops.cli import scaling

    sys.exit(scaling.main())
