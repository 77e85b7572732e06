// mg_kernel: the marginalized graph kernel, one CG solve per graph pair, many pairs per launch.
// Compiled by CuPy (RawModule, NVRTC) with the base kernels written in as macros (gpu.py):
//   NODE_KERNEL(x, y, p), EDGE_KERNEL(x, y, p): expressions over feature rows x[0..], y[0..] and
//   hyperparameters p[0..]; NFN, NFE: feature columns they read (at least 1); REAL: float or double;
//   NODE_GRAD(x, y, p, out), EDGE_GRAD(x, y, p, out): statements writing the NHN/NHE derivatives.
// Checked offline with e.g.
//   nvcc -arch=sm_90 -c --std=c++17 -o /dev/null -DREAL=float -DNFN=1 -DNFE=1 \
//     '-DNODE_KERNEL(x,y,p)=(x[0]==y[0]?1.0:p[0])' '-DEDGE_KERNEL(x,y,p)=(x[0]==y[0]?1.0:p[0])' mg_kernel.cu
//
// Design (after Tang et al., IPDPS 2020):
// * A team (one warp, or a block of W warps) solves one pair at a time and takes the next pair
//   from a global atomic job counter, so big and small pairs balance. Pairs are launched in
//   classes by size (gpu.py), each class with its team size.
// * Graphs are stored as 8x8 tiles ("octiles") of the adjacency: only non-empty tiles, each with
//   a 64-bit mask of its non-zeros, 64 weights and 64 values of every edge feature. A graph's
//   tiles are grouped by tile row. The team copies both graphs into shared memory first.
// * The unknowns x[i, k] (node i of graph 1, node k of graph 2) are kept tile by tile: output tile
//   (I, K) holds i in 8I..8I+7, k in 8K..8K+7. A warp owns whole output tiles, each lane two of
//   the 64 entries; x, r, the preconditioner and A·p of owned entries stay in registers, only the
//   search direction p (read by every mat-vec) is in shared memory.
// * The mat-vec (D/V − A×A'∘E)·p is formed on the fly: for an owned entry (i, k), every tile of
//   row I of graph 1 meets every tile of row K of graph 2; the masks' rows give the neighbours
//   j of i and l of k, and the edge kernel is evaluated for each (ij, kl). SPARSE walks the set
//   bits; otherwise all 64 (j, l) of a tile pair are visited (the dense tile primitive).
// * Arithmetic in REAL; x, the dot products and K in double.
// * Pairs too large for shared memory run the same code on a global-memory copy (STAGED false).

#ifndef REAL
#error "REAL (float or double) is defined by gpu.py"
#endif
#if !defined(NFN) || !defined(NFE) || !defined(NODE_KERNEL) || !defined(EDGE_KERNEL)
#error "NFN, NFE, NODE_KERNEL and EDGE_KERNEL are defined by gpu.py"
#endif
#if !defined(NHN) || !defined(NHE) || !defined(NODE_GRAD) || !defined(EDGE_GRAD)
#error "NHN, NHE, NODE_GRAD and EDGE_GRAD (the kernels' derivatives) are defined by gpu.py"
#endif
#ifndef MGK_NODEWISE
#define MGK_NODEWISE 0  // 1: the column solver keeps x at every entry (node-wise values; gpu.py)
#endif
#ifndef NHP
#define NHP 0  // hyperparameters of the start probabilities (their derivatives come per node, dsta/dstb)
#endif

typedef unsigned long long u64;
typedef REAL real;

// a / b: in float a reciprocal and a product (__fdividef, within 2 ulp) instead of IEEE division,
// a sequence of ~10 instructions with a branch; in double IEEE division.
__device__ __forceinline__ real fast_div(real a, real b) {
    if constexpr (sizeof(real) == 4) return __fdividef(a, b); else return a / b;
}

// z = r / P, the Jacobi preconditioner, by fast_div (a fixed diagonal whatever r, so CG still sees
// one preconditioner): the solvers are bound by instruction issue (Nsight Compute: 87% of the SM's
// issue slots on NCI1), and this is applied twice per unknown per iteration.
__device__ __forceinline__ real precond(real r, real P) { return fast_div(r, P); }

// The node data of a graph, or of a whole set in global memory, in both solvers' layouts.
struct Nodes {
    const real* nf;            // n x NFN node features
    const real* deg;           // n weighted degrees (1 for a node without edges)
    const real* st;            // n start probabilities

    __device__ __forceinline__ Nodes from(int first) const {  // the nodes of a set's graph from its first node
        return Nodes{nf + (long long)first * NFN, deg + first, st + first};
    }
};

__device__ __forceinline__ real node_value(const Nodes& A, const Nodes& B, int i, int k, const double* pn) {
    const real* x = A.nf + i * NFN;
    const real* y = B.nf + k * NFN;
    return (real)(NODE_KERNEL(x, y, pn));
}

// The diagonal D of a pair's system at (i, k) (the product of degrees over (1 - q)^2, c) and the
// Jacobi preconditioner P = D / V.
__device__ __forceinline__ void diagonal(const Nodes& A, const Nodes& B, int i, int k, real c, const double* pn,
                                         real& D, real& P) {
    D = A.deg[i] * B.deg[k] * c;
    P = D / node_value(A, B, i, k, pn);
}

// A pair's share of K (or its node-wise value) at (i, k): p_i p'_k (x_ik - [lmin = 1] V_ik).
__device__ __forceinline__ double k_term(const Nodes& A, const Nodes& B, int i, int k, double x, int lmin,
                                         const double* pn) {
    if (lmin) x -= (double)node_value(A, B, i, k, pn);
    return x * ((double)A.st[i] * (double)B.st[k]);
}

// One graph of a pair, in global or shared memory (same layout; see stage()).
struct Graph {
    int n, nt;                 // nodes; tile rows = ceil(n / 8)
    const u64* mask;           // per tile: bit (ii * 8 + jj) set when node 8I+ii links to 8J+jj
    const real* w;             // per tile: 64 weights (0 where no edge)
    const real* ef;            // per tile: NFE x 64 edge feature values
    Nodes v;
    const int* trp;            // nt + 1: tiles of row I are trp[I] .. trp[I+1]-1
    const int* tcol;           // per tile: its tile column J
};

// Where graph g of a set lives in global memory. info[g] = {n, first tile, first trp entry, first node}.
struct GraphSet {
    const int4* info;
    const int* trp;
    const int* tcol;
    const u64* mask;
    const real* w;
    const real* ef;
    Nodes v;

    __device__ Graph global(int g) const {
        int4 in = info[g];
        Graph G;
        G.n = in.x;
        G.nt = (in.x + 7) >> 3;
        G.trp = trp + in.z;
        int t0 = in.y;
        G.mask = mask + t0;
        G.w = w + (long long)t0 * 64;
        G.ef = ef + (long long)t0 * 64 * NFE;
        G.tcol = tcol + t0;
        G.v = v.from(in.w);
        return G;
    }
};

__device__ __forceinline__ int align16(int b) { return (b + 15) & ~15; }  // bytes rounded up to 16

// Bytes of one staged graph (gpu.py's graph_bytes computes the same, for the launch's shared size).
__device__ __forceinline__ int graph_bytes(int n, int nt, int tiles) {
    return align16(8 * tiles + (int)sizeof(real) * (64 * tiles * (1 + NFE) + n * (NFN + 2)) + 4 * (nt + 1 + tiles));
}

template <typename V>
__device__ __forceinline__ void copy(V* dst, const V* src, int count, int rank, int size) {
    for (int t = rank; t < count; t += size) dst[t] = src[t];
}

// Copy a graph into shared memory at `at` (16-byte aligned); returns the staged view.
__device__ Graph stage(const Graph& G, char* at, int rank, int size) {
    int tiles = G.trp[G.nt];
    Graph S;
    S.n = G.n;
    S.nt = G.nt;
    u64* mask = (u64*)at;
    real* w = (real*)(mask + tiles);
    real* ef = w + 64 * tiles;
    real* nf = ef + 64 * tiles * NFE;
    real* deg = nf + G.n * NFN;
    real* st = deg + G.n;
    int* trp = (int*)(st + G.n);
    int* tcol = trp + G.nt + 1;
    copy(mask, G.mask, tiles, rank, size);
    copy(w, G.w, 64 * tiles, rank, size);
    copy(ef, G.ef, 64 * tiles * NFE, rank, size);
    copy(nf, G.v.nf, G.n * NFN, rank, size);
    copy(deg, G.v.deg, G.n, rank, size);
    copy(st, G.v.st, G.n, rank, size);
    copy(trp, G.trp, G.nt + 1, rank, size);
    copy(tcol, G.tcol, tiles, rank, size);
    S.mask = mask; S.w = w; S.ef = ef; S.v = Nodes{nf, deg, st}; S.trp = trp; S.tcol = tcol;
    return S;
}

template <typename V>
__device__ __forceinline__ V warp_sum(V v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sums over a team of W warps of N doubles (N = 1, 2); every thread gets the same result, bit for
// bit: a butterfly within each warp in REAL (float32 solves: float, half the shuffles of double;
// NCI1's float32 Gram 4.5% faster, the same iterations, values within 2.5e-7), then (W > 1) over
// the warps' partials in double: in order for W <= ORDERED; for larger teams a butterfly, each lane
// reading the partial of warp lane mod W, so every aligned group of W lanes adds the same values in
// the same order (floating-point addition commutes). Loading all W partials at once made the teams
// of 8 and 16 warps spill, so ORDERED is 4; the column solver, which no longer keeps x at every
// entry, passes 8 (NCI1's 8 x 8 x 1 class 316.8 -> 299.6 ms on an H100). The butterfly's chain of
// shuffles is slower for small teams. `red` alternates between two halves so consecutive
// reductions need one barrier each.
template <int W, int N, int ORDERED = 4>
__device__ __forceinline__ void team_sum(double (&v)[N], double (*red)[32][2], int& flip, int warp, int lane) {
    static_assert(N == 1 || N == 2, "one or two values");
    static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "team of 2^k warps");
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = warp_sum((real)v[n]);
    if constexpr (W > 1) {
        if (lane == 0)
#pragma unroll
            for (int n = 0; n < N; ++n) red[flip][warp][n] = v[n];
        __syncthreads();
        if constexpr (W <= ORDERED) {  // the partials in order: a short chain of loads and adds
#pragma unroll
            for (int n = 0; n < N; ++n) v[n] = 0.0;
#pragma unroll
            for (int t = 0; t < W; ++t)
#pragma unroll
                for (int n = 0; n < N; ++n) v[n] += red[flip][t][n];
        } else {
#pragma unroll
            for (int n = 0; n < N; ++n) v[n] = red[flip][lane & (W - 1)][n];
#pragma unroll
            for (int o = W / 2; o > 0; o >>= 1)
#pragma unroll
                for (int n = 0; n < N; ++n) v[n] += __shfl_xor_sync(0xffffffffu, v[n], o);
        }
        flip ^= 1;
    } else {
        __syncwarp();
    }
}

template <int W, int ORDERED = 4>
__device__ __forceinline__ void team_sum2(double& a, double& b, double (*red)[32][2], int& flip, int warp, int lane) {
    double v[2] = {a, b};
    team_sum<W, 2, ORDERED>(v, red, flip, warp, lane);
    a = v[0];
    b = v[1];
}

template <int W, int ORDERED = 4>
__device__ __forceinline__ void team_sum1(double& a, double (*red)[32][2], int& flip, int warp, int lane) {
    double v[1] = {a};
    team_sum<W, 1, ORDERED>(v, red, flip, warp, lane);
    a = v[0];
}

template <int W>
__device__ __forceinline__ void team_sync() {
    if constexpr (W > 1) __syncthreads(); else __syncwarp();
}

// (A × A' ∘ E)·p for the entries (i0, k) and (i0 + 4, k) of output tile (I, K), i0 = 8I + ii.
template <bool SPARSE>
__device__ __forceinline__ void adjacency_product(const Graph& A, const Graph& B, const real* p, int I, int K,
                                                  int ii, int kk, const double* pe, real& acc0, real& acc1) {
    const int sh0 = ii * 8, sh1 = (ii + 4) * 8, shk = kk * 8;
    for (int a = A.trp[I]; a < A.trp[I + 1]; ++a) {
        const u64 M1 = A.mask[a];
        const unsigned m0 = (unsigned)(M1 >> sh0) & 0xffu, m1 = (unsigned)(M1 >> sh1) & 0xffu;
        if (SPARSE && !(m0 | m1)) continue;
        const int J = A.tcol[a];
        const real* wa = A.w + a * 64;
        const real* fa = A.ef + a * 64 * NFE;
        for (int b = B.trp[K]; b < B.trp[K + 1]; ++b) {
            const unsigned m2 = (unsigned)(B.mask[b] >> shk) & 0xffu;
            if (SPARSE && !m2) continue;
            const real* pt = p + (J * B.nt + B.tcol[b]) * 64;
            const real* wb = B.w + b * 64;
            const real* fb = B.ef + b * 64 * NFE;
            for (unsigned ml = SPARSE ? m2 : 0xffu; ml; ml &= ml - 1) {
                const int ll = __ffs(ml) - 1;
                real y[NFE];
#pragma unroll
                for (int f = 0; f < NFE; ++f) y[f] = fb[f * 64 + shk + ll];
                const real w2 = wb[shk + ll];
                for (unsigned mj = SPARSE ? m0 : 0xffu; mj; mj &= mj - 1) {
                    const int jj = __ffs(mj) - 1;
                    real x[NFE];
#pragma unroll
                    for (int f = 0; f < NFE; ++f) x[f] = fa[f * 64 + sh0 + jj];
                    acc0 += wa[sh0 + jj] * w2 * (real)(EDGE_KERNEL(x, y, pe)) * pt[jj * 8 + ll];
                }
                for (unsigned mj = SPARSE ? m1 : 0xffu; mj; mj &= mj - 1) {
                    const int jj = __ffs(mj) - 1;
                    real x[NFE];
#pragma unroll
                    for (int f = 0; f < NFE; ++f) x[f] = fa[f * 64 + sh1 + jj];
                    acc1 += wa[sh1 + jj] * w2 * (real)(EDGE_KERNEL(x, y, pe)) * pt[jj * 8 + ll];
                }
            }
        }
    }
}

// Per-pair statistics: stats[0] total iterations, [1] most iterations, [2] pairs not converged,
// [3] one of them, (row << 32 | column) + 1.
struct Launch {
    const int2* pairs;          // (row graph, column graph), sorted by class and work
    const int* class_ptr;       // pairs of class c: class_ptr[c] .. class_ptr[c+1]-1
    int cls;
    int* counter;               // the class's job counter (zero before the launch)
    double* out;                // K of (i, j) at out[i * ld + j - origin]
    long long ld;
    long long origin;           // row0 * ld + col0: the first row and column out holds
    double* nodal;              // or null: p_i p'_k (x - lmin V) at nodal[nodal_off[pair] + i * n2 + k]
    const long long* nodal_off;
    u64* stats;
    int team_bytes;             // shared bytes per team (STAGED) / global scratch entries per team
    real* scratch;              // !STAGED: per team 4 vectors of team_bytes entries (p, r, P, Ap)
    double* xscratch;           // !STAGED: per team x (team_bytes entries)
};

// The next pair of the class for a team (job counter), the same for all its threads.
template <int W>
__device__ __forceinline__ int next_job(const Launch& L, int start, int& job_s, int lane) {
    int job = 0;
    if constexpr (W == 1) {
        if (lane == 0) job = atomicAdd(L.counter, 1);
        job = __shfl_sync(0xffffffffu, job, 0);
    } else {
        if (threadIdx.x == 0) job_s = atomicAdd(L.counter, 1);
        __syncthreads();
        job = job_s;
    }
    return job + start;
}

// A thread's place: its lane, its warp in the team and rank in the team, its team in the block
// (teams of one warp are the 8 warps of a block).
template <int W>
struct Place {
    int lane = threadIdx.x & 31;
    int warp = W == 1 ? 0 : threadIdx.x >> 5;
    int team = W == 1 ? threadIdx.x >> 5 : 0;
    int rank = W == 1 ? (threadIdx.x & 31) : threadIdx.x;
};

// One thread of the team writes the pair's K and its statistics.
// The launch's statistics: iterations (total, most), pairs not converged and one of them.
__device__ __forceinline__ void tally(const Launch& L, int2 ij, int its, bool done) {
    atomicAdd(&L.stats[0], (u64)its);
    atomicMax(&L.stats[1], (u64)its);
    if (!done) {
        atomicAdd(&L.stats[2], 1ull);
        atomicCAS(&L.stats[3], 0ull, ((u64)ij.x << 32 | (u64)ij.y) + 1);
    }
}

// A pair as stored in L.pairs: (i, j), or (~i, j) for K[i, j] solved as (j, i) (graph j of the first
// side against graph i of the second, both sides one set: gpu.py's schedule turns a pair so that its
// orientation depends on the pair alone, and K one number however it is asked). asked gives K's place,
// solved the orientation solved; record takes the pair as stored.
__device__ __forceinline__ int2 asked(int2 p) { return p.x < 0 ? make_int2(~p.x, p.y) : p; }
__device__ __forceinline__ int2 solved(int2 p) { return p.x < 0 ? make_int2(p.y, ~p.x) : p; }

__device__ __forceinline__ void record(const Launch& L, int2 stored, double total, int its, bool done) {
    const int2 ij = asked(stored);
    L.out[(long long)ij.x * L.ld + ij.y - L.origin] = total;
    tally(L, ij, its, done);
}

// The preconditioned conjugate-gradient iteration, the same for every solver: each solver passes
// how its storage forms the mat-vec (returning its threads' share of p·Ap), updates x and r (adding
// its share of r·z and r·r), and sets the next direction p = z + beta p. rz and rr hold the starting
// residual's products (already summed over the team); returns the iterations, done when converged.
template <int W, class MatVec, class Update, class Direction>
__device__ __forceinline__ int pcg(double& rz, double rr, double bound, int limit, bool& done, double (*red)[32][2],
                                   int& flip, int warp, int lane, MatVec matvec, Update update, Direction direction) {
    int its = 0;
    done = rr <= bound;
    while (!done && its < limit) {
        team_sync<W>();  // p written
        double pAp = matvec();
        team_sum1<W>(pAp, red, flip, warp, lane);
        const double alpha = rz / pAp;
        double rz_new = 0.0;
        rr = 0.0;
        update(alpha, rz_new, rr);
        team_sum2<W>(rz_new, rr, red, flip, warp, lane);  // also: every mat-vec read of p is done
        const real beta = (real)(rz_new / rz);
        rz = rz_new;
        direction(beta);
        ++its;
        done = rr <= bound;
    }
    return its;
}

template <int W, int SL, bool SPARSE, bool STAGED>
__device__ void solve(const GraphSet& SA, const GraphSet& SB, const Launch& L, const double* pn, const double* pe,
                      double q, double tol, int max_iter, int lmin) {
    extern __shared__ __align__(16) char smem[];
    __shared__ double red[2][32][2];
    __shared__ int job_s;
    constexpr int TEAMS = W == 1 ? 8 : 1;   // warps of a W == 1 block are 8 teams
    constexpr int NR = STAGED ? 2 * SL : 1; // registers per thread for x, r, P, Ap
    const Place<W> at;
    const int lane = at.lane, warp = at.warp, team = at.team, rank = at.rank;
    const int gteam = blockIdx.x * TEAMS + team;
    char* mine = smem + (long long)team * L.team_bytes;
    real* gp = nullptr; real* gr = nullptr; real* gP = nullptr; real* gAp = nullptr; double* gx = nullptr;
    if constexpr (!STAGED) {
        long long base = (long long)gteam * L.team_bytes;
        gp = L.scratch + 4 * base; gr = gp + L.team_bytes; gP = gr + L.team_bytes; gAp = gP + L.team_bytes;
        gx = L.xscratch + base;
    }
    double xr[NR];
    real rr_[NR], Pr[NR], Apr[NR];
    int flip = 0;
    const int start = L.class_ptr[L.cls], end = L.class_ptr[L.cls + 1];
    const real c = (real)(1.0 / ((1.0 - q) * (1.0 - q)));
    while (true) {
        const int job = next_job<W>(L, start, job_s, lane);
        if (job >= end) break;
        const int2 ij = solved(L.pairs[job]);
        Graph A = SA.global(ij.x), B = SB.global(ij.y);
        const int nOT = A.nt * B.nt;
        real* p;
        if constexpr (STAGED) {
            p = (real*)mine;
            char* g1 = mine + (((long long)nOT * 64 * sizeof(real) + 15) & ~15LL);
            char* g2 = g1 + graph_bytes(A.n, A.nt, A.trp[A.nt]);
            A = stage(A, g1, rank, W * 32);
            B = stage(B, g2, rank, W * 32);
        } else {
            p = gp;
        }
        const int nslots = STAGED ? SL : (nOT + W - 1) / W;
        // the entries a lane owns: slot s -> output tile ot = warp + s * W, entries lane and lane + 32
#define OWN(h, s) (STAGED ? 2 * (s) + (h) : 0)
#define XV(h, s, o) (*(STAGED ? &xr[OWN(h, s)] : &gx[o]))
#define RV(h, s, o) (*(STAGED ? &rr_[OWN(h, s)] : &gr[o]))
#define PV(h, s, o) (*(STAGED ? &Pr[OWN(h, s)] : &gP[o]))
#define AV(h, s, o) (*(STAGED ? &Apr[OWN(h, s)] : &gAp[o]))
        team_sync<W>();  // staged graphs visible
        double rz = 0.0, rr = 0.0;
#pragma unroll
        for (int s = 0; s < nslots; ++s) {
            const int ot = warp + s * W;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int e = lane + 32 * h, o = ot * 64 + e;
                if (ot >= nOT) { if (STAGED) { XV(h, s, o) = 0.0; RV(h, s, o) = 0; PV(h, s, o) = 1; } continue; }
                const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
                real D = 0, P = 1;
                if (i < A.n && k < B.n) diagonal(A.v, B.v, i, k, c, pn, D, P);
                XV(h, s, o) = 0.0;
                RV(h, s, o) = D;
                PV(h, s, o) = P;
                const real z = precond(D, P);
                p[o] = z;
                rz += (double)D * z;
                rr += (double)D * D;
            }
        }
        team_sum2<W>(rz, rr, red, flip, warp, lane);
        const double bound = tol * tol * rr;
        const int N = A.n * B.n;
        const int limit = max_iter > 0 ? max_iter : N + 100;
        bool done;
        const int its = pcg<W>(rz, rr, bound, limit, done, red, flip, warp, lane,
            [&]() {  // Ap = (D/V - A x A' o E) p, tile by tile
                double pAp = 0.0;
#pragma unroll
                for (int s = 0; s < nslots; ++s) {
                    const int ot = warp + s * W;
                    if (ot >= nOT) continue;
                    const int I = ot / B.nt, K = ot % B.nt;
                    real acc0 = 0, acc1 = 0;
                    adjacency_product<SPARSE>(A, B, p, I, K, lane >> 3, lane & 7, pe, acc0, acc1);
                    const int o = ot * 64 + lane;
                    const real p0 = p[o], p1 = p[o + 32];
                    const real a0 = PV(0, s, o) * p0 - acc0, a1 = PV(1, s, o + 32) * p1 - acc1;
                    AV(0, s, o) = a0;
                    AV(1, s, o + 32) = a1;
                    pAp += (double)p0 * a0 + (double)p1 * a1;
                }
                return pAp;
            },
            [&](double alpha, double& rz_new, double& rr) {
#pragma unroll
                for (int s = 0; s < nslots; ++s) {
                    const int ot = warp + s * W;
                    if (ot >= nOT) continue;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int o = ot * 64 + lane + 32 * h;
                        XV(h, s, o) += alpha * (double)p[o];
                        const real r = RV(h, s, o) - (real)alpha * AV(h, s, o);
                        RV(h, s, o) = r;
                        rz_new += (double)r * precond(r, PV(h, s, o));
                        rr += (double)r * r;
                    }
                }
            },
            [&](real beta) {
#pragma unroll
                for (int s = 0; s < nslots; ++s) {
                    const int ot = warp + s * W;
                    if (ot >= nOT) continue;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int o = ot * 64 + lane + 32 * h;
                        p[o] = precond(RV(h, s, o), PV(h, s, o)) + beta * p[o];
                    }
                }
            });
        // K = sum of p_i p'_k (x_ik - [lmin = 1] V_ik)
        double total = 0.0;
        const long long noff = L.nodal ? L.nodal_off[job] : 0;
#pragma unroll
        for (int s = 0; s < nslots; ++s) {
            const int ot = warp + s * W;
            if (ot >= nOT) continue;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int e = lane + 32 * h, o = ot * 64 + e;
                const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
                if (i >= A.n || k >= B.n) continue;
                const double v = k_term(A.v, B.v, i, k, XV(h, s, o), lmin, pn);
                total += v;
                if (L.nodal) L.nodal[noff + (long long)i * B.n + k] = v;
            }
        }
#undef OWN
#undef XV
#undef RV
#undef PV
#undef AV
        team_sum1<W>(total, red, flip, warp, lane);
        if (rank == 0) record(L, L.pairs[job], total, its, done);
        team_sync<W>();  // shared memory free for the next pair
    }
}

// ---- The factored path (lowrank.py): (A × A' ∘ E)·vec(P) = Σ_t vec(F_t P G_tᵀ) ----------------
// P is kept row-major, n1 rows of n2p = n2 | 1 entries (odd: a column walk has no bank conflicts).
// U_t = F_t P for every term with a warp per row of F_t, lanes along the row (the row's entries
// are broadcasts), then Y = Σ_t U_t G_tᵀ with a warp per row k of the G_t, lanes down column k:
// two barriers per mat-vec whatever the number of terms.

// Where graph g of one side lives in global memory. info[g] = {n, first rptr entry, first entry, first node}.
struct Side {
    const int4* info;
    const int* rptr;
    const int* col;
    const real* val;
    Nodes v;
    const int2* most;  // per graph: the most arcs of a row over all terms, and in one term
    const int* half;   // per graph: its nodes of colour 0 (numbered first), 0 for a graph not split
};

struct Factor {   // one graph as terms x CSR (global memory)
    int n;
    const int* rptr;  // terms x (n + 1), relative to val/col
    const int* col;
    const real* val;
    Nodes v;
};

__device__ __forceinline__ Factor factor(const Side& S, int g) {
    int4 in = S.info[g];
    return Factor{in.x, S.rptr + in.y, S.col + in.z, S.val + in.z, S.v.from(in.w)};
}

// The pairs of the launch's class, one at a time for a team from the job counter:
// body(job, pair, graph 1, graph 2).
template <int W, class Body>
__device__ __forceinline__ void factor_pairs(const Side& SA, const Side& SB, const Launch& L, int& job_s, int lane,
                                             Body body) {
    const int start = L.class_ptr[L.cls], end = L.class_ptr[L.cls + 1];
    while (true) {
        const int job = next_job<W>(L, start, job_s, lane);
        if (job >= end) break;
        const int2 ij = solved(L.pairs[job]);
        body(job, ij, factor(SA, ij.x), factor(SB, ij.y));
    }
}

// Bytes of one staged factor (lowrank.py's factor_bytes computes the same).
__device__ __forceinline__ int factor_bytes(int n, int terms, int nnz) {
    return align16((int)sizeof(real) * (nnz + n * (NFN + 2)) + 4 * (terms * (n + 1) + nnz));
}

// The dynamic shared memory, addressed by 32-bit byte offsets in the factored solver: a staged
// graph is 6 offsets, not 6 pointers (registers are what limits its occupancy).
extern __shared__ __align__(16) char mgk_smem[];
#define SH(T, off) ((T*)(mgk_smem + (off)))

struct Staged {  // a factor in shared memory: byte offsets into mgk_smem
    int n, rptr, col, val, nf, deg, st;
};

__device__ Staged stage(const Factor& G, int terms, int at, int rank, int size) {
    const int nnz = G.rptr[terms * (G.n + 1) - 1];
    Staged S;
    S.n = G.n;
    S.val = at;
    S.nf = S.val + (int)sizeof(real) * nnz;
    S.deg = S.nf + (int)sizeof(real) * G.n * NFN;
    S.st = S.deg + (int)sizeof(real) * G.n;
    S.rptr = S.st + (int)sizeof(real) * G.n;
    S.col = S.rptr + 4 * terms * (G.n + 1);
    copy(SH(real, S.val), G.val, nnz, rank, size);
    copy(SH(real, S.nf), G.v.nf, G.n * NFN, rank, size);
    copy(SH(real, S.deg), G.v.deg, G.n, rank, size);
    copy(SH(real, S.st), G.v.st, G.n, rank, size);
    copy(SH(int, S.rptr), G.rptr, terms * (G.n + 1), rank, size);
    copy(SH(int, S.col), G.col, nnz, rank, size);
    return S;
}

__device__ __forceinline__ Nodes nodes(const Staged& S) {  // its node data as pointers, where used
    return Nodes{SH(real, S.nf), SH(real, S.deg), SH(real, S.st)};
}

template <int W, int SLOTS>
__device__ void solve_factored(const Side& SA, const Side& SB, int terms, const Launch& L, const double* pn,
                               double q, double tol, int max_iter, int lmin) {
    __shared__ double red[2][32][2];
    __shared__ int job_s;
    constexpr int T = W * 32;
    const Place<W> at;
    const int lane = at.lane, warp = at.warp, team = at.team, rank = at.rank;
    const int mine = team * L.team_bytes;
    real rr_[SLOTS], Pr[SLOTS];  // x is in shared memory: registers are scarce at full occupancy
    int flip = 0;
    const real c = (real)(1.0 / ((1.0 - q) * (1.0 - q)));
    factor_pairs<W>(SA, SB, L, job_s, lane, [&](int job, int2 ij, const Factor& GA, const Factor& GB) {
        const int n1 = GA.n, n2 = GB.n, n2p = n2 | 1, N = n1 * n2p;
        const int Npad = (N + 3) & ~3;
        real* p = SH(real, mine);
        real* Y = p + Npad;
        real* X = Y + Npad;
        const int U0 = mine + 3 * Npad * (int)sizeof(real);  // one n1 x n2p block per term
        const int g1 = U0 + terms * Npad * (int)sizeof(real);
        const int nnz1 = GA.rptr[terms * (n1 + 1) - 1];
        const Staged A = stage(GA, terms, g1, rank, T);
        const Staged B = stage(GB, terms, g1 + factor_bytes(n1, terms, nnz1), rank, T);
        if (n2p > n2)  // the padding column of Y is read by its owners: zero
            for (int i = rank; i < n1; i += T) Y[i * n2p + n2] = 0;
        team_sync<W>();
        double rz = 0.0, rr = 0.0;
#pragma unroll
        for (int s = 0; s < SLOTS; ++s) {
            const int o = rank + s * T, i = o / n2p, k = o - i * n2p;
            real D = 0, P = 1;
            if (o < N && k < n2) diagonal(nodes(A), nodes(B), i, k, c, pn, D, P);
            rr_[s] = D;
            Pr[s] = P;
            if (o < N) {
                p[o] = precond(D, P);
                X[o] = 0;
            }
            rz += (double)D * precond(D, P);
            rr += (double)D * D;
        }
        team_sum2<W>(rz, rr, red, flip, warp, lane);
        const double bound = tol * tol * rr;
        const int limit = max_iter > 0 ? max_iter : n1 * n2 + 100;
        const int* ra0 = SH(int, A.rptr);
        const int* rb0 = SH(int, B.rptr);
        bool done;
        const int its = pcg<W>(rz, rr, bound, limit, done, red, flip, warp, lane,
            [&]() {
                // step 1, every term at once: U_t = F_t P (a warp per row i of F_t, lanes along the row;
                // nested loops: no integer division in the mat-vec)
                for (int t = 0; t < terms; ++t) {
                    const int* ra = ra0 + t * (n1 + 1);
                    const int* rb = rb0 + t * (n2 + 1);
                    if (ra[0] == ra[n1] || rb[0] == rb[n2]) continue;  // a term without edges in a graph
                    real* Ut = SH(real, U0) + t * Npad;
                    const int i0 = (warp - (t * n1) % W + W) % W;  // the rows of all terms dealt round-robin
                    for (int i = i0; i < n1; i += W) {
                        const int e0 = ra[i], e1 = ra[i + 1];
                        for (int l = lane; l < n2; l += 32) {
                            real acc = 0;
                            for (int e = e0; e < e1; ++e) acc += SH(real, A.val)[e] * p[SH(int, A.col)[e] * n2p + l];
                            Ut[i * n2p + l] = acc;
                        }
                    }
                }
                team_sync<W>();
                // step 2: Y = Σ_t U_t G_tᵀ (a warp per row k of the G_t, lanes down the column)
                for (int k = warp; k < n2; k += W) {
                    for (int i = lane; i < n1; i += 32) {
                        real acc = 0;
                        for (int t = 0; t < terms; ++t) {
                            const int* ra = ra0 + t * (n1 + 1);
                            const int* rb = rb0 + t * (n2 + 1);
                            if (ra[0] == ra[n1]) continue;
                            const real* Ut = SH(real, U0) + t * Npad + i * n2p;
                            for (int e = rb[k]; e < rb[k + 1]; ++e) acc += SH(real, B.val)[e] * Ut[SH(int, B.col)[e]];
                        }
                        Y[i * n2p + k] = acc;
                    }
                }
                team_sync<W>();
                double pAp = 0.0;
#pragma unroll
                for (int s = 0; s < SLOTS; ++s) {
                    const int o = rank + s * T;
                    if (o >= N) continue;
                    const real a = Pr[s] * p[o] - Y[o];
                    pAp += (double)p[o] * a;
                }
                return pAp;
            },
            [&](double alpha, double& rz_new, double& rr) {  // Ap recomputed from Y: no register for it
#pragma unroll
                for (int s = 0; s < SLOTS; ++s) {
                    const int o = rank + s * T;
                    if (o >= N) continue;
                    const real a = Pr[s] * p[o] - Y[o];
                    X[o] += (real)alpha * p[o];
                    const real r = rr_[s] - (real)alpha * a;
                    rr_[s] = r;
                    rz_new += (double)r * precond(r, Pr[s]);
                    rr += (double)r * r;
                }
            },
            [&](real beta) {
#pragma unroll
                for (int s = 0; s < SLOTS; ++s) {
                    const int o = rank + s * T;
                    if (o < N) p[o] = precond(rr_[s], Pr[s]) + beta * p[o];
                }
            });
        double total = 0.0;
        const long long noff = L.nodal ? L.nodal_off[job] : 0;
#pragma unroll
        for (int s = 0; s < SLOTS; ++s) {
            const int o = rank + s * T, i = o / n2p, k = o - i * n2p;
            if (o >= N || k >= n2) continue;
            const double v = k_term(nodes(A), nodes(B), i, k, X[o], lmin, pn);
            total += v;
            if (L.nodal) L.nodal[noff + (long long)i * n2 + k] = v;
        }
        team_sum1<W>(total, red, flip, warp, lane);
        if (rank == 0) record(L, L.pairs[job], total, its, done);
        team_sync<W>();
    });
}

// ---- The column solver: the factored mat-vec for pairs of at most W·KS × 32·IS nodes -----------
// The same product as solve_factored, Σ_t F_t P G_tᵀ, in fewer instructions per unknown: that
// solver is bound by instruction issue (Nsight Compute: 89% of issue slots on NCI1), and most of
// its instructions set up loops over rows of two or three edges, or move A·p and x through shared
// memory. Here entry (i, k) belongs to lane k % 32 (column chunk b = k / 32 < IS) of warp i % W
// (row slot a = i / W < KS), which keeps its r, P, p and A·p (in float64 also 1/P; x only for node-wise
// values: K needs φᵀx, summed as CG goes) in registers, and both
// halves of the mat-vec run loops of a fixed number of edges per row, unrolled over the rows a
// warp holds, each row's edges staged padded with zero-valued arcs:
// * Step 1, V = P [G_0 … G_T]ᵀ: column t (n2 + 1) + k of V is P G_tᵀ's column k (k = n2: zeros).
//   A warp holds columns warp + W m, lanes down the column (rows j of P, odd row stride: no bank
//   conflicts). Their arcs (column offset in P's row, value) are padded to DB (the most of a row in
//   any G_t, rounded up to 4) and stored by pairs, pair e of every column side by side.
// * Step 2, Σ_t (F_t V_t)[i, k]: the owner of (i, k) sums it in registers from row i's arcs in
//   every F_t (offset of row j of V plus the term's first column, value), padded to DA (the most
//   over all terms, rounded up to 2), pair e of all W KS rows side by side; rows past n1 are zero
//   arcs. Lanes along the row of V; lanes past n2 read the term's zero column. The loop stops at
//   the most (da), an odd one's last arc read alone: two thirds of NCI1's graphs have no node of
//   degree 4, and the fourth arc, always zero there, took 2.2% of the float32 Gram's kernel time.
// * Owner path, for pairs of one term whose graph 2 has at most 4 arcs a node, in teams of one
//   column chunk (and of two where 512 resident threads leave the registers for it): the warp
//   holding row i computes both halves itself, with no V and no barrier between them. First
//   U = F P at its rows (step 2's loop, graph 1's arcs addressing rows of P), then U Gᵀ: lane k
//   gathers U[i, l] from the lane (and chunk) of each of its column's arcs by shuffles, the arcs
//   kept in registers for the whole solve (padded with k and 0). NCI1 on an H100, kernels: float32
//   890.8 -> 811.7 ms (4 x 8 x 1 teams 180.7 -> 150.3 ms), float64 3,169 -> 2,888 ms. Which teams
//   may take it (OWNER) is gpu.py's _owner, with the measurements behind the rule.
// * Preconditioner M⁻¹ = P⁻¹ + P⁻¹ N P⁻¹, the first two terms of the Neumann series of
//   (P − N)⁻¹ (N = A × A' ∘ E, the mat-vec's product; P the diagonal): z = (r + N y) / P with
//   y = r / P, a second mat-vec an iteration. With B = P^-½ N P^-½ (spectrum within [−ρ, ρ],
//   ρ < 1: the system is diagonally dominant) the preconditioned operator is I − B², whose
//   condition number is Jacobi's (I − B) over (1 + ρ)², about a quarter as ρ nears 1, and CG's
//   worst-case bound in k iterations of it is Jacobi's in 2k (the Chebyshev polynomial of even
//   degree is one in B²). So CG needs about half the iterations: NCI1
//   float32 19.46 -> 10.06 a pair, float64 31.64 -> 16.54. Mat-vecs go up a little (2 · 10.06 + 1
//   for z at the start = 21.1 against 19.46) but a pair does half the team sums, which cost more
//   than their arithmetic. NCI1 kernels on an H100: float32 667.8 -> 630.7 ms, float64 2,537 ->
//   2,315 ms. A third term (I − B³) took 10.7 iterations of three mat-vecs (NumPy, 400 pairs).
// * The solve on one colour (ONE_COLOUR twins, one for every column class): graph 1's nodes are
//   split so that no arc joins two of colour 1 (lowrank.independent_split, numbered colour 0
//   first; a bipartite graph's larger side is colour 1). Then N₁₁ = 0, and with N's blocks by
//   colour (P − N) x = D is P₁ x₁ = D₁ + N₁₀ x₀ and the Schur system S x₀ = D₀ + N₀₁ P₁⁻¹ D₁,
//   S = P₀ − N₀₀ − N₀₁ P₁⁻¹ N₁₀ (symmetric positive definite as P − N is), which CG solves with
//   the Jacobi preconditioner P₀⁻¹; x₁ follows in one more mat-vec. An iteration costs about one
//   mat-vec, in two halves: u₁ = P₁⁻¹ N₁₀ p₀ at colour 1's rows, then N₀₀ p₀ + N₀₁ u₁ at colour
//   0's (V's colour-0 rows, made for u₁, still hold p₀'s); the plain one costs two, its
//   preconditioner's and the operator's. Both have two team sums.
//   Each colour takes half a warp's row slots, so a pair goes to a twin only when both fit.
// * Shared memory is addressed by 32-bit offsets in the shared window (no generic address to
//   rebuild at each access). Each thread sums its share of a dot product (at most KS·IS terms) in
//   REAL and the team adds the shares in double; alpha and beta are divided in REAL, the precision
//   of the updates that use them, by fast_div (NCI1's float32 kernels 1.2% faster: each division
//   sits between a team sum and every update that waits on it).

struct __align__(sizeof(real) == 4 ? 8 : 16) Arc {  // a stored edge as staged for one pair
    int off;   // byte offset: of row j of V and the term's first column (graph 1), of column l in P (graph 2)
    real val;
};

template <typename R = real>
__device__ __forceinline__ R ld_s(unsigned a) {  // a REAL at a shared-window address
    R v;
    if constexpr (sizeof(R) == 4) asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    else asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(a) : "memory");
    return v;
}

template <typename R = real>
__device__ __forceinline__ void st_s(unsigned a, R v) {
    if constexpr (sizeof(R) == 4) asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(v) : "memory");
    else asm volatile("st.shared.f64 [%0], %1;" ::"r"(a), "d"(v) : "memory");
}

template <typename R = real>
__device__ __forceinline__ Arc arc_one(unsigned a) {  // one arc (8 or 16 bytes, aligned)
    if constexpr (sizeof(R) == 4) {
        int o;
        float v;
        asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(o), "=f"(v) : "r"(a) : "memory");
        return Arc{o, v};
    } else {
        long long o;
        R v;
        asm volatile("ld.shared.v2.b64 {%0, %1}, [%2];" : "=l"(o), "=d"(v) : "r"(a) : "memory");
        return Arc{(int)o, v};
    }
}

template <typename R = real>
__device__ __forceinline__ void arc_pair(unsigned a, Arc& f, Arc& g) {  // two arcs, 16-aligned
    if constexpr (sizeof(R) == 4) {
        int o0, o1;
        float v0, v1;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(o0), "=f"(v0), "=r"(o1), "=f"(v1) : "r"(a) : "memory");
        f = Arc{o0, v0};
        g = Arc{o1, v1};
    } else {  // a double arc is 16 bytes: two loads
        f = arc_one<R>(a);
        g = arc_one<R>(a + 16);
    }
}

// x + a b rounded twice, a product and then a sum, where the compiler would contract it into one
// FMA. The column solver's xs update: until the solver was cut into parts (one loop nest a
// function), the compiler placed this product and sum in different basic blocks for warps of one
// column chunk and at least 3 rows, so they were rounded apart there and fused elsewhere (PTX of
// every column kernel compared); written out, the Gram stays bit-identical to the one before.
__device__ __forceinline__ real add_product_apart(real x, real a, real b) {
    if constexpr (sizeof(real) == 4) return __fadd_rn(x, __fmul_rn(a, b));
    else return __dadd_rn(x, __dmul_rn(a, b));
}

// f(Count<n>()) for a runtime n in [0, N]: loops unrolled over a count known at compile time, so
// a warp skips its slots past the last row without a test per slot (N + 1 copies of f's body).
template <int N>
struct Count {
    static constexpr int value = N;
};

template <int N, class F>
__device__ __forceinline__ void with_count(int n, F&& f) {
    if constexpr (N == 0) {
        f(Count<0>{});
    } else {
        if (n >= N) f(Count<N>{});
        else with_count<N - 1>(n, f);
    }
}

// The column solver in parts, one loop nest each: Columns holds what a thread keeps while its team
// solves a pair (its entries in registers, the pair's sizes and the byte offsets of its shared
// layout); solve_columns takes the class's pairs one at a time and calls the parts in order: lay
// the pair out (pair), stage graph 1's arcs by row and graph 2's by column (stage_rows,
// stage_columns, stage_start, clear), set each lane's columns and the start (lane_columns,
// owner_arcs, start), solve (cg, or cg_one_colour), add up K (total_*).
// OWNER: the team may take the owner path (gpu.py's rule); ONE_COLOUR: the solve on one colour, every
// pair's graph 1 split with each colour in half the rows (gpu.py sends only those; see above)
#define MGK_COLUMNS_T template <int W, int KS, int IS, bool OWNER, bool ONE_COLOUR>
#define MGK_COLUMNS_C Columns<W, KS, IS, OWNER, ONE_COLOUR>

MGK_COLUMNS_T
struct Columns {
    static constexpr int T = W * 32, S = KS * IS, R = (int)sizeof(real), ARC = (int)sizeof(Arc);
    static_assert(!OWNER || IS <= 2, "the owner path shuffles from at most two column chunks");
    static constexpr int OS = OWNER ? IS : 1;  // column chunks of the owner path's arcs in registers
    static_assert(S >= 1 && KS * W <= 1024, "team shape");
    // per owned entry: r, P, p, A·p (then z), in float64 also 1/P, and for node-wise values x; in
    // float32 z = r / P by the fast division (a reciprocal and a product). K alone needs only
    // φᵀx = Σ_t α_t φᵀp_t (φ = st ⊗ st', x = Σ_t α_t p_t), so a thread keeps xs[b] = Σ_t α_t Σ_a
    // st_i p_t[i, k] for its rows i and the column k of chunk b, and K sums st'_k xs[b]: one
    // register a thread where x took one an entry
    static constexpr bool KEEP_INV = sizeof(real) == 8, KEEP_X = MGK_NODEWISE;
    static constexpr int H = KS / 2;  // ONE_COLOUR: rows a warp of each colour
    static_assert(!ONE_COLOUR || (!KEEP_X && KS % 2 == 0), "the solve on one colour: K alone, rows split in two");

    // the team: this thread's place, the shared window, the team sums' scratch and which half is next
    int lane, warp, team, rank;
    unsigned window;
    double (*red)[32][2];
    int& flip;
    // the pair: its graphs and sizes, graph 1's arcs a row (DA, padded; da, visited), graph 2's a
    // column (DB, padded), the columns of V, the bytes of a row of P, of V and between the rows
    // graph 1's arcs address, the byte offsets into mgk_smem (lowrank.py's column_bytes and
    // column_pair_bytes) of P, V, graph 1's start probabilities, graph 1's padded arcs, graph 2's
    Factor GA, GB;
    int n1, n2, DA, DB, da, NC, prow, vrow, arow, P, V, ST, TA, TB;
    bool own;       // the owner path (see above)
    unsigned live;  // the terms with edges in both graphs
    // one_colour: graph 1's nodes numbered colour 0 first (lowrank.py), no arc between two of colour 1,
    // and each colour fits half the slots: slots a < H hold colour 0's rows warp + a W, slots a >= H colour 1's
    // n0 + warp + (a - H) W. Otherwise slot a holds row warp + a W.
    int n0, n0h, lim0;  // colour 0's nodes; the row of table row u >= W H: u + n0h; rows u < W H below lim0
    unsigned pown, pown_hi;  // P at (warp, lane); the same for slots a >= H
    int rows, rows0, rows1;  // of graph 1 owned by this warp: all, of colour 0 (slots a < H), of colour 1
    // the thread's entries (slot s = a IS + b: row slot a, column chunk b) and its φᵀx shares
    real xv[KEEP_X ? S : 1], rv[S], Pv[S], pv[S], av[S], Iv[KEEP_INV ? S : 1], xs[IS];
    unsigned kc[IS];  // this lane's column of V (the term's zero column past the last); own: of P
    unsigned src[OS];  // own: column k's arcs in graph 2, source column (byte d) and value; padded with k, 0
    real sval[OS][4];

    __device__ __forceinline__ Columns(double (*scratch)[32][2], int& flip_, int2 ij, const Factor& A, const Factor& B,
                                       const Side& SA, const Side& SB, const Launch& L, int terms);
    __device__ __forceinline__ real precondition(int s, real v) const {
        if constexpr (KEEP_INV) return v * Iv[s];
        else return precond(v, Pv[s]);
    }
    __device__ __forceinline__ bool fits() const {  // the solve on one colour takes the pair
        return !ONE_COLOUR || (n0 > 0 && n0 <= W * H && n1 - n0 <= W * H);
    }
    __device__ __forceinline__ void stage_rows(int terms);
    __device__ __forceinline__ void stage_columns();
    __device__ __forceinline__ void stage_start();
    __device__ __forceinline__ void clear();
    __device__ __forceinline__ void lane_columns();
    __device__ __forceinline__ void owner_arcs();
    __device__ __forceinline__ double start(real c, const double* pn);
    __device__ __forceinline__ void step1(int lo, int hi);
    __device__ __forceinline__ void fill_v(int lo, int hi);
    template <int A0, int NR> __device__ __forceinline__ void gather();
    template <int A0, int NR> __device__ __forceinline__ void gather_last();
    template <int A0, int NR> __device__ __forceinline__ void owner_product();
    template <int A0, int NR> __device__ __forceinline__ void step2();
    template <int NR> __device__ __forceinline__ void next_p(real beta);
    template <int NR> __device__ __forceinline__ real p_product();
    template <int NR> __device__ __forceinline__ void z_half(double& rz_new, double& rr, double rz, bool first);
    template <int NR> __device__ __forceinline__ void start_weights(real (&sp)[IS]);
    template <int NR> __device__ __forceinline__ void descend(real alpha);
    template <int NR> __device__ __forceinline__ void p_half(double rz);
    __device__ __forceinline__ void cg(double tol, int limit, int& its, bool& done);
    template <int NR> __device__ __forceinline__ void schur_start(double& rz_new, double& rr);
    template <int NR> __device__ __forceinline__ void put_p();
    template <int NR> __device__ __forceinline__ void u_half();
    template <int NR> __device__ __forceinline__ void schur_half(double rz, double& rz_new, double& rr);
    __device__ __forceinline__ void keep_x0();
    template <int NR> __device__ __forceinline__ void x1_half();
    __device__ __forceinline__ void cg_one_colour(double DD, double tol, int limit, int& its, bool& done);
    __device__ __forceinline__ double total_one_colour(int lmin, const double* pn);
    __device__ __forceinline__ double total_nodal(const Launch& L, int job, int lmin, const double* pn);
    __device__ __forceinline__ double total_k(int lmin, const double* pn);
};

// The team's place and the pair's sizes and shared layout.
MGK_COLUMNS_T
__device__ __forceinline__ MGK_COLUMNS_C::Columns(double (*scratch)[32][2], int& flip_, int2 ij, const Factor& A,
                                                  const Factor& B, const Side& SA, const Side& SB, const Launch& L,
                                                  int terms)
    : red(scratch), flip(flip_), GA(A), GB(B) {
    const Place<W> at;
    lane = at.lane, warp = at.warp, team = at.team, rank = at.rank;
    window = (unsigned)__cvta_generic_to_shared(mgk_smem);
    n1 = GA.n, n2 = GB.n;
    DA = (SA.most[ij.x].x + 1) & ~1, DB = (SB.most[ij.y].y + 3) & ~3;  // padded, as staged
    da = SA.most[ij.x].x;  // the arcs step 2 visits: past them only zeros
    own = OWNER && terms == 1 && DB <= 4;
    NC = terms * (n2 + 1);
    prow = (n2 | 1) * R, vrow = (NC | 1) * R;
    arow = own ? prow : vrow;
    P = team * L.team_bytes, V = P + align16(n1 * prow), ST = V + align16(n1 * vrow);
    TA = ST + align16(n1 * R);
    TB = TA + W * KS * DA * ARC;
    live = 0;
    for (int t = 0; t < terms; ++t) {
        const int* ra = GA.rptr + t * (n1 + 1);
        const int* rb = GB.rptr + t * (n2 + 1);
        if (ra[0] != ra[n1] && rb[0] != rb[n2]) live |= 1u << t;
    }
    n0 = ONE_COLOUR ? SA.half[ij.x] : 0;
    n0h = ONE_COLOUR ? n0 - W * H : 0;
    lim0 = ONE_COLOUR ? n0 : n1;
    pown = window + P + warp * prow + lane * R;
    pown_hi = pown + n0h * prow;
    rows = min(KS, max(0, (n1 - warp + W - 1) / W));
    rows0 = min(H, max(0, (n0 - warp + W - 1) / W));
    rows1 = min(H, max(0, (n1 - n0 - warp + W - 1) / W));
}

// Graph 1's arcs: arc d of row i, in every live term, stored at ((d / 2) W KS + u) 2 + d % 2 for
// table row u = warp + a W (rows past n1: zero arcs).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::stage_rows(int terms) {
    for (int s = rank; s < W * KS * DA; s += T) {
        const int u = (s >> 1) % (W * KS);
        const int i = u < W * H ? (u < lim0 ? u : n1) : u + n0h;  // n1: no row
        int d = (s >> 1) / (W * KS) * 2 + (s & 1);
        Arc arc{0, 0};
        for (int t = 0; t < terms && i < n1; ++t) {
            if (!(live >> t & 1)) continue;
            const int e0 = GA.rptr[t * (n1 + 1) + i], deg = GA.rptr[t * (n1 + 1) + i + 1] - e0;
            if (d < deg) {
                arc = Arc{GA.col[e0 + d] * arow + t * (n2 + 1) * R, GA.val[e0 + d]};
                break;
            }
            d -= deg;
        }
        SH(Arc, TA)[s] = arc;
    }
}

// Graph 2's arcs: arc d of column c = t (n2 + 1) + k of V, row k of G_t (none on the owner path).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::stage_columns() {
    for (int s = rank; s < (own ? 0 : NC * DB); s += T) {
        const int c = (s >> 1) % NC, d = (s >> 1) / NC * 2 + (s & 1), t = c / (n2 + 1), k = c - t * (n2 + 1);
        Arc arc{0, 0};
        if (k < n2 && (live >> t & 1)) {
            const int e0 = GB.rptr[t * (n2 + 1) + k], deg = GB.rptr[t * (n2 + 1) + k + 1] - e0;
            if (d < deg) arc = Arc{GB.col[e0 + d] * R, GB.val[e0 + d]};
        }
        SH(Arc, TB)[s] = arc;
    }
}

// Graph 1's start probabilities, for the φᵀx shares (none kept when x is).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::stage_start() {
    if constexpr (!KEEP_X) {
        for (int s = rank; s < n1; s += T) st_s(window + ST + s * R, GA.v.st[s]);
    }
}

// The solve on one colour: P and V zero. A padding arc (value 0, offset 0) reads row 0, which the
// start has not written (a NaN left there by another pair would survive the product by 0).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::clear() {
    const int words = (own ? align16(n1 * prow) : V - P + align16(n1 * vrow)) / 4;
    for (int s = rank; s < words; s += T) st_s<float>(window + P + 4 * s, 0.0f);
    team_sync<W>();
}

MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::lane_columns() {
#pragma unroll
    for (int b = 0; b < IS; ++b) kc[b] = window + V + min(lane + 32 * b, n2) * R;
}

// The owner path: each lane's column of P and its column's arcs in graph 2, in registers.
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::owner_arcs() {
#pragma unroll
    for (int b = 0; b < OS; ++b) {
        const int k = lane + 32 * b;
        kc[b] = window + P + min(k, n2 - 1) * R;  // columns past n2: a finite one, times 0
        const int e0 = GB.rptr[min(k, n2)], deg = k < n2 ? GB.rptr[k + 1] - e0 : 0;
        src[b] = 0;
#pragma unroll
        for (int d = 0; d < 4; ++d) {
            src[b] |= (unsigned)(d < deg ? GB.col[e0 + d] : k) << (8 * d);
            sval[b][d] = d < deg ? GB.val[e0 + d] : (real)0;
        }
    }
}

// The start: r = D, y = r / P stored in P (one_colour: colour 1 keeps D for x₁ in p and x₀ of slot
// s - S / 2 in r; y₁ = D₁ / P₁); returns this thread's share of D·D.
MGK_COLUMNS_T
__device__ __forceinline__ double MGK_COLUMNS_C::start(real c, const double* pn) {
    double DD = 0.0;
#pragma unroll
    for (int b = 0; b < IS; ++b) xs[b] = 0;
#pragma unroll
    for (int a = 0; a < KS; ++a) {
        const int i = warp + a * W + (a >= H ? n0h : 0);
        const bool in = i < (a < H ? lim0 : n1);
#pragma unroll
        for (int b = 0; b < IS; ++b) {
            const int s = a * IS + b, k = lane + 32 * b;
            real D = 0, Pd = 1;
            if (in && k < n2) diagonal(GA.v, GB.v, i, k, c, pn, D, Pd);
            if constexpr (KEEP_X) xv[s] = 0;
            rv[s] = D;
            Pv[s] = Pd;
            if constexpr (KEEP_INV) Iv[s] = (real)1 / Pd;
            pv[s] = 0;
            if (ONE_COLOUR && a >= H) {
                pv[s] = D;
                rv[s] = 0;
            }
            DD += (double)D * D;
            if (in && k < n2 && (!ONE_COLOUR || a >= H))
                st_s((a < H ? pown : pown_hi) + a * W * prow + b * 32 * R, precondition(s, D));
        }
    }
    return DD;
}

// Step 1: V = P [G_t]ᵀ at rows lo .. hi - 1, the warp's columns S at a time.
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::step1(int lo, int hi) {
    for (int j0 = lo; j0 < hi; j0 += 32) {
        const unsigned pj = window + P + min(j0 + lane, hi - 1) * prow;
        const unsigned vj = window + V + (j0 + lane) * vrow;
        for (int c0 = warp; c0 < NC; c0 += W * S) {
            // the warp's columns c0 + W m of this block, m < NM: no test per column, so
            // the loads of all NM columns can be in flight together
            with_count<S>(min(S, (NC - c0 + W - 1) / W), [&](auto count) {
                constexpr int NM = decltype(count)::value;
#pragma unroll
                for (int m = 0; m < NM; ++m) av[m] = 0;
#pragma unroll 1
                for (int d = 0; d < DB; d += 4) {
                    const unsigned tb = window + TB + ((d >> 1) * NC + c0) * 2 * ARC;
                    Arc g0, g1, g2, g3;  // column m's arcs, loaded while column m - 1 adds
                    if constexpr (NM > 0) {
                        arc_pair(tb, g0, g1);
                        arc_pair(tb + NC * 2 * ARC, g2, g3);
                    }
#pragma unroll
                    for (int m = 0; m < NM; ++m) {
                        const Arc h0 = g0, h1 = g1, h2 = g2, h3 = g3;
                        if (m + 1 < NM) {
                            arc_pair(tb + (m + 1) * W * 2 * ARC, g0, g1);
                            arc_pair(tb + (NC + (m + 1) * W) * 2 * ARC, g2, g3);
                        }
                        av[m] += h0.val * ld_s(pj + h0.off);
                        av[m] += h1.val * ld_s(pj + h1.off);
                        av[m] += h2.val * ld_s(pj + h2.off);
                        av[m] += h3.val * ld_s(pj + h3.off);
                    }
                }
                if (j0 + lane < hi)
#pragma unroll
                    for (int m = 0; m < NM; ++m) st_s(vj + (c0 + W * m) * R, av[m]);
            });
        }
    }
}

// Step 1 and the barrier after it (the owner path has no V).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::fill_v(int lo, int hi) {
    if (!own) {
        step1(lo, hi);
        team_sync<W>();  // V complete
    }
}

// Step 2 (and the owner path's U = F P): Σ_t F_t V_t at slots A0 .. A0 + NR - 1 into av, the arcs
// by pairs; an odd count's last arc is gather_last's.
MGK_COLUMNS_T
template <int A0, int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::gather() {
#pragma unroll
    for (int s = A0 * IS; s < (A0 + NR) * IS; ++s) av[s] = 0;
#pragma unroll 1
    for (int d = 0; d + 1 < da; d += 2) {
        const unsigned at = window + TA + (d * W * KS + 2 * warp) * ARC;
        Arc f, g;  // row a's arcs, loaded while row a - 1 adds
        if constexpr (NR > 0) arc_pair(at + 2 * A0 * W * ARC, f, g);
#pragma unroll
        for (int a = A0; a < A0 + NR; ++a) {
            const Arc f0 = f, g0 = g;
            if (a + 1 < A0 + NR) arc_pair(at + 2 * (a + 1) * W * ARC, f, g);
#pragma unroll
            for (int b = 0; b < IS; ++b) {
                av[a * IS + b] += f0.val * ld_s(kc[b] + f0.off);
                av[a * IS + b] += g0.val * ld_s(kc[b] + g0.off);
            }
        }
    }
}

// The last arc of an odd count, alone (its pair's second is a zero).
MGK_COLUMNS_T
template <int A0, int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::gather_last() {
    const unsigned at = window + TA + ((da - 1) * W * KS + 2 * warp) * ARC;
#pragma unroll
    for (int a = A0; a < A0 + NR; ++a) {
        const Arc f0 = arc_one(at + 2 * a * W * ARC);
#pragma unroll
        for (int b = 0; b < IS; ++b) av[a * IS + b] += f0.val * ld_s(kc[b] + f0.off);
    }
}

// The owner path's U Gᵀ: row a's U from the lanes (and chunks) of each column's arcs.
MGK_COLUMNS_T
template <int A0, int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::owner_product() {
#pragma unroll
    for (int a = A0; a < A0 + NR; ++a) {
        real y[OS];
#pragma unroll
        for (int b = 0; b < OS; ++b) {
            y[b] = 0;
#pragma unroll
            for (int d = 0; d < 4; ++d) {
                const unsigned c = src[b] >> (8 * d);
                real u = __shfl_sync(0xffffffffu, av[a * IS], c);  // lane: its low 5 bits
                if constexpr (OS == 2) {
                    const real v = __shfl_sync(0xffffffffu, av[a * IS + 1], c);
                    u = c & 32 ? v : u;
                }
                y[b] += sval[b][d] * u;
            }
        }
#pragma unroll
        for (int b = 0; b < OS; ++b) av[a * IS + b] = y[b];
    }
}

// N's product at slots A0 .. A0 + NR - 1 into av.
MGK_COLUMNS_T
template <int A0, int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::step2() {
    gather<A0, NR>();
    if (da & 1) gather_last<A0, NR>();
    if (own) owner_product<A0, NR>();
}

// p = z + beta p at the warp's first NR rows (z in av), stored in P for the next mat-vec.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::next_p(real beta) {
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
        for (int b = 0; b < IS; ++b) {
            const int s = a * IS + b;
            pv[s] = av[s] + beta * pv[s];
            if (lane + 32 * b < n2) st_s(pown + a * W * prow + b * 32 * R, pv[s]);
        }
}

// A·p = P p − N p at the warp's first NR rows (N p in av, A·p left there); this thread's share of
// p·Ap: float sums of at most 8 terms.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ real MGK_COLUMNS_C::p_product() {
    real part = 0;
#pragma unroll
    for (int s = 0; s < NR * IS; ++s) {
        av[s] = Pv[s] * pv[s] - av[s];
        part += pv[s] * av[s];
    }
    return part;
}

// The half of y: z = y + (N y) / P = (r + N y) / P, r·z and r·r summed over the team, then
// p = z + beta p (p = z at the start).
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::z_half(double& rz_new, double& rr, double rz, bool first) {
    real rz_part = 0, rr_part = 0;
#pragma unroll
    for (int s = 0; s < NR * IS; ++s) {
        av[s] = precondition(s, rv[s] + av[s]);  // z
        rz_part += rv[s] * av[s];
        rr_part += rv[s] * rv[s];
    }
    rz_new = rz_part;
    rr = rr_part;
    team_sum2<W, 8>(rz_new, rr, red, flip, warp, lane);  // also: every read of y is done
    const real beta = first ? (real)0 : fast_div((real)rz_new, (real)rz);
    next_p<NR>(beta);
}

// Σ_a st_i p[i, k] over the warp's first NR rows, by chunk (for xs).
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::start_weights(real (&sp)[IS]) {
    if constexpr (!KEEP_X) {
#pragma unroll
        for (int a = 0; a < NR; ++a) {
            const real st = ld_s(window + ST + (warp + a * W) * R);
#pragma unroll
            for (int b = 0; b < IS; ++b) sp[b] += st * pv[a * IS + b];
        }
    }
}

// x += alpha p (when kept), r -= alpha A·p, and y = r / P stored for the next mat-vec.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::descend(real alpha) {
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
        for (int b = 0; b < IS; ++b) {
            const int s = a * IS + b;
            if constexpr (KEEP_X) xv[s] += alpha * pv[s];
            rv[s] -= alpha * av[s];
            if (lane + 32 * b < n2) st_s(pown + a * W * prow + b * 32 * R, precondition(s, rv[s]));  // y
        }
}

// The half of p: alpha = r·z / p·Ap, then x (or its φᵀx shares), r and y.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::p_half(double rz) {
    const real part = p_product<NR>();
    real sp[IS];
#pragma unroll
    for (int b = 0; b < IS; ++b) sp[b] = 0;
    start_weights<NR>(sp);
    double pAp = part;
    team_sum1<W, 8>(pAp, red, flip, warp, lane);  // also: every read of V and of p is done
    const real alpha = fast_div((real)rz, (real)pAp);
#pragma unroll
    for (int b = 0; b < IS; ++b)  // rounded as before the solver was cut in parts (see add_product_apart)
        xs[b] = IS == 1 && NR >= 3 ? add_product_apart(xs[b], alpha, sp[b]) : xs[b] + alpha * sp[b];
    descend<NR>(alpha);
}

// CG with the two-term Neumann preconditioner: two halves an iteration, each a mat-vec and a team
// sum: p's (then alpha, x, r and y = r / P) and y's (then z, beta, p). The first half of all gives
// z at the start, so p = z. Converged when ||r|| <= tol ||D|| (r = D at the start).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::cg(double tol, int limit, int& its, bool& done) {
    double rz = 0.0, bound = 0.0;
    for (bool half = true;; half = !half) {  // half: the mat-vec of y, for z = M⁻¹ r (see above)
        team_sync<W>();  // p or y written
        fill_v(0, n1);
        double rz_new = 0.0, rr = 0.0;
        with_count<KS>(rows, [&](auto count) {  // the rest of the iteration on this warp's rows only
            constexpr int NR = decltype(count)::value;
            this->template step2<0, NR>();
            if (half) this->template z_half<NR>(rz_new, rr, rz, its == 0);
            else this->template p_half<NR>(rz);
        });
        if (!half) {
            ++its;
            continue;
        }
        if (!its) bound = tol * tol * rr;  // r = D
        rz = rz_new;
        done = rr <= bound;
        if (done || its >= limit) break;
    }
}

// The Schur system's start: r₀ = b₀ = D₀ + N₀₁ y₁, z₀ = r₀ / P₀, p₀ = z₀ stored in P.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::schur_start(double& rz_new, double& rr) {
    step2<0, NR>();
    real rz_part = 0, rr_part = 0;
#pragma unroll
    for (int s = 0; s < NR * IS; ++s) {
        rv[s] += av[s];
        pv[s] = precondition(s, rv[s]);
        rz_part += rv[s] * pv[s];
        rr_part += rv[s] * rv[s];
    }
    rz_new = rz_part;
    rr = rr_part;
    team_sum2<W, 8>(rz_new, rr, red, flip, warp, lane);  // also: every read of y₁ is done
    put_p<NR>();
}

// p₀ at the warp's first NR rows stored in P.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::put_p() {
#pragma unroll
    for (int a = 0; a < NR; ++a)
#pragma unroll
        for (int b = 0; b < IS; ++b)
            if (lane + 32 * b < n2) st_s(pown + a * W * prow + b * 32 * R, pv[a * IS + b]);
}

// u₁ = N₁₀ p₀ / P₁ at colour 1's rows, stored in P.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::u_half() {
    step2<H, NR>();
#pragma unroll
    for (int a = H; a < H + NR; ++a)
#pragma unroll
        for (int b = 0; b < IS; ++b)
            if (lane + 32 * b < n2) st_s(pown_hi + a * W * prow + b * 32 * R, precondition(a * IS + b, av[a * IS + b]));
}

// S p₀ = P₀ p₀ − N₀₁ u₁, then CG's updates: x₀ (kept in colour 1's r), r₀, z₀, p₀.
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::schur_half(double rz, double& rz_new, double& rr) {
    step2<0, NR>();
    double pAp = p_product<NR>();
    team_sum1<W, 8>(pAp, red, flip, warp, lane);  // also: every read of V and of u₁ is done
    const real alpha = fast_div((real)rz, (real)pAp);
    real rz_part = 0, rr_part = 0;
#pragma unroll
    for (int s = 0; s < NR * IS; ++s) {
        rv[S / 2 + s] += alpha * pv[s];  // x₀
        rv[s] -= alpha * av[s];
        av[s] = precondition(s, rv[s]);  // z₀
        rz_part += rv[s] * av[s];
        rr_part += rv[s] * rv[s];
    }
    rz_new = rz_part;
    rr = rr_part;
    team_sum2<W, 8>(rz_new, rr, red, flip, warp, lane);
    next_p<NR>(fast_div((real)rz_new, (real)rz));
}

// x₀ where p₀ was, for x₁ (every read of p₀ is done: the last team sum).
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::keep_x0() {
#pragma unroll
    for (int a = 0; a < H; ++a)
#pragma unroll
        for (int b = 0; b < IS; ++b)
            if (a < rows0 && lane + 32 * b < n2) st_s(pown + a * W * prow + b * 32 * R, rv[S / 2 + a * IS + b]);
}

// x₁ = (D₁ + N₁₀ x₀) / P₁ into av (D₁ kept in p).
MGK_COLUMNS_T
template <int NR>
__device__ __forceinline__ void MGK_COLUMNS_C::x1_half() {
    step2<H, NR>();
#pragma unroll
    for (int s = H * IS; s < (H + NR) * IS; ++s) av[s] = precondition(s, pv[s] + av[s]);
}

// CG on colour 0's Schur complement with the Jacobi preconditioner (see above), then x₁.
MGK_COLUMNS_T
__device__ __forceinline__ void MGK_COLUMNS_C::cg_one_colour(double DD, double tol, int limit, int& its, bool& done) {
    team_sum1<W, 8>(DD, red, flip, warp, lane);  // also: y₁ written
    const double bound = tol * tol * DD;
    fill_v(n0, n1);
    double rz, rz_new = 0.0, rr = 0.0;
    with_count<H>(rows0, [&](auto count) { this->template schur_start<decltype(count)::value>(rz_new, rr); });
    rz = rz_new;
    done = rr <= bound;
    while (!done && its < limit) {
        team_sync<W>();  // p₀ written
        fill_v(0, n0);
        with_count<H>(rows1, [&](auto count) { this->template u_half<decltype(count)::value>(); });
        team_sync<W>();  // u₁ written; every read of p₀ is done
        fill_v(n0, n1);
        rz_new = 0.0;
        rr = 0.0;
        with_count<H>(rows0, [&](auto count) { this->template schur_half<decltype(count)::value>(rz, rz_new, rr); });
        rz = rz_new;
        ++its;
        done = rr <= bound;
    }
    keep_x0();
    team_sync<W>();  // x₀ written
    fill_v(0, n0);
    with_count<H>(rows1, [&](auto count) { this->template x1_half<decltype(count)::value>(); });
}

// K's share: Σ p_i p'_k (x_ik − [lmin] V_ik) over both colours (x₀ kept in colour 1's r, x₁ in av).
MGK_COLUMNS_T
__device__ __forceinline__ double MGK_COLUMNS_C::total_one_colour(int lmin, const double* pn) {
    double total = 0.0;
#pragma unroll
    for (int a = 0; a < H; ++a) {
#pragma unroll
        for (int b = 0; b < IS; ++b) {
            const int k = lane + 32 * b;
            if (k >= n2) continue;
            if (a < rows0) total += k_term(GA.v, GB.v, warp + a * W, k, (double)rv[S / 2 + a * IS + b], lmin, pn);
            if (a < rows1) total += k_term(GA.v, GB.v, n0 + warp + a * W, k, (double)av[(H + a) * IS + b], lmin, pn);
        }
    }
    return total;
}

// K's share from x kept at every entry, each entry's value written when node-wise values are asked.
MGK_COLUMNS_T
__device__ __forceinline__ double MGK_COLUMNS_C::total_nodal(const Launch& L, int job, int lmin, const double* pn) {
    double total = 0.0;
    const long long noff = L.nodal ? L.nodal_off[job] : 0;
#pragma unroll
    for (int a = 0; a < KS; ++a) {
        const int i = warp + a * W;
#pragma unroll
        for (int b = 0; b < IS; ++b) {
            const int k = lane + 32 * b;
            if (i >= n1 || k >= n2) continue;
            const double v = k_term(GA.v, GB.v, i, k, (double)xv[a * IS + b], lmin, pn);
            total += v;
            if (L.nodal) L.nodal[noff + (long long)i * n2 + k] = v;
        }
    }
    return total;
}

// K's share from the φᵀx shares: Σ st'_k xs[b], and when lmin = 1 each entry's k_term of x = 0:
// -st_i st'_k V_ik.
MGK_COLUMNS_T
__device__ __forceinline__ double MGK_COLUMNS_C::total_k(int lmin, const double* pn) {
    double total = 0.0;
#pragma unroll
    for (int b = 0; b < IS; ++b) {
        const int k = lane + 32 * b;
        if (k >= n2) continue;
        total += (double)xs[b] * (double)GB.v.st[k];
        if (lmin)
            for (int i = warp; i < n1; i += W) total += k_term(GA.v, GB.v, i, k, 0.0, lmin, pn);
    }
    return total;
}

MGK_COLUMNS_T
__device__ __forceinline__ void solve_columns(const Side& SA, const Side& SB, int terms, const Launch& L, const double* pn,
                                              double q, double tol, int max_iter, int lmin) {
    __shared__ double red[2][32][2];
    __shared__ int job_s;
    int flip = 0;
    const real c = (real)(1.0 / ((1.0 - q) * (1.0 - q)));
    factor_pairs<W>(SA, SB, L, job_s, threadIdx.x & 31, [&](int job, int2 ij, const Factor& GA, const Factor& GB) __attribute__((always_inline)) {
        MGK_COLUMNS_C C(red, flip, ij, GA, GB, SA, SB, L, terms);
        if (!C.fits()) {  // not for this kernel: an error, not a value
            if (C.rank == 0) record(L, L.pairs[job], 0.0, 0, false);
            return;
        }
        C.stage_rows(terms);
        C.stage_columns();
        C.stage_start();
        if constexpr (ONE_COLOUR) C.clear();
        C.lane_columns();
        if (C.own) C.owner_arcs();
        const double DD = C.start(c, pn);  // one_colour: D·D
        const int limit = max_iter > 0 ? max_iter : GA.n * GB.n + 100;
        int its = 0;
        bool done = false;  // r = D > 0: ||r|| > tol ||D|| at the start (tol < 1)
        if constexpr (!ONE_COLOUR) C.cg(tol, limit, its, done);
        else C.cg_one_colour(DD, tol, limit, its, done);
        double total;
        if constexpr (ONE_COLOUR) total = C.total_one_colour(lmin, pn);
        else if constexpr (MGK_COLUMNS_C::KEEP_X) total = C.total_nodal(L, job, lmin, pn);
        else total = C.total_k(lmin, pn);
        team_sum1<W, 8>(total, red, flip, C.warp, C.lane);
        if (C.rank == 0) record(L, L.pairs[job], total, its, done);
        team_sync<W>();  // shared memory free for the next pair
    });
}

// ---- Gradients (tile layout, global memory; any edge kernel) --------------------------------
// Per pair: x solves A x = D and y solves A y = s (s = p p'; A is symmetric), then
// dK/dθ = yᵀ(dD/dθ − dA/dθ x) [− Σ s dV/dθ when lmin = 1] for q, the node kernel's and the
// edge kernel's hyperparameters (raw scale): NODE_GRAD/EDGE_GRAD write the NHN/NHE derivatives;
// for the start probabilities' NHP: Σ (dp_i p'_k + p_i dp'_k) (x_ik [− V_ik]), dp per node in dsta/dstb.

// CG on one pair in global scratch: v = A⁻¹ (D, or s when adjoint); returns the iterations.
template <int W>
__device__ int cg_global(const Graph& A, const Graph& B, bool adjoint, real* p, real* r, real* Ap, real* P,
                         double* v, double (*red)[32][2], int& flip, int warp, int lane, int rank, const double* pn,
                         const double* pe, real c, double tol, int limit, bool& done, const double* rhs = nullptr) {
    constexpr int T = W * 32;
    const int nOT = A.nt * B.nt, E = nOT * 64;
    double rz = 0.0, rr = 0.0;
    for (int o = rank; o < E; o += T) {
        const int ot = o >> 6, e = o & 63;
        const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
        real b = 0, Pv = 1;
        if (i < A.n && k < B.n) {
            real D;
            diagonal(A.v, B.v, i, k, c, pn, D, Pv);
            b = rhs ? (real)rhs[o] : adjoint ? A.v.st[i] * B.v.st[k] : D;  // rhs may be v itself: read first
        }
        v[o] = 0.0;
        r[o] = b;
        P[o] = Pv;
        p[o] = precond(b, Pv);
        rz += (double)b * precond(b, Pv);
        rr += (double)b * b;
    }
    team_sum2<W>(rz, rr, red, flip, warp, lane);
    const int its = pcg<W>(rz, rr, tol * tol * rr, limit, done, red, flip, warp, lane,
        [&]() {
            double pAp = 0.0;
            for (int ot = warp; ot < nOT; ot += W) {
                real acc0 = 0, acc1 = 0;
                adjacency_product<true>(A, B, p, ot / B.nt, ot % B.nt, lane >> 3, lane & 7, pe, acc0, acc1);
                const int o = ot * 64 + lane;
                const real a0 = P[o] * p[o] - acc0, a1 = P[o + 32] * p[o + 32] - acc1;
                Ap[o] = a0;
                Ap[o + 32] = a1;
                pAp += (double)p[o] * a0 + (double)p[o + 32] * a1;
            }
            return pAp;
        },
        [&](double alpha, double& rz_new, double& rr) {
            for (int o = rank; o < E; o += T) {
                v[o] += alpha * (double)p[o];
                const real rv = r[o] - (real)alpha * Ap[o];
                r[o] = rv;
                rz_new += (double)rv * precond(rv, P[o]);
                rr += (double)rv * rv;
            }
        },
        [&](real beta) {
            for (int o = rank; o < E; o += T) p[o] = precond(r[o], P[o]) + beta * p[o];
        });
    team_sync<W>();  // v complete
    return its;
}

#if NHE > 0
// Σ over neighbours (j, l) of (i0, k) and (i0 + 4, k) of w w' dκ_e/dθ_h x[j, l], every h at once.
__device__ __forceinline__ void adjacency_gradient(const Graph& A, const Graph& B, const double* x, int I, int K,
                                                   int ii, int kk, const double* pe, double* acc0, double* acc1) {
    const int sh0 = ii * 8, sh1 = (ii + 4) * 8, shk = kk * 8;
    for (int a = A.trp[I]; a < A.trp[I + 1]; ++a) {
        const u64 M1 = A.mask[a];
        const unsigned m0 = (unsigned)(M1 >> sh0) & 0xffu, m1 = (unsigned)(M1 >> sh1) & 0xffu;
        if (!(m0 | m1)) continue;
        const int J = A.tcol[a];
        const real* wa = A.w + a * 64;
        const real* fa = A.ef + a * 64 * NFE;
        for (int b = B.trp[K]; b < B.trp[K + 1]; ++b) {
            const unsigned m2 = (unsigned)(B.mask[b] >> shk) & 0xffu;
            if (!m2) continue;
            const double* xt = x + (J * B.nt + B.tcol[b]) * 64;
            const real* wb = B.w + b * 64;
            const real* fb = B.ef + b * 64 * NFE;
            for (unsigned ml = m2; ml; ml &= ml - 1) {
                const int ll = __ffs(ml) - 1;
                real y[NFE];
#pragma unroll
                for (int f = 0; f < NFE; ++f) y[f] = fb[f * 64 + shk + ll];
                for (int half = 0; half < 2; ++half) {
                    const int sh = half ? sh1 : sh0;
                    double* acc = half ? acc1 : acc0;
                    for (unsigned mj = half ? m1 : m0; mj; mj &= mj - 1) {
                        const int jj = __ffs(mj) - 1;
                        real xf[NFE];
#pragma unroll
                        for (int f = 0; f < NFE; ++f) xf[f] = fa[f * 64 + sh + jj];
                        double d[NHE];
                        EDGE_GRAD(xf, y, pe, d);
                        const double wx = (double)wa[sh + jj] * (double)wb[shk + ll] * xt[jj * 8 + ll];
#pragma unroll
                        for (int h = 0; h < NHE; ++h) acc[h] += wx * d[h];
                    }
                }
            }
        }
    }
}
#endif

// The global scratch of a block's team: four real vectors (p, r, A·p, P) and two double ones, each
// L.team_bytes entries; and the loop over the pairs of the launch's class that a block takes from
// the job counter: body(job, (i, j), A, B, iteration limit) for each.
struct Scratch {
    real *p, *r, *Ap, *P;
    double *X, *Y;
    __device__ explicit Scratch(const Launch& L) {
        const long long base = (long long)blockIdx.x * L.team_bytes;
        p = L.scratch + 4 * base;
        r = p + L.team_bytes;
        Ap = r + L.team_bytes;
        P = Ap + L.team_bytes;
        X = L.xscratch + 2 * base;
        Y = X + L.team_bytes;
    }
};

template <int W, typename Body>
__device__ void global_pairs(const GraphSet& SA, const GraphSet& SB, const Launch& L, int max_iter, Body body) {
    __shared__ int job_s;
    const int lane = threadIdx.x & 31;
    const int start = L.class_ptr[L.cls], end = L.class_ptr[L.cls + 1];
    while (true) {
        const int job = next_job<W>(L, start, job_s, lane);
        if (job >= end) break;
        const int2 ij = L.pairs[job];
        const Graph A = SA.global(ij.x), B = SB.global(ij.y);
        body(job, ij, A, B, max_iter > 0 ? max_iter : A.n * B.n + 100);
    }
}

// A block of W warps per pair; pairs[job] -> out[job], grad[job * H + h] (H = 1 + NHN + NHE + NHP).
template <int W>
__device__ void gradient_pairs(const GraphSet& SA, const GraphSet& SB, const Launch& L, double* grad,
                               const real* dsta, const real* dstb, const double* pn, const double* pe, double q,
                               double tol, int max_iter, int lmin) {
    __shared__ double red[2][32][2];
    constexpr int H = 1 + NHN + NHE + NHP;
    constexpr int T = W * 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, rank = threadIdx.x;
    const Scratch S(L);
    real *p = S.p, *r = S.r, *Ap = S.Ap, *P = S.P;
    double *X = S.X, *Yv = S.Y;
    int flip = 0;
    const real c = (real)(1.0 / ((1.0 - q) * (1.0 - q)));
    global_pairs<W>(SA, SB, L, max_iter, [&](int job, int2 ij, const Graph& A, const Graph& B, int limit) {
        bool dx, dy;
        const int itx = cg_global<W>(A, B, false, p, r, Ap, P, X, red, flip, warp, lane, rank, pn, pe, c, tol, limit, dx);
        const int ity = cg_global<W>(A, B, true, p, r, Ap, P, Yv, red, flip, warp, lane, rank, pn, pe, c, tol, limit, dy);
        double g[H + 1];  // g[H]: K
#pragma unroll
        for (int h = 0; h <= H; ++h) g[h] = 0.0;
        const int nOT = A.nt * B.nt, E = nOT * 64;
        for (int o = rank; o < E; o += T) {
            const int ot = o >> 6, e = o & 63;
            const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
            if (i >= A.n || k >= B.n) continue;
            const double V = (double)node_value(A.v, B.v, i, k, pn);
            const double D = (double)(A.v.deg[i] * B.v.deg[k] * c);
            const double s = (double)A.v.st[i] * (double)B.v.st[k], x = X[o], y = Yv[o];
            g[H] += k_term(A.v, B.v, i, k, x, lmin, pn);
            g[0] += y * 2.0 * D / (1.0 - q) * (1.0 - x / V);
#if NHN > 0
            const real* xf = A.v.nf + i * NFN;
            const real* yf = B.v.nf + k * NFN;
            double dv[NHN];
            NODE_GRAD(xf, yf, pn, dv);
#pragma unroll
            for (int h = 0; h < NHN; ++h) g[1 + h] += y * x * D / (V * V) * dv[h] - (lmin ? s * dv[h] : 0.0);
#endif
#if NHP > 0
            {
                const real* dsa = dsta + ((long long)SA.info[ij.x].w + i) * NHP;
                const real* dsb = dstb + ((long long)SB.info[ij.y].w + k) * NHP;
                const double walk = lmin ? x - V : x;
#pragma unroll
                for (int h = 0; h < NHP; ++h)
                    g[1 + NHN + NHE + h] += ((double)dsa[h] * (double)B.v.st[k] + (double)A.v.st[i] * (double)dsb[h]) * walk;
            }
#endif
        }
#if NHE > 0
        for (int ot = warp; ot < nOT; ot += W) {
            double acc0[NHE], acc1[NHE];
#pragma unroll
            for (int h = 0; h < NHE; ++h) acc0[h] = acc1[h] = 0.0;
            adjacency_gradient(A, B, X, ot / B.nt, ot % B.nt, lane >> 3, lane & 7, pe, acc0, acc1);
            const int o = ot * 64 + lane;
#pragma unroll
            for (int h = 0; h < NHE; ++h) g[1 + NHN + h] += Yv[o] * acc0[h] + Yv[o + 32] * acc1[h];
        }
#endif
#pragma unroll
        for (int h = 0; h <= H; h += 2) {
            double a = g[h], b = h + 1 <= H ? g[h + 1] : 0.0;
            team_sum2<W>(a, b, red, flip, warp, lane);
            g[h] = a;
            if (h + 1 <= H) g[h + 1] = b;
        }
        if (rank == 0) {
            L.out[job] = g[H];
#pragma unroll
            for (int h = 0; h < H; ++h) grad[(long long)job * H + h] = g[h];
            tally(L, ij, itx > ity ? itx : ity, dx && dy);
        }
        team_sync<W>();  // scratch free for the next pair
    });
}

// One entry point per (team warps W, output tiles per warp SL, primitive, staging).
#define MGK_ARGS                                                                                               \
    const int4 *ia, const int *trpa, const int *tcola, const u64 *maska, const real *wa, const real *efa,      \
        const real *nfa, const real *dega, const real *sta, const int4 *ib, const int *trpb, const int *tcolb,  \
        const u64 *maskb, const real *wb, const real *efb, const real *nfb, const real *degb, const real *stb,  \
        const int2 *pairs, const int *class_ptr, int cls, int *counter, double *out, long long ld,              \
        long long origin, double *nodal, const long long *nodal_off, u64 *stats, int team_bytes, real *scratch, \
        double *xscratch,                                                                                       \
        const double *pn, const double *pe, double q, double tol, int max_iter, int lmin
// A team's block (one-warp teams share blocks of 8 warps), and the blocks a multiprocessor holds
// when the register allocator is asked for `resident` threads there (gpu.py's MGK_RESIDENT for the
// tile and factored solvers, each column shape's own for the column solver; at least one)
#define MGK_THREADS(W) (W == 1 ? 256 : W * 32)
#define MGK_BLOCKS(resident, threads) ((resident) >= (threads) ? (resident) / (threads) : 1)
#ifndef MGK_RESIDENT
#define MGK_RESIDENT 0
#endif
#define MGK_KERNEL(NAME, W, SL, SPARSE, STAGED)                                                                  \
    extern "C" __global__ void __launch_bounds__(MGK_THREADS(W), MGK_BLOCKS(MGK_RESIDENT, MGK_THREADS(W)))      \
        NAME(MGK_ARGS) {                                                                                        \
        GraphSet SA{ia, trpa, tcola, maska, wa, efa, {nfa, dega, sta}};                                         \
        GraphSet SB{ib, trpb, tcolb, maskb, wb, efb, {nfb, degb, stb}};                                         \
        Launch L{pairs, class_ptr, cls, counter, out, ld, origin, nodal, nodal_off, stats, team_bytes, scratch, \
                 xscratch};                                                                                     \
        solve<W, SL, SPARSE, STAGED>(SA, SB, L, pn, pe, q, tol, max_iter, lmin);                                \
    }
// ---- Node-wise derivatives (tile layout, global memory) -------------------------------------
// Per pair: x solves A x = D; for each hyperparameter of q, the node and the edge kernel a solve
// A z = dD/dθ − dA/dθ x gives dx/dθ = z, and R_ik = p_i p'_k (x_ik [− V_ik]) has
// dR_ik/dθ = p_i p'_k (z_ik [− dV_ik/dθ]); a start probability's θ by the product rule.
// nodal[off + i n2 + k] = R_ik and ngrad[(off + i n2 + k) H + h], in the solver's node order.
template <int W>
__device__ void nodal_gradient_pairs(const GraphSet& SA, const GraphSet& SB, const Launch& L, double* ngrad,
                                     const real* dsta, const real* dstb, const double* pn, const double* pe, double q,
                                     double tol, int max_iter, int lmin) {
    __shared__ double red[2][32][2];
    constexpr int H = 1 + NHN + NHE + NHP;
    constexpr int T = W * 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, rank = threadIdx.x;
    const Scratch S(L);
    real *p = S.p, *r = S.r, *Ap = S.Ap, *P = S.P;
    double *X = S.X, *Z = S.Y;
    int flip = 0;
    const real c = (real)(1.0 / ((1.0 - q) * (1.0 - q)));
    global_pairs<W>(SA, SB, L, max_iter, [&](int job, int2 ij, const Graph& A, const Graph& B, int limit) {
        const long long off = L.nodal_off[job];
        const int nOT = A.nt * B.nt, E = nOT * 64;
        bool ok = true, d;
        int its = cg_global<W>(A, B, false, p, r, Ap, P, X, red, flip, warp, lane, rank, pn, pe, c, tol, limit, d);
        ok = ok && d;
        double total = 0.0;
        for (int o = rank; o < E; o += T) {
            const int ot = o >> 6, e = o & 63;
            const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
            if (i >= A.n || k >= B.n) continue;
            const double value = k_term(A.v, B.v, i, k, X[o], lmin, pn);
            L.nodal[off + (long long)i * B.n + k] = value;
            total += value;
#if NHP > 0
            const real* dsa = dsta + ((long long)SA.info[ij.x].w + i) * NHP;
            const real* dsb = dstb + ((long long)SB.info[ij.y].w + k) * NHP;
            const double walk = lmin ? X[o] - (double)node_value(A.v, B.v, i, k, pn) : X[o];
#pragma unroll
            for (int h = 0; h < NHP; ++h)
                ngrad[(off + (long long)i * B.n + k) * H + 1 + NHN + NHE + h] =
                    ((double)dsa[h] * (double)B.v.st[k] + (double)A.v.st[i] * (double)dsb[h]) * walk;
#endif
        }
        for (int h = 0; h < 1 + NHN + NHE; ++h) {
            if (h < 1 + NHN) {
                for (int o = rank; o < E; o += T) {
                    const int ot = o >> 6, e = o & 63;
                    const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
                    double b = 0.0;
                    if (i < A.n && k < B.n) {
                        const double V = (double)node_value(A.v, B.v, i, k, pn);
                        const double D = (double)(A.v.deg[i] * B.v.deg[k] * c);
                        if (h == 0) {
                            b = 2.0 / (1.0 - q) * (D - D / V * X[o]);
                        } else {
#if NHN > 0
                            const real* xf = A.v.nf + i * NFN;
                            const real* yf = B.v.nf + k * NFN;
                            double dv[NHN];
                            NODE_GRAD(xf, yf, pn, dv);
                            b = D * dv[h - 1] * X[o] / (V * V);
#endif
                        }
                    }
                    Z[o] = b;
                }
            } else {
#if NHE > 0
                for (int ot = warp; ot < nOT; ot += W) {
                    double acc0[NHE], acc1[NHE];
#pragma unroll
                    for (int g = 0; g < NHE; ++g) acc0[g] = acc1[g] = 0.0;
                    adjacency_gradient(A, B, X, ot / B.nt, ot % B.nt, lane >> 3, lane & 7, pe, acc0, acc1);
                    const int o = ot * 64 + lane;
                    double a0 = 0.0, a1 = 0.0;
#pragma unroll
                    for (int g = 0; g < NHE; ++g)
                        if (g == h - 1 - NHN) { a0 = acc0[g]; a1 = acc1[g]; }
                    Z[o] = a0;
                    Z[o + 32] = a1;
                }
#endif
            }
            team_sync<W>();  // the right-hand side complete
            const int itz = cg_global<W>(A, B, false, p, r, Ap, P, Z, red, flip, warp, lane, rank, pn, pe, c, tol,
                                         limit, d, Z);
            ok = ok && d;
            its = itz > its ? itz : its;
            for (int o = rank; o < E; o += T) {
                const int ot = o >> 6, e = o & 63;
                const int i = (ot / B.nt) * 8 + (e >> 3), k = (ot % B.nt) * 8 + (e & 7);
                if (i >= A.n || k >= B.n) continue;
                double dz = Z[o];
#if NHN > 0
                if (lmin && h >= 1 && h < 1 + NHN) {
                    const real* xf = A.v.nf + i * NFN;
                    const real* yf = B.v.nf + k * NFN;
                    double dv[NHN];
                    NODE_GRAD(xf, yf, pn, dv);
                    dz -= dv[h - 1];
                }
#endif
                ngrad[(off + (long long)i * B.n + k) * H + h] = (double)A.v.st[i] * (double)B.v.st[k] * dz;
            }
            team_sync<W>();  // Z is read before the next right-hand side overwrites it
        }
        team_sum1<W>(total, red, flip, warp, lane);
        if (rank == 0) {
            L.out[job] = total;
            tally(L, ij, its, ok);
        }
        team_sync<W>();
    });
}

// gpu.py instantiates, after this file, the kernels one call needs: MGK_KERNEL(name, W, SL, SPARSE, STAGED)
// for its tile families and the global-memory kernel, MGK_COLUMNS and MGK_FACTORED, or MGK_GRADIENT and
// MGK_NODAL_GRADIENT.
#define MGK_FACTOR_ARGS                                                                                       \
    const int4 *ia, const int *rpa, const int *cola, const real *va, const real *nfa, const real *dega,         \
        const real *sta, const int2 *mosta, const int *halfa, const int4 *ib, const int *rpb, const int *colb,    \
        const real *vb, const real *nfb, const real *degb, const real *stb, const int2 *mostb, const int *halfb,  \
        int terms, const int2 *pairs,                                                                             \
        const int *class_ptr, int cls, int *counter, double *out, long long ld, long long origin, double *nodal,  \
        const long long *nodal_off, u64 *stats, int team_bytes, const double *pn, double q, double tol,           \
        int max_iter, int lmin
#define MGK_FACTOR_SETUP                                                                                       \
    Side SA{ia, rpa, cola, va, {nfa, dega, sta}, mosta, halfa};                                                 \
    Side SB{ib, rpb, colb, vb, {nfb, degb, stb}, mostb, halfb};                                                 \
    Launch L{pairs, class_ptr, cls, counter, out, ld, origin, nodal, nodal_off, stats, team_bytes, nullptr, nullptr};
#define MGK_FACTORED(W, S)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MGK_THREADS(W), MGK_BLOCKS(MGK_RESIDENT, MGK_THREADS(W)))      \
        mgk_f_w##W##_s##S(MGK_FACTOR_ARGS) {                                                                    \
        MGK_FACTOR_SETUP                                                                                        \
        solve_factored<W, S>(SA, SB, terms, L, pn, q, tol, max_iter, lmin);                                     \
    }
// the column solver's team of W warps, KS rows a warp, IS column chunks of 32; the register allocator
// is asked for RESIDENT threads a multiprocessor; OWNER: the team may take the owner path
#define MGK_COLUMNS(W, KS, IS, RESIDENT, OWNER)                                                                \
    extern "C" __global__ void __launch_bounds__(MGK_THREADS(W), MGK_BLOCKS(RESIDENT, MGK_THREADS(W)))         \
        mgk_c_w##W##_k##KS##_i##IS(MGK_FACTOR_ARGS) {                                                           \
        MGK_FACTOR_SETUP                                                                                        \
        solve_columns<W, KS, IS, OWNER, false>(SA, SB, terms, L, pn, q, tol, max_iter, lmin);                   \
    }
#define MGK_COLUMNS_ONE_COLOUR(W, KS, IS, RESIDENT, OWNER)                                                            \
    extern "C" __global__ void __launch_bounds__(MGK_THREADS(W), MGK_BLOCKS(RESIDENT, MGK_THREADS(W)))         \
        mgk_co_w##W##_k##KS##_i##IS(MGK_FACTOR_ARGS) {                                                          \
        MGK_FACTOR_SETUP                                                                                        \
        solve_columns<W, KS, IS, OWNER, true>(SA, SB, terms, L, pn, q, tol, max_iter, lmin);                    \
    }
#define MGK_GRADIENT(W)                                                                                          \
    extern "C" __global__ void __launch_bounds__(W * 32) mgk_gradient_w##W(                                     \
        const int4 *ia, const int *trpa, const int *tcola, const u64 *maska, const real *wa, const real *efa,  \
        const real *nfa, const real *dega, const real *sta, const int4 *ib, const int *trpb, const int *tcolb,  \
        const u64 *maskb, const real *wb, const real *efb, const real *nfb, const real *degb, const real *stb,  \
        const int2 *pairs, const int *class_ptr, int *counter, double *out, u64 *stats, int team_bytes,         \
        real *scratch, double *xscratch, double *grad, const real *dsta, const real *dstb, const double *pn,     \
        const double *pe, double q, double tol, int max_iter, int lmin) {                                       \
        GraphSet SA{ia, trpa, tcola, maska, wa, efa, {nfa, dega, sta}};                                         \
        GraphSet SB{ib, trpb, tcolb, maskb, wb, efb, {nfb, degb, stb}};                                         \
        Launch L{pairs, class_ptr, 0, counter, out, 0, 0, nullptr, nullptr, stats, team_bytes, scratch,         \
                 xscratch};                                                                                     \
        gradient_pairs<W>(SA, SB, L, grad, dsta, dstb, pn, pe, q, tol, max_iter, lmin);                         \
    }
#define MGK_NODAL_GRADIENT(W)                                                                                    \
    extern "C" __global__ void __launch_bounds__(W * 32) mgk_nodal_gradient_w##W(                               \
        const int4 *ia, const int *trpa, const int *tcola, const u64 *maska, const real *wa, const real *efa,  \
        const real *nfa, const real *dega, const real *sta, const int4 *ib, const int *trpb, const int *tcolb,  \
        const u64 *maskb, const real *wb, const real *efb, const real *nfb, const real *degb, const real *stb,  \
        const int2 *pairs, const int *class_ptr, int *counter, double *out, u64 *stats, int team_bytes,         \
        real *scratch, double *xscratch, double *nodal, const long long *nodal_off, double *ngrad,              \
        const real *dsta, const real *dstb, const double *pn, const double *pe, double q, double tol,           \
        int max_iter, int lmin) {                                                                               \
        GraphSet SA{ia, trpa, tcola, maska, wa, efa, {nfa, dega, sta}};                                         \
        GraphSet SB{ib, trpb, tcolb, maskb, wb, efb, {nfb, degb, stb}};                                         \
        Launch L{pairs, class_ptr, 0, counter, out, 0, 0, nodal, nodal_off, stats, team_bytes, scratch,         \
                 xscratch};                                                                                     \
        nodal_gradient_pairs<W>(SA, SB, L, ngrad, dsta, dstb, pn, pe, q, tol, max_iter, lmin);                 \
    }
