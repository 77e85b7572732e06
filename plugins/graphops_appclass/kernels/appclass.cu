// appclass GPU kernels: float64 throughout, matrices column-major (K x R stored as K rows of R),
// so every column-wise reduction reads contiguous memory and consecutive threads take
// consecutive rows. Column sums are taken per block (max, then sum of exp(z - block max))
// and combined in block order by `combine`: no floating-point atomics, so results are
// deterministic. Scatter-maxes use exact integer atomics on the doubles' bit patterns.
//
// Macros from Python (graphops.cuda.load_module): THREADS (threads per block), ITEMS
// (rows per thread in the blocked kernels), HUB_EDGES (out-degree from which a vertex gets a block).
#if !defined(THREADS) || !defined(ITEMS) || !defined(HUB_EDGES)
#error "compile through graphops_appclass.gpu (THREADS and ITEMS come from Python)"
#endif

#define NEG_INF (-__longlong_as_double(0x7ff0000000000000LL))
#define POS_INF (__longlong_as_double(0x7ff0000000000000LL))
#define ROWS_PER_BLOCK (THREADS * ITEMS)

typedef long long i64;

// max for doubles of any sign (the stored value starts at -inf); -0.0 is taken as +0.0
__device__ __forceinline__ void atomic_max(double* addr, double v) {
    v = v + 0.0;
    if (!(v > *addr)) return;
    if (v >= 0.0) atomicMax((i64*)addr, __double_as_longlong(v));
    else atomicMin((unsigned long long*)addr, (unsigned long long)__double_as_longlong(v));
}

// min for non-negative doubles (distances): their bit patterns order like the values
__device__ __forceinline__ void atomic_min_nonneg(double* addr, double v) {
    if (v < *addr) atomicMin((i64*)addr, __double_as_longlong(v));
}

// one normalised entry, the reference programs' log(exp(z - m)) - log S
__device__ __forceinline__ double h(double z, double m, double log_s) {
    double e = exp(z - m);
    return e > 0.0 ? log(e) - log_s : NEG_INF;
}

__device__ __forceinline__ double block_max(double v, double* shared) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
    __syncthreads();
    double r = NEG_INF;
    for (int w = 0; w < THREADS / 32; ++w) r = fmax(r, shared[w]);
    return r;
}

__device__ __forceinline__ double block_sum(double v, double* shared) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
    __syncthreads();
    double r = 0.0;
    for (int w = 0; w < THREADS / 32; ++w) r += shared[w];
    return r;
}

// the squared distance, multiply and add rounded separately (no FMA), as the CPU computes it
__device__ __forceinline__ double distance(const double* q, const double* xt, i64 n, i64 i, int dim) {
    double acc = 0.0;
    for (int f = 0; f < dim; ++f) {
        double d = q[f] - xt[(i64)f * n + i];
        acc = __dadd_rn(acc, __dmul_rn(d, d));
    }
    return sqrt(acc);
}

// out[j, i] = || y[j] - x[i] || for data nodes i (x transposed: dim x n), pattern nodes j
extern "C" __global__ void node_distances(const double* y, int pv, const double* xt, i64 n, int dim,
                                          double* out) {
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < n; i += (i64)gridDim.x * THREADS)
        for (int j = 0; j < pv; ++j) out[(i64)j * n + i] = distance(y + (i64)j * dim, xt, n, i, dim);
}

// Per (block of rows, column j) of sign * z (k x n): max and sum of exp(z - max), at [b, j].
extern "C" __global__ void col_partials(const double* z, i64 n, int k, double sign, double* pm, double* ps) {
    __shared__ double shared[THREADS / 32];
    const int j = blockIdx.y;
    const i64 lo = (i64)blockIdx.x * ROWS_PER_BLOCK;
    double v[ITEMS];
    double m = NEG_INF;
    for (int t = 0; t < ITEMS; ++t) {
        i64 i = lo + t * THREADS + threadIdx.x;
        v[t] = i < n ? sign * z[(i64)j * n + i] : NEG_INF;
        m = fmax(m, v[t]);
    }
    m = block_max(m, shared);
    double s = 0.0;
    for (int t = 0; t < ITEMS; ++t) s += v[t] > NEG_INF ? exp(v[t] - m) : 0.0;
    s = block_sum(s, shared);
    if (threadIdx.x == 0) {
        pm[(i64)blockIdx.x * k + j] = m;
        ps[(i64)blockIdx.x * k + j] = s;
    }
}

// Column max (floored at -DBL_MAX) and log of the column sum from nb blocks' partials; one
// block per column, each thread taking blocks tid, tid + THREADS, ... in turn, then a fixed
// reduction tree: the same order on every run. Without ps, the max alone.
extern "C" __global__ void combine(const double* pm, const double* ps, int nb, int k, double* m, double* log_s) {
    __shared__ double shared[THREADS / 32];
    const int j = blockIdx.x;
    double best = NEG_INF;
    for (int b = threadIdx.x; b < nb; b += THREADS) best = fmax(best, pm[(i64)b * k + j]);
    best = block_max(best, shared);
    if (ps == nullptr) {
        if (threadIdx.x == 0) m[j] = best;
        return;
    }
    best = fmax(best, -1.7976931348623157e308);
    double total = 0.0;
    for (int b = threadIdx.x; b < nb; b += THREADS) {
        double p = ps[(i64)b * k + j];
        if (p > 0.0) total += p * exp(pm[(i64)b * k + j] - best);
    }
    total = block_sum(total, shared);
    if (threadIdx.x == 0) {
        m[j] = best;
        log_s[j] = total > 0.0 ? log(total) : NEG_INF;
    }
}

// out = h(sign * z) column by column (k x n; in place allowed)
extern "C" __global__ void normalise(const double* z, i64 n, int k, double sign, const double* m,
                                     const double* log_s, double* out) {
    i64 total = n * k;
    for (i64 t = blockIdx.x * (i64)THREADS + threadIdx.x; t < total; t += (i64)gridDim.x * THREADS) {
        int j = (int)(t / n);
        out[t] = h(sign * z[t], m[j], log_s[j]);
    }
}

// Edge distances De[p, e] of the edges of block chunk (stored when de_out is given), their
// minima per destination and per source, and per block the column partials of +De and -De
// (columns p and pe + p of the partial arrays). Block x takes pattern edge p = x % pe of
// chunk x / pe: the pe blocks of a chunk run together and read its features from L2.
extern "C" __global__ void edge_init(const double* b, const double* at, const int* src, const int* dst,
                                     i64 m, i64 n, int pe, int dim, double* de_out, double* min_in,
                                     double* min_out, double* pm, double* ps) {
    __shared__ double shared[THREADS / 32];
    const int p = blockIdx.x % pe;
    const i64 chunk = blockIdx.x / pe;
    const i64 lo = chunk * ROWS_PER_BLOCK;
    double v[ITEMS];
    double hi = NEG_INF, neg = NEG_INF;
    for (int t = 0; t < ITEMS; ++t) {
        i64 e = lo + t * THREADS + threadIdx.x;
        v[t] = NEG_INF;
        if (e >= m) continue;
        v[t] = distance(b + (i64)p * dim, at, m, e, dim);
        if (de_out != nullptr) de_out[(i64)p * m + e] = v[t];
        atomic_min_nonneg(min_in + (i64)p * n + dst[e], v[t]);
        atomic_min_nonneg(min_out + (i64)p * n + src[e], v[t]);
        hi = fmax(hi, v[t]);
        neg = fmax(neg, -v[t]);
    }
    hi = block_max(hi, shared);
    neg = block_max(neg, shared);
    double s_hi = 0.0, s_neg = 0.0;
    for (int t = 0; t < ITEMS; ++t) {
        if (v[t] == NEG_INF) continue;
        s_hi += exp(v[t] - hi);
        s_neg += exp(-v[t] - neg);
    }
    s_hi = block_sum(s_hi, shared);
    s_neg = block_sum(s_neg, shared);
    if (threadIdx.x == 0) {
        i64 at_b = chunk * 2 * pe;
        pm[at_b + p] = hi;       ps[at_b + p] = s_hi;
        pm[at_b + pe + p] = neg; ps[at_b + pe + p] = s_neg;
    }
}

// CE[p, e]: stored, or recomputed from the features exactly as it was first computed
__device__ __forceinline__ double ce_at(const double* ce, const double* b, const double* at, i64 m, int p,
                                        i64 e, int dim, const double* mc, const double* lsc) {
    if (ce != nullptr) return ce[(i64)p * m + e];
    return h(distance(b + (i64)p * dim, at, m, e, dim), mc[p], lsc[p]);
}

// One round's pass over the edges: raw_f[p, dst] = max(-CE[p, e] + VR[p, src]) (scatter-max by
// destination). The column sums need no edge pass: see source_partials. The gridDim.x / pe
// blocks of each p stride over the edges. With stored CE the blocks go p by p (p_fast = 0), so
// the scatter and the gather touch one row of raw_f and VR at a time and stay in L2; when CE
// is recomputed, the pe blocks of a stretch of edges run together (p_fast = 1) and share its
// features through L2.
extern "C" __global__ void edge_pass(const double* ce, const double* b, const double* at, const double* mc,
                                     const double* lsc, const int* src, const int* dst, i64 m, i64 n,
                                     int pe, int dim, int p_fast, const double* vr, double* raw_f) {
    const int per_p = gridDim.x / pe;
    const int p = p_fast ? blockIdx.x % pe : blockIdx.x / per_p;
    const i64 first = p_fast ? blockIdx.x / pe : blockIdx.x % per_p;
    for (i64 e = first * THREADS + threadIdx.x; e < m; e += (i64)per_p * THREADS) {
        double c = ce_at(ce, b, at, m, p, e, dim, mc, lsc);
        atomic_max(raw_f + (i64)p * n + dst[e], -c + vr[(i64)p * n + src[e]]);
    }
}

// w[p, s] = sum over the out-edges e of s (edges sorted by source, sptr) of exp(-CE[p, e] + cmin[p, s]):
// one warp per source (lanes over its edges, then a fixed shuffle tree), fixed for the whole run.
extern "C" __global__ void out_weights(const double* ce, const double* b, const double* at, const double* mc,
                                       const double* lsc, const i64* sptr, i64 m, i64 n, int pe, int dim,
                                       const double* cmin, double* w) {
    const int lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (THREADS / 32);
    for (i64 v = blockIdx.x * (i64)(THREADS / 32) + (threadIdx.x >> 5); v < n; v += warps) {
        if (sptr[v + 1] - sptr[v] >= HUB_EDGES) continue;  // a hub: out_weights_hubs takes it
        for (int p = 0; p < pe; ++p) {
            double total = 0.0, lo = cmin[(i64)p * n + v];
            for (i64 e = sptr[v] + lane; e < sptr[v + 1]; e += 32)
                total += exp(-ce_at(ce, b, at, m, p, e, dim, mc, lsc) + lo);
            for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
            if (lane == 0) w[(i64)p * n + v] = total;
        }
    }
}

// out_weights for the hubs (at least HUB_EDGES out-edges): one block per hub, so that a vertex
// with tens of thousands of edges does not keep one warp busy while the GPU idles.
extern "C" __global__ void out_weights_hubs(const double* ce, const double* b, const double* at, const double* mc,
                                            const double* lsc, const i64* sptr, const i64* hubs, i64 m, i64 n,
                                            int pe, int dim, const double* cmin, double* w) {
    __shared__ double shared[THREADS / 32];
    const i64 v = hubs[blockIdx.x];
    for (int p = 0; p < pe; ++p) {
        double total = 0.0, lo = cmin[(i64)p * n + v];
        for (i64 e = sptr[v] + threadIdx.x; e < sptr[v + 1]; e += THREADS)
            total += exp(-ce_at(ce, b, at, m, p, e, dim, mc, lsc) + lo);
        total = block_sum(total, shared);
        if (threadIdx.x == 0) w[(i64)p * n + v] = total;
    }
}

// Column partials of both messages over all edges, per source: at v the largest message is
// x = -cmin + g[v] and the sum of exp(message - max) is exp(x - max) * w[v]. g = VR gives FE
// (column p), g = VF gives RE (column pe + p).
extern "C" __global__ void source_partials(const double* vr, const double* vf, const double* cmin,
                                           const double* w, i64 n, int pe, double* pm, double* ps) {
    __shared__ double shared[THREADS / 32];
    const int p = blockIdx.y;
    const i64 lo = (i64)blockIdx.x * ROWS_PER_BLOCK;
    double xf[ITEMS], xr[ITEMS], wt[ITEMS];
    double mf = NEG_INF, mr = NEG_INF;
    for (int t = 0; t < ITEMS; ++t) {
        i64 v = lo + t * THREADS + threadIdx.x;
        xf[t] = xr[t] = NEG_INF;
        wt[t] = 0.0;
        if (v >= n) continue;
        i64 at = (i64)p * n + v;
        double c = cmin[at];
        if (!(c < POS_INF)) continue;  // no out-edge
        xf[t] = -c + vr[at];
        xr[t] = -c + vf[at];
        wt[t] = w[at];
        mf = fmax(mf, xf[t]);
        mr = fmax(mr, xr[t]);
    }
    mf = block_max(mf, shared);
    mr = block_max(mr, shared);
    double sf = 0.0, sr = 0.0;
    for (int t = 0; t < ITEMS; ++t) {
        if (xf[t] > NEG_INF) sf += exp(xf[t] - mf) * wt[t];
        if (xr[t] > NEG_INF) sr += exp(xr[t] - mr) * wt[t];
    }
    sf = block_sum(sf, shared);
    sr = block_sum(sr, shared);
    if (threadIdx.x == 0) {
        i64 at_b = (i64)blockIdx.x * 2 * pe;
        pm[at_b + p] = mf;       ps[at_b + p] = sf;
        pm[at_b + pe + p] = mr;  ps[at_b + pe + p] = sr;
    }
}

// Per data node v: FMax = max(vr, h_F(raw_sign * raw_f)), RMax = max(vf, h_R(add - cmin)) (add
// may be null: 0), raw_f reset to -inf for the next round; then, when mu is given,
// MU[:, v] = -CV[:, v] plus FMax into column pdst[p] and RMax into column psrc[p], p in order.
// stats holds m_F, m_R, log S_F, log S_R (pe each: combine's layout for the 2 pe columns F, R);
// floors holds vf then vr (pe each).
extern "C" __global__ void node_pass(double* raw_f, double raw_sign, const double* cmin, const double* add,
                                     const double* stats, const double* floors, i64 n, int pe, int pv,
                                     const int* psrc, const int* pdst, double* fmax_out, double* rmax_out,
                                     const double* cv, double* mu) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < n; v += (i64)gridDim.x * THREADS) {
        if (mu != nullptr)
            for (int j = 0; j < pv; ++j) mu[(i64)j * n + v] = -cv[(i64)j * n + v];
        for (int p = 0; p < pe; ++p) {
            i64 at = (i64)p * n + v;
            double raw = raw_sign * raw_f[at], c = cmin[at];  // -inf: no in-edge; +inf: no out-edge
            double f = raw > NEG_INF ? fmax(floors[pe + p], h(raw, stats[p], stats[2 * pe + p])) : floors[pe + p];
            double r = c < POS_INF ? fmax(floors[p], h(-c + (add != nullptr ? add[at] : 0.0), stats[pe + p],
                                                     stats[3 * pe + p])) : floors[p];
            fmax_out[at] = f;
            rmax_out[at] = r;
            raw_f[at] = NEG_INF;
            if (mu != nullptr) {
                mu[(i64)pdst[p] * n + v] += f;
                mu[(i64)psrc[p] * n + v] += r;
            }
        }
    }
}

// VF = MU[pdst] - FMax, VR = MU[psrc] - RMax (FMax/RMax null: 0), with per-block column maxima
// of VF (column p) and VR (column pe + p) in pm.
extern "C" __global__ void diffs(const double* mu, const double* fm, const double* rm, const int* psrc,
                                 const int* pdst, i64 n, int pe, double* vf, double* vr, double* pm) {
    __shared__ double shared[THREADS / 32];
    const i64 lo = (i64)blockIdx.x * ROWS_PER_BLOCK;
    for (int p = 0; p < pe; ++p) {
        double mf = NEG_INF, mr = NEG_INF;
        for (int t = 0; t < ITEMS; ++t) {
            i64 v = lo + t * THREADS + threadIdx.x;
            if (v >= n) continue;
            i64 at = (i64)p * n + v;
            double a = mu[(i64)pdst[p] * n + v] - (fm != nullptr ? fm[at] : 0.0);
            double c = mu[(i64)psrc[p] * n + v] - (rm != nullptr ? rm[at] : 0.0);
            vf[at] = a;
            vr[at] = c;
            mf = fmax(mf, a);
            mr = fmax(mr, c);
        }
        mf = block_max(mf, shared);
        mr = block_max(mr, shared);
        if (threadIdx.x == 0) {
            pm[(i64)blockIdx.x * 2 * pe + p] = mf;
            pm[(i64)blockIdx.x * 2 * pe + pe + p] = mr;
        }
    }
}
