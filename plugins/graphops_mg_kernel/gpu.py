"""GPU backend of ``mg_kernel``: kernels/mg_kernel.cu through CuPy, the base kernels written in.

Graphs go to the device as octiles (tiles.py). The Gram matrix is filled in tiles of rows
(:func:`graphops.engine.gram.gram_rows`: interruptible, two tiles of device memory, copy-out overlapped).
For each tile the pairs are made on the device, given a class by their size (how many warps
solve one pair, how much shared memory it needs) and sorted by class and then by falling
work, so each class's launch hands out its biggest pairs first from its job counter.

A pair's class, solver path and orientation depend on the pair alone (its two graphs' sizes and
content keys: orient.py), never on the other graphs of a call, so K(G, G') is one number alone, in
a row, in a Gram, on the diagonal and in a cross matrix. A cross call runs as part of a square one
over both sets joined, so that either graph of a pair can be graph 1.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import cupy as cp
import numpy as np

from graphops.plugin import InputError, Result, chunks, gpu_attribute, gram_rows, load_module, phase, wait_idle

from .common import (KeptSchedules, NotConvergedError, Prepared, align16, diagonal_pairs, finish_gradient, gram_pairs, hyper_values, layout, layout_key,
                     nodewise_matrix, row_width, square_matrix, start_gradient, stats_check, with_layout)
from .lowrank import Terms, column_bytes, column_pair_bytes, factor_bytes, side, terms, unique_rows
from .orient import content_keys, joined
from .params import MGKernelParams
from .tiles import octiles

__all__ = ["run", "FAMILIES"]

log = logging.getLogger("graphops")

# Team sizes: (warps per team, output tiles per warp) of the tile solver, (warps, entries per
# thread) of the factored one, (warps, rows per warp, column chunks of 32; COLUMNS below) of the
# column solver, which takes the factored pairs it holds (at most warps x rows nodes in the first graph, 32 x
# chunks in the second). A pair goes to the first family that holds its unknowns and whose
# shared memory fits; one-warp teams share blocks of 8 warps.
FAMILIES = ((1, 2), (2, 2), (4, 2), (8, 2), (16, 2), (32, 2), (32, 4), (32, 8))
FACTORED = ((1, 8), (2, 8), (4, 8), (8, 8), (16, 8), (32, 8))
GLOBAL_WARPS = 8  # team of the global-memory path (pairs too large for shared memory)
# matvec='auto' factors edge kernels of at most this many terms. Measured on an H100 (float32), with
# the column solver: MUTAG (5 terms) factored 2.6 ms, tiles 5.0 ms; PTC_MR 6.8 against 7.9 ms; NCI1
# (1 term) 1.5 s against 5.8 s. (Before it, tiles won at 5 terms and the limit was 2.)
AUTO_TERMS = 8
# Threads resident per multiprocessor asked of the register allocator (1536: at most 42
# registers a thread). More resident warps hide the shared-memory latency of the mat-vec
# better than registers spare spills: measured on an H100, the README has the numbers.
RESIDENT_THREADS = 1536
# The column solver's shapes by precision, in the order a pair tries them: (warps, rows per warp,
# column chunks of 32, threads resident per multiprocessor asked of the register allocator). It
# keeps four registers per float32 unknown it owns (five in float64; x only for node-wise values):
# eight unknowns a thread fit 1024 resident threads in one-chunk teams (at most 64 registers), 768
# in two-chunk ones (80), sixteen fit 512 (128 registers). Measured on an H100 (NCI1's float32
# Gram, CUDA events per class):
# * at most 64 x 64 nodes: 248 ms in 16 warps x 4 rows, 165 ms in 8 x 8 (sixteen a thread);
# * at most 64 x 32: 172 ms in 8 x 8, 157 ms in 4 x 16 (768 and 512 threads, x in registers);
#   without x, 339 ms in 4 x 16 (512 threads), 349 ms at 640, 321 ms in 8 x 8 at 768, 318 ms at 1024;
# * at most 32 x 32: 193 ms in 4 x 8, 354 ms in 2 x 16; without x, 129 ms at 768 threads, 123 ms at 1024;
# * pairs up to 128 x 64 or 64 x 128 leave the factored solver (201 -> 142 ms);
# * at most 128 x 32 (without x): 59 ms in 8 x 16 at 512 threads, 74 ms in 16 x 8 at 1024;
# * pairs of two graphs above 64 nodes take 32 x 4 x 4 (1024 threads: 64 registers, spilling):
#   9 ms, where the factored solver and the global-memory path took 40 ms.
# float64 keeps eight unknowns a thread (sixteen would need about 192 registers).
COLUMNS = {
    np.float32: ((1, 8, 1, 1024), (2, 8, 1, 1024), (4, 8, 1, 1024), (8, 8, 1, 1024), (8, 16, 1, 512),
                 (1, 4, 2, 768), (2, 4, 2, 768), (4, 4, 2, 768), (8, 4, 2, 768), (8, 8, 2, 512),
                 (16, 8, 2, 512), (8, 4, 4, 512), (16, 4, 4, 512), (32, 4, 4, 1024)),
    np.float64: tuple((w, 8 // c, c, 512) for c in (1, 2) for w in (1, 2, 4, 8, 16)),
}
# Work of the first row tile before any timing, about 0.1 s on an H100: tile pairs (tiles),
# multiply-adds of one mat-vec (factored).
FIRST_WORK = {"tiles": 2e7, "factored": 4e9}
# A plan keeps the launch schedule (pairs sorted by class and work) of each row tile of at most
# KEPT_SCHEDULE_PAIRS pairs, so a repeated call (a benchmark, test against train in a loop) skips
# the sort; 16 bytes a pair of device memory, at most KEPT_PAIRS pairs a plan (NCI1's full Gram,
# 8.45 M pairs, twice: its tiles are cut by measured time, so a later call may cut them elsewhere).
KEPT_SCHEDULE_PAIRS = 1 << 20
KEPT_PAIRS = 1 << 24
# Every column class (warps, rows a warp, column chunks) has a twin kernel that solves a pair on
# colour 0 alone (mg_kernel.cu, MGK_COLUMNS_ONE_COLOUR), for pairs whose graph 1 has each colour in half
# the team's rows (lowrank.independent_split: no arc joins two nodes of colour 1). NCI1 on an H100
# (kernels by CUDA events, plain alone -> plain + twin), float32 8 x 8 x 1 264.3 -> 11.5 + 187.1 ms,
# 8 x 8 x 2 113.0 -> 0.8 + 91.1, 4 x 8 x 1 110.4 -> 1.3 + 80.7, 16 x 8 x 2 57.4 -> 45.8, 8 x 16 x 1
# 52.2 -> 42.7, 32 x 4 x 4 7.4 -> 5.9 (all 624.5 -> 483.4 ms); float64 8 x 4 x 2 521.3 -> 31.0 +
# 318.9, 16 x 4 x 2 412.1 -> 296.2, 4 x 8 x 1 320.5 -> 213.9, 8 x 8 x 1 297.7 -> 208.8 (all 2,312.6
# -> 1,745.4 ms). The shapes NCI1 leaves without pairs were not timed.
# In float32 the twins take pairs only when q >= TWIN_MIN_Q32. As q falls, x leans on the near-null
# direction of P - N and the rounding of P and of the mat-vecs is amplified about as 1/q, in the
# Schur solve more than in the plain one; and only graph 1 is split, so the Schur solve rounds a
# pair's two orientations differently, which a square Gram's mirrored half and a cross call see.
# GraphDot's cross-similarity test (unlabeled, q = 0.01) on an H100: the Gram's entry 452.26074
# and the cross call's 452.26141, 1.5e-6 apart (exact 452.26131; its check is 1e-6). A float32
# NumPy model of both solves on 300 random unlabeled pairs of 4-12 nodes gives the two
# orientations' worst relative gap, plain / Schur: q = 0.01 1.5e-6 / 2.3e-6, 0.02 6.9e-7 / 2.0e-6,
# 0.03 5.6e-7 / 9.8e-7, 0.05 5.6e-7 / 5.5e-7 (on the GraphDot pair the plain solve's two agree).
TWIN_MIN_Q32 = 0.03
# float32 calls with q below FLOAT32_MIN_Q are solved in float64 (gpu.run says so in the details). As
# q falls the system's smallest eigenvalue, about 2q of its diagonal, is what K measures, and the
# float32 rounding of the diagonal (1 / (1 - q)^2, the degree products) and of every mat-vec moves it
# by about 6e-8 / (2q) relative, whatever CG's tolerance: GraphDot's unlabeled case (constant kernels,
# K = n1 n2 / (1 - (1 - q)^2) exactly) was 1.2e-5 off on an H100 at q = 5e-4. A float32 model of the
# solve (NumPy: Jacobi CG, mat-vecs and updates in float32, dot products in float64, tol 1e-6) over
# 150 random unlabeled pairs of 2-15 nodes, worst relative error against that closed form: q = 5e-4
# 2.2e-5, 1e-3 3.2e-5, 2e-3 1.7e-5, 3e-3 5.4e-6, 5e-3 7.8e-6, 1e-2 1.6e-6, 2e-2 4.5e-7, 5e-2 7.1e-7
# (the model is the more pessimistic: 2.2e-5 where the H100 gave 1.2e-5).
FLOAT32_MIN_Q = 5e-3
SMALL_Q = ("q={q:g} is below {bound:g}, where float32 cannot reach 1e-5 relative (the system's rounding grows "
           "as 1/q): solved in float64")


def _one_colour(params: MGKernelParams, real: type) -> bool:
    """Whether graph 1's graphs are split for the twins (lowrank.independent_split): not for
    node-wise values (they keep the graphs' own order), and in float32 only when q >= TWIN_MIN_Q32."""
    return not params.nodewise and (real is np.float64 or params.q >= TWIN_MIN_Q32)


# One call's classes are launched on CLASS_STREAMS streams in turn: a class's teams take pairs
# from a counter until none is left and then retire one by one, and the next class's blocks start
# on the multiprocessors they leave (on one stream they wait for the last). NCI1's Gram on an
# H100, medians of 7 calls: float32 1, 2, 4, 8 streams 502.3, 495.7, 495.7, 496.6 ms; float64
# (of 3) 1 and 4 streams 1,896.7 and 1,720.7 ms.
CLASS_STREAMS = 4

_MODULES: dict[str, Any] = {}
_STREAMS: dict[tuple, list] = {}


def _streams(n: int) -> list:
    """``n`` streams of the current device, made once."""
    key = (cp.cuda.Device().id, n)
    if key not in _STREAMS:
        _STREAMS[key] = [cp.cuda.Stream(non_blocking=True) for _ in range(n)]
    return _STREAMS[key]


def _owner(chunks: int, resident: int) -> bool:
    """Whether a column team may take the owner path (mg_kernel.cu): one column chunk, or two at
    512 resident threads (128 registers). At 768 the 8 x 4 x 2 teams spilled (206.5 -> 216.8 ms);
    without x at every entry they no longer do, but NCI1's Gram still took 5 ms longer (749.9 ->
    754.8 ms of kernels), its pairs of 20-32 x 33-64 nodes staying there instead of being turned."""
    return chunks == 1 or (chunks == 2 and resident <= 512)


def _module(params: MGKernelParams, real: type, part: str) -> "_Kernels":
    """The solver's kernels for these kernels in ``real``: those of ``part`` (``tiles``: the tile
    families in the chosen primitive; ``factored``: the factored families; both with the
    global-memory kernel for pairs too large for shared memory; ``gradient``: the gradient
    kernels), each compiled on its first use, alone (:class:`_Kernels`)."""
    nk, ek = params.node_kernel, params.edge_kernel
    nw, ew = layout(params)
    nfn, nfe = row_width(nk.features, nw), row_width(ek.features, ew)
    (node, node_grad), (edge, edge_grad) = nk.row_source("c", nk.features, nw), ek.row_source("c", ek.features, ew)
    helpers = {**nk.helpers("c"), **ek.helpers("c")}  # sequence kernels' loops, before the macros that call them
    prefix = "\n".join([*helpers.values(),
        f"#define REAL {'float' if real is np.float32 else 'double'}",
        f"#define NFN {nfn}", f"#define NFE {nfe}", f"#define NHN {len(node_grad)}", f"#define NHE {len(edge_grad)}",
        f"#define NHP {len(params.start.hyperparameters)}",
        f"#define NODE_KERNEL(x, y, p) ({node})", f"#define EDGE_KERNEL(x, y, p) ({edge})",
        f"#define NODE_GRAD(x, y, p, out) {_statements(node_grad)}",
        f"#define EDGE_GRAD(x, y, p, out) {_statements(edge_grad)}",
        f"#define MGK_RESIDENT {RESIDENT_THREADS}",
        *(["#define MGK_NODEWISE 1"] if part == "factored" and params.nodewise else []),  # x at every entry
        ""])
    prim = params.primitive
    sparse = "true" if prim == "sparse" else "false"
    glob = {f"mgk_global_w{GLOBAL_WARPS}_{prim}": f"MGK_KERNEL(mgk_global_w{GLOBAL_WARPS}_{prim}, {GLOBAL_WARPS}, 1, "
                                                  f"{sparse}, false)"}
    if part == "tiles":
        lines = {f"mgk_w{w}_s{s}_{prim}": f"MGK_KERNEL(mgk_w{w}_s{s}_{prim}, {w}, {s}, {sparse}, true)"
                 for w, s in FAMILIES} | glob
    elif part == "factored":
        colours = ("",) if params.nodewise else ("", "o")
        lines = {f"mgk_c{o}_w{w}_k{k}_i{c}": f"MGK_COLUMNS{'_ONE_COLOUR' if o else ''}({w}, {k}, {c}, {n}, "
                                             f"{str(_owner(c, n)).lower()})"
                 for o in colours for w, k, c, n in COLUMNS[real]}
        lines |= {f"mgk_f_w{w}_s{s}": f"MGK_FACTORED({w}, {s})" for w, s in FACTORED} | glob
    else:
        lines = {f"mgk_gradient_w{GLOBAL_WARPS}": f"MGK_GRADIENT({GLOBAL_WARPS})",
                 f"mgk_nodal_gradient_w{GLOBAL_WARPS}": f"MGK_NODAL_GRADIENT({GLOBAL_WARPS})"}
    return _Kernels(prefix, lines)


@dataclass(frozen=True)
class _Kernels:
    """Kernels by name, each compiled alone on its first use (its module kept for the process,
    and by CuPy on disk). The file's instantiations compiled together took 70 s (the factored
    part in float32, nvcc on 2 cores) where one class takes 0.4-4 s: a call compiles the classes
    its pairs take, not the 35 the part declares (a first call on a fresh machine waited minutes)."""
    prefix: str
    lines: dict[str, str]

    def get_function(self, name: str) -> Any:
        line = self.lines[name]
        key = self.prefix + line
        if key not in _MODULES:
            _MODULES[key] = load_module(__package__, "mg_kernel", prefix=self.prefix, suffix=f"\n{line}\n")
        return _MODULES[key].get_function(name)


def _statements(expressions: list[str]) -> str:
    """One C statement writing each derivative into ``out``."""
    return "do { " + " ".join(f"out[{h}] = ({e});" for h, e in enumerate(expressions)) + " } while (0)"


@dataclass
class _Graphs:
    """One side's graphs on the device in one layout, and what the launch plan reads on the host:
    ``key`` (tile rows, or nodes) and ``bytes`` (staged in shared memory) per graph, ``work``;
    factored: ``column_bytes``, staged by the column solver."""
    args: tuple
    key: np.ndarray
    bytes: np.ndarray
    column_bytes: np.ndarray | None = None
    perm: np.ndarray | None = None
    dst: Any = None      # tiles: d(start probability)/d(its hyperparameters), nodes x NHP in the solver's order


def _tiled(prep: Prepared, params: MGKernelParams, real: type) -> _Graphs:
    def make() -> tuple[_Graphs, np.ndarray]:
        o = octiles(prep, params.node_kernel.features, params.edge_kernel.features, params.p, real, params.reorder,
                    layout(params))
        args = tuple(cp.asarray(a) for a in (o.info, o.trp, o.tcol, o.mask, o.w, o.ef, o.nf, o.deg, o.st))
        dst = np.empty((prep.n_nodes, len(params.start.hyperparameters) or 1), real)
        dst[o.perm + np.repeat(prep.node_ptr[:-1], np.diff(prep.node_ptr))] = start_gradient(prep, params.p)
        return _Graphs(args, o.nt.astype(np.int64), o.bytes, perm=o.perm, dst=cp.asarray(dst)), \
            o.tiles.astype(np.float64)

    return prep.cached(("tiles", params.node_kernel.features, params.edge_kernel.features, params.p, params.reorder,
                        real, layout_key(params)), make)


def _factored(prep: Prepared, t: Terms, first: bool, params: MGKernelParams, real: type) -> _Graphs:
    # graph 1's graphs split and renumbered colour 0 first where the twins solve on one colour
    colour = first and _one_colour(params, real)

    def make() -> tuple[_Graphs, np.ndarray]:
        f = side(prep, t, first, params.node_kernel.features, params.edge_kernel.features, params.p, real,
                 layout(params)[0], colour=colour)
        args = tuple(cp.asarray(a) for a in (f.info, f.rptr, f.col, f.val, f.nf, f.deg, f.st, f.most, f.half))
        nbytes = factor_bytes(f.n, f.n_terms, f.nnz, row_width(params.node_kernel.features, layout(params)[0]),
                              np.dtype(real).itemsize)
        cbytes = column_bytes(f.n, f.n_terms, f.most, first, np.dtype(real).itemsize)
        return _Graphs(args, f.n.astype(np.int64), nbytes, cbytes), f.nnz.astype(np.float64)

    return prep.cached(("factors", first, colour, t.signature, params.node_kernel.features, params.edge_kernel.features,
                        params.p, real, layout_key(params)), make)


@dataclass
class _Class:
    name: str
    kind: str            # "columns", "factored", "tiles" (staged) or "global"
    team_bytes: int      # shared bytes per team, or scratch entries per team (global)
    threads: int
    grid: int
    smem: int
    fn: Any = None       # the kernel (looked up once)


def _holds(kind: str, w: int, s: Any, kx: np.ndarray, ky: np.ndarray) -> np.ndarray:
    """Which pairs of keys (graph 1's in ``kx``, graph 2's in ``ky``) a family's team holds: the
    factored solver's w x s x 32 entries, the tile solver's w x s output tiles, the column solver's
    w x rows per warp rows by 32 x column chunks columns."""
    if kind == "columns":
        return (kx <= w * s[0]) & (ky <= 32 * s[1])
    entries = kx * (ky | 1) if kind == "factored" else kx * ky
    return w * s * (32 if kind == "factored" else 1) >= entries


def _sizes(G: _Graphs) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (key, bytes staged, column bytes) of a side's graphs, and each graph's
    row: a pair's class is decided on its own graphs' sizes, not on the largest graph of its key
    in the call (which would move a pair near the shared-memory limit with the other graphs)."""
    cols = [G.key, G.bytes, G.column_bytes if G.column_bytes is not None else np.zeros_like(G.key)]
    rows, code = unique_rows(np.stack([np.asarray(c, np.float64) for c in cols], axis=1))  # exact below 2**53
    return rows.astype(np.int64), code


def _factored_terms(ga: Prepared, gb: Prepared, params: MGKernelParams) -> Terms | None:
    """The edge kernel's few distinct values over both sets' edges (lowrank.terms) when the
    factored mat-vec is asked, or chosen (``auto``: at most AUTO_TERMS of them); None: tiles."""
    t = None
    if params.matvec != "tiles" and params.staging == "shared":
        t = terms(params.edge_kernel, ga, gb)
        if params.matvec == "auto" and t is not None and t.count > AUTO_TERMS:
            t = None
    if params.matvec == "factored" and t is None:
        raise InputError("mg_kernel: matvec='factored' needs an edge kernel with few distinct values over the "
                         "edges (e.g. KroneckerDelta on a label); this one has none: use matvec='tiles' or 'auto'")
    return t


def _families(kind: str, params: MGKernelParams, real: type) -> list[tuple]:
    """The team shapes a pair may take, (kind, warps, shape), in the order a pair tries them; the
    last is the global-memory path, which holds any pair."""
    if kind == "factored":
        families = [("columns", w, (k, c)) for w, k, c, _ in COLUMNS[real]] + [("factored", w, s) for w, s in FACTORED]
    else:
        families = [("tiles", w, s) for w, s in FAMILIES]
    if params.teams == "block":
        families = [f for f in families if f[1] * 32 >= 256]
    if params.staging == "global":
        families = []
    return families + [("global", GLOBAL_WARPS, 1)]


@dataclass
class _ClassTable:
    """Each pair's class by its two graphs' size rows (_sizes): ``table[size_a[i] * width +
    size_b[j]]`` indexes ``specs``; ``team_bytes`` of each class that some row pair takes: the
    shared bytes of its largest team (the global path: scratch entries)."""
    specs: list
    table: Any          # device, int32
    width: int
    size_a: Any         # per graph of set A (device): its size row
    size_b: Any
    team_bytes: dict

    def __call__(self, i: Any, j: Any) -> Any:
        return self.table[self.size_a[i] * self.width + self.size_b[j]]


def _class_table(A: _Graphs, B: _Graphs, t: Terms | None, params: MGKernelParams, real: type) -> _ClassTable:
    """Each row pair takes the first family that holds its unknowns and whose team fits in shared memory."""
    kind = "factored" if t is not None else "tiles"
    specs = _families(kind, params, real)
    size = np.dtype(real).itemsize
    limit = gpu_attribute("MaxSharedMemoryPerBlockOptin") - 2048  # the kernels' static arrays
    (rows_a, code_a), (rows_b, code_b) = _sizes(A), _sizes(B)
    staged_a, staged_b = rows_a[:, 1], rows_b[:, 1]
    nodes_a, nodes_b = rows_a[:, :1], rows_b[None, :, 0]  # (tile rows in the tile layout)
    if kind == "factored":
        entries = nodes_a * (nodes_b | 1)
        need = {"factored": (3 + t.count) * ((entries + 3) // 4 * 4) * size + staged_a[:, None] + staged_b[None, :],
                "columns": column_pair_bytes(nodes_a, nodes_b, t.count, size) + rows_b[None, :, 2]}
        column_row = rows_a[:, 2:]  # times the team's rows
        scratch = ((nodes_a + 7) // 8) * ((nodes_b + 7) // 8) * 64
    else:
        entries = nodes_a * nodes_b  # output tiles
        need = {"tiles": align16(entries * 64 * size) + staged_a[:, None] + staged_b[None, :]}
        scratch = entries * 64
    table = np.full(entries.shape, len(specs) - 1, np.int32)  # by default: global memory
    free = np.ones(entries.shape, bool)
    team_bytes: dict[int, int] = {}
    for c, (family, w, s) in enumerate(specs[:-1]):
        team = need[family] + (w * s[0] * column_row if family == "columns" else 0)
        fits = free & _holds(family, w, s, nodes_a, nodes_b) & ((8 if w == 1 else 1) * team <= limit)
        if fits.any():
            table[fits], free[fits] = c, False
            team_bytes[c] = int(team[fits].max())
    if free.any():
        team_bytes[len(specs) - 1] = int(np.broadcast_to(scratch, entries.shape)[free].max())
    return _ClassTable(specs, cp.asarray(table.reshape(-1)), len(rows_b), cp.asarray(code_a.astype(np.int64)),
                       cp.asarray(code_b.astype(np.int64)), team_bytes)


@dataclass
class _Twins:
    """The column classes' twins that solve on one colour: ``twin[c]`` the launch class of class
    c's twin (-1: none), ``rows[c]`` the rows of a colour it holds (half the team's), ``half`` each
    graph 1's nodes of colour 0 (0: not split)."""
    twin: Any
    rows: Any
    half: Any


@dataclass
class _Turning:
    """How a pair of a plan whose sides are one set is oriented (_Plan._turned): each graph's content
    key, and with one term (a constant edge kernel, so in every call alike) which classes may take
    the owner path, their column chunks, and which graphs have at most 4 arcs a node."""
    keys: Any
    owner: Any = None
    chunks: Any = None
    light: Any = None


class _Plan:
    """How the pairs of set A against set B are solved: the mat-vec (factored when the edge kernel
    has a short form, else tiles) with both sets staged for it (``staged_a``, ``staged_b``; the
    tile layout's copies ``tiled_a``, ``tiled_b`` for a factored plan's global-memory pairs), each
    pair's class (team size, shared memory: ``classes``) by the two graphs' sizes, the launches
    (``launches``, with the twins that solve on one colour), how a pair is turned (``turning``) and
    the schedules kept for repeated calls."""

    def __init__(self, ga: Prepared, gb: Prepared, params: MGKernelParams, real: type):
        self.ga, self.gb, self.params, self.real = ga, gb, params, real
        self.tol = params.tolerance(np.dtype(real).name)
        self.terms = _factored_terms(ga, gb, params)
        self.kind = "factored" if self.terms is not None else "tiles"
        self.module = _module(params, real, self.kind)
        if self.terms is not None:
            (self.staged_a, wa), (self.staged_b, wb) = (_factored(ga, self.terms, True, params, real),
                                                        _factored(gb, self.terms, False, params, real))
            na, nb = np.diff(ga.node_ptr).astype(np.float64), np.diff(gb.node_ptr).astype(np.float64)
            self.pair_work = (wa, na, wb, nb)  # work of (i, j): wa_i nb_j + na_i wb_j + na_i nb_j
        else:
            (self.staged_a, wa), (self.staged_b, wb) = _tiled(ga, params, real), _tiled(gb, params, real)
            self.pair_work = (wa, None, wb, None)  # tile pairs
        self._dev_work = tuple(None if w is None else cp.asarray(w) for w in self.pair_work)
        self.classes = _class_table(self.staged_a, self.staged_b, self.terms, params, real)
        self.nodes = cp.asarray(self.staged_a.key) if self.kind == "factored" else None  # graph 1's nodes
        self.launches, self.twins, self.n_launch = self._launches()
        if any(k.kind == "global" for k in self.launches.values()):
            self.tiled_a, self.tiled_b = _tiled(ga, params, real)[0], _tiled(gb, params, real)[0]
        self.scratch = {c: (cp.empty(k.grid * 4 * k.team_bytes, real), cp.empty(k.grid * k.team_bytes))
                        for c, k in self.launches.items() if k.kind == "global"}
        self.hyper = tuple(cp.asarray(v) for v in hyper_values(params))
        self.stats = cp.zeros(4, cp.uint64)
        self.turning = self._turning() if ga is gb else None
        self.schedules = KeptSchedules(KEPT_PAIRS)

    @property
    def n_classes(self) -> int:
        return len(self.classes.specs)

    def _launches(self) -> tuple[dict, _Twins | None, int]:
        """Every class some pair takes, and the twins of the column classes for pairs whose graph 1
        has each colour in half the team's rows (lowrank.Side.half), launched as classes n_classes,
        n_classes + 1, ...; and how many class numbers there are."""
        specs, team_bytes = self.classes.specs, self.classes.team_bytes
        launches = {c: self._launch_class(specs[c], b) for c, b in sorted(team_bytes.items())}
        if self.kind != "factored" or not _one_colour(self.params, self.real):
            return launches, None, len(specs)
        twin, rows = np.full(len(specs), -1, np.int32), np.zeros(len(specs), np.int64)
        n = len(specs)
        for c, (kind, w, s) in enumerate(specs):
            if kind == "columns" and c in team_bytes:
                twin[c], rows[c] = n, w * s[0] // 2
                launches[n] = self._launch_class(specs[c], team_bytes[c], one_colour=True)
                n += 1
        return launches, _Twins(cp.asarray(twin), cp.asarray(rows), self.staged_a.args[-1]), n  # args end with half

    def _turning(self) -> _Turning:
        keys = cp.asarray(content_keys(self.ga, self.params))
        if self.terms is None or self.terms.count != 1:
            return _Turning(keys)
        specs = self.classes.specs
        resident = {(w, k, c): r for w, k, c, r in COLUMNS[self.real]}
        return _Turning(keys, owner=cp.asarray([kind == "columns" and _owner(s[1], resident[(w, *s)])
                                                for kind, w, s in specs]),
                        chunks=cp.asarray([s[1] if kind == "columns" else 0 for kind, w, s in specs]),
                        light=self.staged_b.args[-2][:, 1] <= 4)  # args end with most and half (lowrank.Side)

    def _launch_class(self, spec: tuple, team_bytes: int, one_colour: bool = False) -> _Class:
        kind, w, s = spec
        prim = self.params.primitive
        if kind == "columns":
            name = f"mgk_c{'o' if one_colour else ''}_w{w}_k{s[0]}_i{s[1]}"
        else:
            name = {"factored": f"mgk_f_w{w}_s{s}", "tiles": f"mgk_w{w}_s{s}_{prim}",
                    "global": f"mgk_global_w{w}_{prim}"}[kind]
        threads = 256 if w == 1 else w * 32
        smem = (8 if w == 1 else 1) * team_bytes if kind != "global" else 0
        fn = self.module.get_function(name)
        if smem > 48 * 1024:  # the attribute is the function's: classes of one kernel differ in team bytes
            fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
        regs = max(fn.num_regs, 1)
        blocks = min(2048 // threads, 32, 65536 // (regs * threads),
                     gpu_attribute("MaxSharedMemoryPerMultiprocessor") // (smem + 3072))
        grid = gpu_attribute("MultiProcessorCount") * max(blocks, 1)
        if kind == "global":  # each team's scratch (4 vectors and x) in device memory: a quarter of what is free
            per_team = team_bytes * (4 * np.dtype(self.real).itemsize + 8)
            grid = max(1, min(grid, cp.cuda.runtime.memGetInfo()[0] // 4 // per_team))
        return _Class(name, kind, team_bytes, threads, grid, smem, fn)

    def pair_classes(self, pairs: np.ndarray) -> np.ndarray:
        """Each pair's class, on the host."""
        return self.classes(cp.asarray(pairs[:, 0]), cp.asarray(pairs[:, 1])).get()

    def row_work(self, rows: int, col0: int | None = None) -> np.ndarray:
        """Work of each of the first ``rows`` rows of the Gram matrix: its pairs j >= i (square,
        ``col0`` None), or against the set's graphs from ``col0`` on (a cross call joined)."""
        wa, na, wb, nb = self.pair_work
        wa, na = wa[:rows], None if na is None else na[:rows]

        def total(v: np.ndarray) -> np.ndarray:
            return np.cumsum(v[::-1])[::-1] if col0 is None else np.full(rows, v[col0:].sum())
        if na is None:
            return wa * total(wb)
        return wa * total(nb) + na * total(wb) + na * total(nb)

    def schedule(self, i: Any, j: Any, name: Any = None, turn: bool = True) -> tuple:
        """The pairs (i, j) in launch order, each class's range and the classes to launch, and the
        order; kept under ``name`` (e.g. a row tile) for the next call when the list is short.
        With ``turn`` (both sides one set), a pair solved the other way round (:meth:`_turned`) is
        stored as (~i, j): solved as (j, i), recorded at (i, j)."""
        if name is not None and name in self.schedules:
            return self.schedules[name]
        cls = self.classes(i, j)
        first = i
        if turn and self.turning is not None:
            turned, other = self._turned(i, j, cls)
            cls = cp.where(turned, other, cls)
            first = cp.where(turned, ~i, i)
        if self.twins is not None:  # a graph 1 whose colours fit: the class's twin
            twin, cap, half = self.twins.twin, self.twins.rows, self.twins.half
            g1 = cp.where(first < 0, j, i)
            h, n, room = half[g1].astype(cp.int64), self.nodes[g1], cap[cls]
            cls = cp.where((twin[cls] >= 0) & (h > 0) & (h <= room) & (n - h <= room), twin[cls], cls)
        wa, na, wb, nb = self._dev_work
        work = wa[i] * wb[j] if na is None else wa[i] * nb[j] + na[i] * wb[j] + na[i] * nb[j]
        key = (cls.astype(cp.int64) << 40) | ((1 << 40) - 1 - cp.minimum(work, (1 << 40) - 1).astype(cp.int64))
        order = cp.argsort(key)
        pairs = cp.stack([first[order], j[order]], axis=1).astype(cp.int32)
        class_ptr = cp.searchsorted(cls[order], cp.arange(self.n_launch + 1, dtype=cp.int32)).astype(cp.int32)
        launch = list(self.launches)
        keep = name is not None and len(i) <= KEPT_SCHEDULE_PAIRS
        if keep:  # worth a sync: later calls launch only the classes that have pairs
            counts = np.diff(class_ptr.get())
            launch = [c for c in launch if counts[c] > 0]
        sched = (pairs, class_ptr, launch, order)
        if keep:
            self.schedules.keep(name, len(i), sched)
        return sched

    def _turned(self, i: Any, j: Any, cls: Any) -> tuple:
        """Whether each pair (i, j) of class ``cls`` is solved as (j, i), and that orientation's
        class; a rule of the pair alone, so that (i, j) and (j, i) are solved the same way round:
        where one orientation takes the column solver's owner path (a team _owner allows, a graph
        2 of at most 4 arcs a node) and the other does not, that one; where both do in as many
        column chunks, graph 1 the graph of fewer nodes (a warp's work goes with its rows, a chunk's
        32 columns cost the same however many hold a node); else graph 1 the graph of the smaller
        content key (orient.py)."""
        other = self.classes(j, i)
        turning = self.turning
        by_key = turning.keys[j] < turning.keys[i]
        if turning.owner is None:
            return by_key, other
        a, b = turning.owner[cls] & turning.light[j], turning.owner[other] & turning.light[i]
        ni, nj = self.nodes[i], self.nodes[j]
        sized = a & b & (turning.chunks[other] == turning.chunks[cls]) & (ni != nj)
        return cp.where(a != b, b, cp.where(sized, nj < ni, by_key)), other

    def solve(self, i: Any, j: Any, out: Any, ld: int, row0: int, nodal: Any = None, nodal_off: Any = None,
              name: Any = None, col0: int = 0) -> None:
        """Queue the pairs (i, j) (device arrays; or, for a ``name`` solved before, the schedule
        kept under it); K of each at ``out[(i - row0) * ld + j - col0]``."""
        if i is not None and len(i) == 0:
            return
        pairs, class_ptr, launch, order = self.schedule(i, j, name, turn=nodal is None)  # node-wise: as asked
        counters = cp.zeros(self.n_launch, cp.int32)
        if nodal is not None:
            nodal_off = nodal_off[order]
        p = self.params
        tail = (np.float64(p.q), np.float64(self.tol), np.int32(p.max_iter or 0), np.int32(p.lmin))
        here = cp.cuda.get_current_stream()
        streams = _streams(CLASS_STREAMS) if CLASS_STREAMS > 1 and len(launch) > 1 else [here]
        if len(streams) > 1:  # they start after what is queued here, and it goes on after them
            start = here.record()
            for s in streams:
                s.wait_event(start)
        for n, c in enumerate(launch):
            k = self.launches[c]
            head = (pairs, class_ptr, np.int32(c), counters[c:], out, np.int64(ld), np.int64(row0 * ld + col0), nodal,
                    nodal_off, self.stats, np.int32(k.team_bytes))
            if k.kind in ("factored", "columns"):
                args = (*self.staged_a.args, *self.staged_b.args, np.int32(self.terms.count), *head, self.hyper[0], *tail)
            else:
                A, B = ((self.tiled_a, self.tiled_b) if k.kind == "global" and self.kind == "factored"
                        else (self.staged_a, self.staged_b))
                scratch, xscratch = self.scratch.get(c, (None, None))
                args = (*A.args, *B.args, *head, scratch, xscratch, *self.hyper, *tail)
            with streams[n % len(streams)]:
                k.fn((k.grid,), (k.threads,), args, shared_mem=k.smem)
        if len(streams) > 1:
            for s in streams:
                here.wait_event(s.record())

    def check(self, a: Prepared | None = None, b: Prepared | None = None, col0: int = 0) -> tuple[int, int]:
        """Raise for a pair that did not converge (named in ``a`` and ``b``, the sets as asked: a
        cross call's columns start at ``col0`` of the joined set); else (total iterations, most)."""
        return stats_check(self.stats.get(), a or self.ga, b or self.gb, self.tol, self.params,
                           self.real is np.float32, col0)


def _plan(ga: Prepared, gb: Prepared, params: MGKernelParams, real: type) -> _Plan:
    """The plan for ``ga`` against ``gb``, made once per parameters (it holds ``gb``, so the key's
    id stays valid); its statistics start from zero."""
    plan = ga.cached(("plan", id(gb), repr(params), layout_key(params), real), lambda: _Plan(ga, gb, params, real))
    plan.stats.fill(0)
    return plan


def _real(params: MGKernelParams) -> type:
    return np.float64 if params.precision == "float64" else np.float32


def run(graphs: Prepared, other: Prepared | None, params: MGKernelParams) -> Result:
    """``K[a, b]`` of ``graphs`` against ``other`` (or against itself), float64 (CuPy when the
    graphs were on the GPU); details give the CG iterations per pair and the mat-vec used. A
    float32 call (the default, or asked by name) below ``FLOAT32_MIN_Q`` is solved in float64,
    which the details say. With the default precision (float32), a call in which some pair does
    not converge is solved again in float64 (signed weights can make float32 stall); asking
    float32 by name raises instead."""
    if _real(params) is np.float32 and params.q < FLOAT32_MIN_Q:
        result = _run(graphs, other, params.model_copy(update={"precision": "float64"}))
        log.info("mg_kernel gpu: %s", SMALL_Q.format(q=params.q, bound=FLOAT32_MIN_Q))
        return _noted(result, SMALL_Q.format(q=params.q, bound=FLOAT32_MIN_Q))
    try:
        return _run(graphs, other, params)
    except NotConvergedError:
        if params.precision is not None:
            raise
        result = _run(graphs, other, params.model_copy(update={"precision": "float64"}))
        return _noted(result, "float32 did not converge for some pair: solved in float64")


def _noted(result: Result, why: str) -> Result:
    """``result`` with ``why`` (a precision changed on the way) added to its details' note."""
    result.details["precision"] = "float64"
    result.details["note"] = (result.details.get("note", "") + "; " + why).lstrip("; ")
    return result


def _run(graphs: Prepared, other: Prepared | None, params: MGKernelParams) -> Result:
    real = _real(params)
    params = with_layout(params, graphs, other)
    if params.nodewise and params.eval_gradient:
        return _nodal_gradient(graphs, other, params, real)
    if params.eval_gradient:
        return _gradient(graphs, other, params, real)
    square = other is None
    second = graphs if square else other
    if params.diagonal:
        d = _diagonal(graphs, params, real)
        return Result(cp.ones(len(graphs)) if params.normalize else d, {"pairs": len(graphs)})
    if params.nodewise:
        return _nodewise(_plan(graphs, second, params, real), graphs, second, square, params, real)
    return _gram(graphs, other, params, real)


def _gram(graphs: Prepared, other: Prepared | None, params: MGKernelParams, real: type) -> Result:
    """K of ``graphs`` against ``other`` (or itself): a cross call is solved in the plan of both
    sets joined (columns from ``col0`` on), so that a pair may be turned either way."""
    square = other is None
    second = graphs if square else other
    with phase("plan", sync=True):  # on a cluster's part: the sets joined, their factors and the plan (kept)
        both, col0 = (graphs, 0) if square else (_joined(graphs, other), len(graphs))
        plan = _plan(both, both, params, real)
    na, nb = len(graphs), len(second)
    diagonals = None
    if params.normalize:
        with phase("diagonals", sync=True):
            da = _diagonal(graphs, params, real)
            diagonals = (da, da if square else _diagonal(second, params, real))

    def fill(r0: int, r1: int, out: Any) -> None:
        name = ("rows", r0, r1, square)
        if name in plan.schedules:
            return plan.solve(None, None, out, out.strides[0] // 8, r0, name=name, col0=col0)
        lengths = np.arange(nb - r0, nb - r1, -1) if square else np.full(r1 - r0, nb)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        k = cp.arange(int(starts[-1]), dtype=cp.int64)
        starts_d = cp.asarray(starts)
        row = cp.searchsorted(starts_d, k, side="right") - 1
        i = r0 + row
        j = k - starts_d[row] + (i if square else col0)
        plan.solve(i, j, out, out.strides[0] // 8, r0, name=name, col0=col0)

    with phase("solve", sync=True):
        K = gram_rows(na, nb, fill, what="mg_kernel on the GPU", tile=params.tile, progress=params.progress,
                      mirror=square, diagonals=diagonals, to_host=not graphs.on_gpu,
                      row_work=plan.row_work(na, None if square else col0), first=FIRST_WORK[plan.kind])
        total, most = plan.check(graphs, second, col0)
    pairs = na * (na + 1) // 2 if square else na * nb
    return Result(K, _details(plan, graphs, params, real, total, most, pairs))


def _joined(graphs: Prepared, other: Prepared) -> Prepared:
    """Both sets as one (orient.joined), kept with ``graphs`` (with ``other``, so its id stays valid)."""
    return graphs.cached(("joined", id(other)), lambda: (joined(graphs, other), other))[0]


def _details(plan: _Plan, graphs: Prepared, params: MGKernelParams, real: type, total: int, most: int,
             pairs: int) -> dict:
    """What a call reports: CG iterations, the precision and the mat-vec it took."""
    details = {"iterations_mean": total / max(pairs, 1), "iterations_max": most, "pairs": pairs,
               "precision": np.dtype(real).name, "matvec": plan.kind}
    if plan.terms is not None:
        details["terms"] = plan.terms.count
        shape = f"factored, {plan.terms.count} term(s)"
    else:
        details["tiles"] = int(_tiled(graphs, params, real)[1].sum())
        shape = f"tiles {details['tiles']}"
    details["note"] = (f"CG {details['iterations_mean']:.2f} its/pair (max {most}); {shape}; "
                       f"{details['precision']}")
    return details


def _diagonal(prep: Prepared, params: MGKernelParams, real: type) -> Any:
    """K[g, g] of every graph of a set (device array)."""
    plan = _plan(prep, prep, params, real)
    out = cp.empty(len(prep))
    idx = cp.arange(len(prep), dtype=cp.int64)
    plan.solve(idx, idx, out, 0, 0, name="diagonal")
    plan.check()
    return out


def _nodewise(plan: _Plan, ga: Prepared, gb: Prepared, square: bool, params: MGKernelParams, real: type) -> Result:
    """The all-nodes matrix of node-wise values: every pair's block solved on the GPU (in the
    solver's node order), put in place on the host."""
    na, nb = np.diff(ga.node_ptr), np.diff(gb.node_ptr)
    pairs = gram_pairs(len(ga), None if square else len(gb))
    offsets = np.concatenate([[0], np.cumsum(na[pairs[:, 0]] * nb[pairs[:, 1]])]).astype(np.int64)
    flat = cp.empty(int(offsets[-1]))
    K = cp.empty((len(ga), len(gb)))
    plan.solve(cp.asarray(pairs[:, 0]), cp.asarray(pairs[:, 1]), K, len(gb), 0, flat, cp.asarray(offsets[:-1]))
    total, most = plan.check()
    flat, K = flat.get(), K.get()
    scale = None
    if params.normalize:
        scale = (np.diag(K),) * 2 if square else (_diagonal(ga, params, real).get(), _diagonal(gb, params, real).get())
    # the tile layout renumbers the nodes, the factored one keeps their order; a factored plan's
    # pairs on the global-memory path are solved in the tile layout
    perms, which = [None if plan.staged_a.perm is None else (plan.staged_a.perm, plan.staged_b.perm)], None
    if hasattr(plan, "tiled_a"):
        which = (plan.pair_classes(pairs) == plan.n_classes - 1).astype(np.int64)
        perms.append((plan.tiled_a.perm, plan.tiled_b.perm))
    R = nodewise_matrix(flat, offsets, pairs, ga, gb, square, scale, perms, which)
    n = len(pairs)
    return Result(R, {"iterations_mean": total / max(n, 1), "iterations_max": most, "pairs": n})


# Work of the first chunk of gradient pairs (tile pairs) before any timing.
FIRST_GRADIENT_WORK = 2e6


def _gradient(graphs: Prepared, other: Prepared | None, params: MGKernelParams, real: type) -> Result:
    """(K, dK) by the log-hyperparameters: per pair two solves (x and the adjoint y) and the
    contractions, a block per pair in global memory (tile layout, any edge kernel)."""
    square = other is None
    second = graphs if square else other
    A, wa = _tiled(graphs, params, real)
    B, wb = _tiled(second, params, real)
    pairs = gram_pairs(len(graphs), None if square else len(second))
    values, grads, its = _gradient_pairs(graphs, second, A, B, pairs, wa, wb, params, real)
    K = square_matrix(values, pairs, len(graphs), len(second), square)
    dK = square_matrix(grads, pairs, len(graphs), len(second), square)

    def diagonals() -> tuple:  # (da, ga, db, gb): the diagonals of both sets, solved on their own
        return tuple(v for prep, G, w in ((graphs, A, wa), (second, B, wb))
                     for v in _gradient_pairs(prep, prep, G, G, diagonal_pairs(len(prep)), w, w, params, real)[:2])

    K, dK = finish_gradient(K, dK, params, square, diagonals)
    npairs = len(pairs)
    details = {"iterations_mean": its[0] / max(npairs, 1), "iterations_max": its[1], "pairs": npairs,
               "precision": np.dtype(real).name, "matvec": "tiles",
               "note": f"CG {its[0] / max(npairs, 1):.2f} its/pair, two solves (max {its[1]}); gradient; "
                       f"{np.dtype(real).name}"}
    return Result((K, dK), details)


def _nodal_gradient(graphs: Prepared, other: Prepared | None, params: MGKernelParams, real: type) -> Result:
    """The node-wise matrix and its derivatives by the log-hyperparameters: per pair one solve for
    x and one per hyperparameter of q and the kernels (dx/dθ), a block per pair in global memory."""
    square = other is None
    second = graphs if square else other
    A, wa = _tiled(graphs, params, real)
    B, wb = _tiled(second, params, real)
    pairs = gram_pairs(len(graphs), None if square else len(second))
    na, nb = np.diff(graphs.node_ptr), np.diff(second.node_ptr)
    offsets = np.concatenate([[0], np.cumsum(na[pairs[:, 0]] * nb[pairs[:, 1]])]).astype(np.int64)
    H = len(params.hyperparameters())
    flat, ngrad = cp.empty(int(offsets[-1])), cp.empty((int(offsets[-1]), H))
    _, _, its = _gradient_pairs(graphs, second, A, B, pairs, wa, wb, params, real,
                                nodal=(flat, cp.asarray(offsets[:-1]), ngrad))
    flat, ngrad = flat.get(), ngrad.get()
    perms = [(A.perm, B.perm)]
    R = nodewise_matrix(flat, offsets, pairs, graphs, second, square, None, perms)
    free, scale = params.free()
    dR = np.stack([nodewise_matrix(np.ascontiguousarray(ngrad[:, h]), offsets, pairs, graphs, second, square, None,
                                   perms) for h in free], axis=-1) if free else np.zeros(R.shape + (0,))
    npairs = len(pairs)
    details = {"iterations_mean": its[0] / max(npairs, 1), "iterations_max": its[1], "pairs": npairs,
               "precision": np.dtype(real).name, "matvec": "tiles",
               "note": f"CG {its[0] / max(npairs, 1):.2f} its/pair (most of {1 + H} solves; max {its[1]}); "
                       f"node-wise gradient; {np.dtype(real).name}"}
    return Result((R, dR * np.asarray(scale)), details)


def _gradient_pairs(ga: Prepared, gb: Prepared, A: _Graphs, B: _Graphs, pairs: np.ndarray, wa: np.ndarray,
                    wb: np.ndarray, params: MGKernelParams, real: type, nodal: tuple | None = None) -> tuple:
    """K (pairs), raw gradients (pairs x hyperparameters) and (total, most) iterations; with
    ``nodal`` = (values, offsets per pair, derivatives) the node-wise values and derivatives instead
    of the gradients (device arrays filled in place)."""
    module = _module(params, real, "gradient")
    fn = module.get_function(f"mgk_{'nodal_' if nodal else ''}gradient_w{GLOBAL_WARPS}")
    H = len(params.hyperparameters())
    entries = int((A.key[pairs[:, 0]] * B.key[pairs[:, 1]]).max()) * 64 if len(pairs) else 64
    per_team = entries * (4 * np.dtype(real).itemsize + 16)
    grid = max(1, min(gpu_attribute("MultiProcessorCount") * 4, cp.cuda.runtime.memGetInfo()[0] // 4 // per_team))
    scratch, xscratch = cp.empty(grid * 4 * entries, real), cp.empty(grid * 2 * entries)
    hyper = tuple(cp.asarray(v) for v in hyper_values(params))
    stats = cp.zeros(4, cp.uint64)
    values = np.empty(len(pairs))
    grads = np.empty((len(pairs), H))
    cost = np.concatenate([[0], np.cumsum(wa[pairs[:, 0]] * wb[pairs[:, 1]] + 1.0)])
    tol = params.tolerance(np.dtype(real).name)
    for lo, hi in chunks(len(pairs), what="mg_kernel gradients on the GPU", cost=cost, first=FIRST_GRADIENT_WORK,
                         progress=params.progress, sync=wait_idle):
        part = cp.asarray(pairs[lo:hi], dtype=cp.int32)
        out, g = cp.empty(hi - lo), cp.empty((hi - lo, H))
        outputs = (g,) if nodal is None else (nodal[0], nodal[1][lo:hi], nodal[2])
        args = (*A.args, *B.args, part, cp.asarray(np.array([0, hi - lo], np.int32)), cp.zeros(1, cp.int32), out,
                stats, np.int32(entries), scratch, xscratch, *outputs, A.dst, B.dst, *hyper, np.float64(params.q),
                np.float64(tol), np.int32(params.max_iter or 0), np.int32(params.lmin))
        fn((grid,), (GLOBAL_WARPS * 32,), args)
        values[lo:hi] = out.get()
        if nodal is None:
            grads[lo:hi] = g.get()
    return values, grads, stats_check(stats.get(), ga, gb, tol, params, real is np.float32)
