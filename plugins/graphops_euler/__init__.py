"""graphops plugin ``euler``: Euler circuits and paths (Hierholzer on the CPU, parallel
cycle merging on the GPU), a tour validator, and k-mer files for de Bruijn assembly."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Generator, Input, Reader, hookimpl

from .params import OUTPUTS, EulerParams

__all__ = ["graphops_register_algorithms", "graphops_register_readers", "graphops_register_generators"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="euler",
        params=EulerParams,
        inputs=(Input("graph", kinds=("graph",)),),
        backends={
            "cpu": Backend(target="graphops_euler.cpu:run", device="cpu", prepare="graphops_euler.common:prepare_cpu"),
            "gpu": Backend(target="graphops_euler.gpu:run", device="gpu", requires=("cupy",),
                           prepare="graphops_euler.common:prepare_gpu"),
            "networkx": Backend(target="graphops_euler.peer:run_networkx", device="cpu", requires=("networkx",),
                                peer=True, prepare="graphops_euler.peer:to_networkx"),
        },
        outputs=OUTPUTS,
        vertex_columns=("src", "dst"),
        summary="Euler circuit or path: every edge once, in walking order (step, src, dst, edge_id)",
        version_added="0.2",
        cost="graphops_euler.params:cost",
        writers={".fa": "graphops_euler.io:write_fasta", ".fasta": "graphops_euler.io:write_fasta"},
        functions={"is_euler_circuit": "graphops_euler.validate:is_euler_circuit",
                   "is_euler_path": "graphops_euler.validate:is_euler_path",
                   "euler_tour_problem": "graphops_euler.validate:tour_problem",
                   "NotEulerianError": "graphops_euler.common:NotEulerianError"},
    )]


@hookimpl
def graphops_register_readers() -> list[Reader]:
    return [Reader(name="kmers", suffixes=(".kmers",), target="graphops_euler.io:read_kmers", directed=True,
                   summary="k-mers, one de Bruijn arc each: (k-1)-mer prefix -> suffix")]


@hookimpl
def graphops_register_generators() -> list[Generator]:
    return [
        Generator("random_cycles", "graphops_euler.params:RandomCycles", "graphops_euler.io:random_cycles",
                  gpu=("cupy",), summary="a union of connected random closed walks (Eulerian)"),
        Generator("symmetric", "graphops_euler.params:Symmetric", "graphops_euler.io:symmetric", gpu=("cupy",),
                  summary="every edge of another graph of the file both ways (Eulerian when connected)"),
        Generator("de_bruijn", "graphops_euler.params:DeBruijn", "graphops_euler.io:de_bruijn",
                  summary="the de Bruijn graph of a string's k-mers (a random DNA string by default)"),
    ]
