"""graphops plugin ``appclass``: application classification (graph matching by belief propagation),
byte-identical to the PNNL/owensgroup reference programs."""
from __future__ import annotations

from graphops.plugin import Algorithm, Backend, Command, Generator, Input, Reader, hookimpl

from .params import OUTPUTS, AppclassParams

__all__ = ["graphops_register_algorithms", "graphops_register_readers", "graphops_register_commands",
           "graphops_register_generators"]


@hookimpl
def graphops_register_algorithms() -> list[Algorithm]:
    return [Algorithm(
        name="appclass",
        params=AppclassParams,
        inputs=(Input("data"), Input("pattern")),
        backends={
            "cpu": Backend(target="graphops_appclass.cpu:run", device="cpu",
                           prepare="graphops_appclass.common:prepare_cpu"),
            "gpu": Backend(target="graphops_appclass.gpu:run", device="gpu", requires=("cupy",),
                           prepare="graphops_appclass.common:prepare_gpu"),
        },
        outputs=OUTPUTS,
        result="array_or_frame",  # MU (DV x PV), or the top_k frame
        vertex_columns={"pattern_node": "pattern", "data_node": "data"},
        summary="Application classification: pattern-to-data graph matching by belief propagation (MU, DV x PV)",
        version_added="0.2",
        cost="graphops_appclass.params:cost",
    )]


@hookimpl
def graphops_register_readers() -> list[Reader]:
    return [Reader(name="appclass", suffixes=(), target="graphops_appclass.io:read_edge_frame",
                   nodes="graphops_appclass.io:read_vertex_frame",
                   function="graphops_appclass.io:read_appclass",
                   summary="the reference programs' *.Edges.csv / *.Vertex.csv (header 'ROWS COLUMNS')")]


def _arguments(parser) -> None:
    parser.add_argument("data_vertex", metavar="DATA_VERTEX", help="data graph *.Vertex.csv")
    parser.add_argument("data_edges", metavar="DATA_EDGES", help="data graph *.Edges.csv")
    parser.add_argument("pattern_vertex", metavar="PATTERN_VERTEX", help="pattern graph *.Vertex.csv")
    parser.add_argument("pattern_edges", metavar="PATTERN_EDGES", help="pattern graph *.Edges.csv")
    parser.add_argument("--backend", default="auto", help="auto (default), cpu or gpu")
    parser.add_argument("--schedule", default="auto", choices=("auto", "stored", "recompute"))
    parser.add_argument("--times", action="store_true", help="print read/compute/print times to stderr")


def _example_arguments(parser) -> None:
    from graphops.plugin import bounded

    parser.add_argument("folder", metavar="FOLDER", help="where to write data.Vertex.csv, data.Edges.csv, "
                                                         "pattern.Vertex.csv and pattern.Edges.csv")
    parser.add_argument("--nodes", type=bounded("--nodes", int, ge=2, le=2**31 - 1), default=5157,
                        help="data graph vertices (default 5157)")
    parser.add_argument("--edges", type=bounded("--edges", int, ge=1, le=2**40), default=186572,
                        help="data graph arcs, uniform at random (default 186572)")
    parser.add_argument("--node-features", type=bounded("--node-features", int, ge=1, le=4096), default=12,
                        help="features a vertex (default 12)")
    parser.add_argument("--edge-features", type=bounded("--edge-features", int, ge=1, le=4096), default=16,
                        help="features an arc (default 16)")
    parser.add_argument("--pattern-nodes", type=bounded("--pattern-nodes", int, ge=1, le=1024), default=9,
                        help="most neighbours of the pattern's sampled vertex (default 9)")
    parser.add_argument("--seed", type=bounded("--seed", int, ge=0, le=2**63 - 1), default=2,
                        help="random seed (default 2)")
    parser.add_argument("--digits", type=bounded("--digits", int, ge=1, le=17), default=8,
                        help="significant digits of the numbers written (default 8: an edge file of about 32 MB "
                             "at the default size; 17 writes the generated doubles exactly)")


@hookimpl
def graphops_register_commands() -> list[Command]:
    return [Command(name="appclass", summary="print MU like the reference programs (%e, one value per line)",
                    target="graphops_appclass.cli:main", arguments=_arguments),
            Command(name="appclass-example", summary="write a data graph and a pattern for graphops appclass "
                                                     "(by default of JohnsHopkins' size: 5,157 vertices, 186,572 "
                                                     "arcs, 12 and 16 features)",
                    target="graphops_appclass.cli:example", arguments=_example_arguments)]


@hookimpl
def graphops_register_generators() -> list[Generator]:
    return [Generator("pattern", "graphops_appclass.params:Pattern", "graphops_appclass.io:sample_pattern",
                      summary="a pattern sampled from another graph of the file: a vertex, its neighbours, "
                              "the edges among them")]
