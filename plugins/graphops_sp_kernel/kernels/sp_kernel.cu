// sp_kernel: batched all-pairs shortest paths and the FCSP walk sum, one launch over many graphs.
// Compiled by CuPy (RawModule, NVRTC); checked offline with nvcc -c.
#define INF __longlong_as_double(0x7ff0000000000000LL)

// Level-synchronous BFS from every vertex of a graph at once: one block per graph (grid-stride).
// dist holds each graph's n×n block row-major at sq_ptr[g].
extern "C" __global__ void bfs_all(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                   const long long* __restrict__ graph_ptr,
                                   const long long* __restrict__ sq_ptr, long long n_graphs,
                                   double* __restrict__ dist) {
    __shared__ int changed;
    for (long long g = blockIdx.x; g < n_graphs; g += gridDim.x) {
        long long n0 = graph_ptr[g], n = graph_ptr[g + 1] - n0;
        double* d = dist + sq_ptr[g];
        for (long long k = threadIdx.x; k < n * n; k += blockDim.x) d[k] = (k / n == k % n) ? 0.0 : INF;
        __syncthreads();
        for (double level = 0.0; ; level += 1.0) {
            if (threadIdx.x == 0) changed = 0;
            __syncthreads();
            for (long long k = threadIdx.x; k < n * n; k += blockDim.x) {
                if (d[k] != level) continue;
                long long s = k / n, v = k % n;
                for (long long e = indptr[n0 + v]; e < indptr[n0 + v + 1]; ++e) {
                    long long w = indices[e] - n0;
                    if (d[s * n + w] == INF) { d[s * n + w] = level + 1.0; changed = 1; }
                }
            }
            __syncthreads();
            if (!changed) break;
            __syncthreads();
        }
        __syncthreads();
    }
}

// Floyd–Warshall per graph, one block per graph; negative[g] = 1 when a cycle is negative.
extern "C" __global__ void floyd_warshall(const long long* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          const double* __restrict__ weights,
                                          const long long* __restrict__ graph_ptr,
                                          const long long* __restrict__ sq_ptr, long long n_graphs,
                                          double* __restrict__ dist, int* __restrict__ negative) {
    for (long long g = blockIdx.x; g < n_graphs; g += gridDim.x) {
        long long n0 = graph_ptr[g], n = graph_ptr[g + 1] - n0;
        double* d = dist + sq_ptr[g];
        for (long long k = threadIdx.x; k < n * n; k += blockDim.x) d[k] = (k / n == k % n) ? 0.0 : INF;
        __syncthreads();
        for (long long i = threadIdx.x; i < n; i += blockDim.x)
            for (long long e = indptr[n0 + i]; e < indptr[n0 + i + 1]; ++e) {
                long long j = indices[e] - n0;
                d[i * n + j] = fmin(d[i * n + j], weights[e]);
            }
        __syncthreads();
        for (long long k = 0; k < n; ++k) {
            for (long long x = threadIdx.x; x < n * n; x += blockDim.x) {
                long long i = x / n, j = x % n;
                double alt = d[i * n + k] + d[k * n + j];
                if (alt < d[x]) d[x] = alt;
            }
            __syncthreads();
        }
        for (long long i = threadIdx.x; i < n; i += blockDim.x)
            if (d[i * n + i] < 0.0) negative[g] = 1;
        __syncthreads();
    }
}

// ---- FCSP: one block per graph pair (grid-stride over the pair list) ----------------------------
// The block fills the vertex-kernel matrix V (na × nb, rows padded to an odd stride `ld` so that
// threads reading different rows hit different shared-memory banks) in shared memory, or in its
// slice of `scratch` when too large. Then, per pair, the form with fewer operations:
//  * walk: each thread takes some of graph a's paths and runs over graph b's paths (of the same
//    length when the length kernel is delta): Σ V[i,m]·k(d,d')·V[j,n];
//  * matrix: per length d of a, W = V·M_d (M_d[m,n] = k(d, d'_mn)) and U = A_d·V (A_d: a's paths
//    of length d), then Σ W ⊙ U; na·|Pb_d| + nb·|Pa_d| operations per length instead of
//    |Pa_d|·|Pb_d|, which wins on dense graphs with few distinct lengths.
// The choice uses the per-graph counts of paths by length (`a_cnt`, `b_cnt`, n_cnt columns),
// by the same formula as the CPU backend (common.py), so both sides pick the same form.

struct Walk {
    const long long *a_ptr; const int *a_src, *a_dst, *a_len;
    const long long *b_ptr; const int *b_src, *b_dst, *b_len;
};

__device__ __forceinline__ long long lower_bound(const int* v, long long lo, long long hi, int x) {
    while (lo < hi) { long long mid = (lo + hi) >> 1; if (v[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
}

__device__ __forceinline__ void neumaier(double& acc, double& comp, double s) {
    double t = acc + s;
    comp += fabs(acc) >= fabs(s) ? (acc - t) + s : (s - t) + acc;
    acc = t;
}

// Σ of v over the block; the result is valid in thread 0.
__device__ double block_sum(double v, double* partial) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0.0;
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.0;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    }
    __syncthreads();
    return s;
}

// GPU cost model (in walk steps): WALK_STEP_COST, LENGTH_COST, CELL_COST and ROW_COST are
// passed by graphops_sp_kernel.gpu when it compiles this file (the values live in common.py,
// shared with the CPU's model). To check this file alone, any values do:
// nvcc -c -DWALK_STEP_COST=1 -DLENGTH_COST=1 -DCELL_COST=1 -DROW_COST=1
#if !defined(WALK_STEP_COST) || !defined(LENGTH_COST) || !defined(CELL_COST) || !defined(ROW_COST)
#error "compile through graphops.cuda.load_module, which passes the cost constants as macros"
#endif

// Operation counts of the two forms for one pair (as cpu._form_steps, plus LENGTH_COST).
__device__ bool matrix_is_cheaper(const int* ca, const int* cb, int n_cnt, double na, double nb,
                                  double pa, double pb, int length_delta) {
    double walk = length_delta ? 0.0 : pa * pb, matrix = 0.0;
    for (int d = 0; d < n_cnt; ++d) {
        double x = ca[d], y = cb[d];
        if (length_delta) {
            walk += x * y;
            if (x > 0 && y > 0) matrix += na * y + nb * x + CELL_COST * na * nb + ROW_COST * (na + nb) + LENGTH_COST;
        } else if (x > 0) {
            matrix += na * nb * nb + nb * x + CELL_COST * na * nb + ROW_COST * (na + nb) + LENGTH_COST;
        }
    }
    return n_cnt > 0 && matrix < WALK_STEP_COST * walk;
}

// The walk form: this thread's share of Σ over path pairs (compensated over a's paths).
__device__ double walk_pair(const Walk& w, long long a, long long b, const double* V, int ld,
                            const double* table, int n_lens, int length_delta, const double* lens,
                            double length_gamma) {
    long long b0 = w.b_ptr[b], b1 = w.b_ptr[b + 1];
    double acc = 0.0, comp = 0.0;
    for (long long p = w.a_ptr[a] + threadIdx.x; p < w.a_ptr[a + 1]; p += blockDim.x) {
        const double* Vi = V + (long long)w.a_src[p] * ld;
        const double* Vj = V + (long long)w.a_dst[p] * ld;
        int len = w.a_len[p];
        long long lo = b0, hi = b1;
        if (length_delta) {  // [lo, hi): b's paths of the same length
            lo = lower_bound(w.b_len, b0, b1, len);
            hi = lower_bound(w.b_len, lo, b1, len + 1);
        }
        double s = 0.0;  // same order and rounding as the CPU backend (built with --fmad=false)
        if (length_delta) {
            for (long long q = lo; q < hi; ++q) s += Vi[w.b_src[q]] * Vj[w.b_dst[q]];
        } else if (n_lens > 0) {  // Gaussian lengths from a precomputed table
            const double* row = table + (long long)len * n_lens;
            for (long long q = lo; q < hi; ++q) s += Vi[w.b_src[q]] * Vj[w.b_dst[q]] * row[w.b_len[q]];
        } else {  // too many distinct lengths for a table: evaluate the Gaussian here
            double da = lens[len];
            for (long long q = lo; q < hi; ++q) {
                double diff = da - lens[w.b_len[q]];
                s += Vi[w.b_src[q]] * Vj[w.b_dst[q]] * exp(-length_gamma * diff * diff);
            }
        }
        neumaier(acc, comp, s);
    }
    return acc + comp;
}

// The matrix form: this thread's share of Σ_d Σ_{i,n} W_d[i,n]·U_d[i,n]. `W` is na × ld scratch,
// `colptr`/`rowptr` hold nb + 1 and na + 1 segment starts. b's paths by destination (`bt_*`:
// sorted by length, destination, source) give W's sums with a delta length kernel; with a
// Gaussian one, W = V·M_d densely, M_d (nb × ld scratch) filled from b's dense length ids
// (`b_lid`, -1 where no path) and the length table.
__device__ double matrix_pair(const Walk& w, const int* bt_src, const int* bt_dst, const int* bt_len,
                              const int* b_lid, long long a, long long b, int na, int nb,
                              const double* V, double* W, double* M, int ld, int* colptr, int* rowptr,
                              const double* table, int n_lens, int length_delta) {
    long long a0 = w.a_ptr[a], a1 = w.a_ptr[a + 1], b0 = w.b_ptr[b], b1 = w.b_ptr[b + 1];
    double acc = 0.0, comp = 0.0;
    for (long long p = a0; p < a1;) {  // a's runs of equal length (uniform over the block)
        int d = w.a_len[p];
        long long pe = lower_bound(w.a_len, p, a1, d + 1);
        long long qlo = b0, qhi = b1;
        if (length_delta) {
            qlo = lower_bound(bt_len, b0, b1, d);
            qhi = lower_bound(bt_len, qlo, b1, d + 1);
        }
        if (qlo < qhi) {
            for (int n = threadIdx.x; n <= nb; n += blockDim.x)
                colptr[n] = length_delta ? (int)(lower_bound(bt_dst, qlo, qhi, n) - qlo) : 0;
            for (int i = threadIdx.x; i <= na; i += blockDim.x)
                rowptr[i] = (int)(lower_bound(w.a_src, p, pe, i) - p);
            if (!length_delta) {  // M_d[m, n] = k(d, d'_mn), 0 where b has no path
                const double* row = table + (long long)d * n_lens;
                for (int x = threadIdx.x; x < nb * nb; x += blockDim.x) {
                    int l = b_lid[x];
                    M[(long long)(x / nb) * ld + x % nb] = l >= 0 ? row[l] : 0.0;
                }
            }
            __syncthreads();
            // W[i, n] = Σ_m V[i, m]·k(d, d'_mn); consecutive threads take consecutive i (m shared)
            for (int x = threadIdx.x; x < na * nb; x += blockDim.x) {
                int i = x % na, n = x / na;
                const double* Vi = V + (long long)i * ld;
                double s = 0.0;
                if (length_delta) {
                    for (int q = colptr[n]; q < colptr[n + 1]; ++q) s += Vi[bt_src[qlo + q]];
                } else {
                    for (int m = 0; m < nb; ++m) s += Vi[m] * M[(long long)m * ld + n];
                }
                W[(long long)i * ld + n] = s;
            }
            __syncthreads();
            // U[i, n] = Σ_{(i,j) of length d} V[j, n]; consecutive threads take consecutive n
            double s = 0.0;
            for (int x = threadIdx.x; x < na * nb; x += blockDim.x) {
                int i = x / nb, n = x % nb;
                double u = 0.0;
                for (int q = rowptr[i]; q < rowptr[i + 1]; ++q) u += V[(long long)w.a_dst[p + q] * ld + n];
                s += u * W[(long long)i * ld + n];
            }
            neumaier(acc, comp, s);
            __syncthreads();  // W and the segment starts are rewritten for the next length
        }
        p = pe;
    }
    return acc + comp;
}

extern "C" __global__ void fcsp(const long long* __restrict__ rows, const long long* __restrict__ cols,
                                long long n_pairs,
                                const long long* __restrict__ a_ptr, const int* __restrict__ a_src,
                                const int* __restrict__ a_dst, const int* __restrict__ a_len,
                                const long long* __restrict__ b_ptr, const int* __restrict__ b_src,
                                const int* __restrict__ b_dst, const int* __restrict__ b_len,
                                const int* __restrict__ bt_src, const int* __restrict__ bt_dst,
                                const int* __restrict__ bt_len, const long long* __restrict__ b_sq,
                                const int* __restrict__ b_lid,
                                const int* __restrict__ a_cnt, const int* __restrict__ b_cnt, int n_cnt,
                                int form,
                                const long long* __restrict__ ga_ptr, const long long* __restrict__ gb_ptr,
                                const long long* __restrict__ lab_a, const long long* __restrict__ lab_b,
                                const double* __restrict__ att_a, const double* __restrict__ att_b,
                                int n_attr, int use_delta, double node_gamma,
                                const double* __restrict__ table, int n_lens, int length_delta,
                                const double* __restrict__ lens, double length_gamma,
                                int use_shared, long long scratch_stride, double* __restrict__ scratch,
                                double* __restrict__ out) {
    extern __shared__ double smem[];
    __shared__ double partial[32];
    Walk w{a_ptr, a_src, a_dst, a_len, b_ptr, b_src, b_dst, b_len};
    double* base = use_shared ? smem : scratch + blockIdx.x * scratch_stride;
    for (long long t = blockIdx.x; t < n_pairs; t += gridDim.x) {
        long long a = rows[t], b = cols[t];
        long long oa = ga_ptr[a], ob = gb_ptr[b];
        int na = (int)(ga_ptr[a + 1] - oa), nb = (int)(gb_ptr[b + 1] - ob);
        int ld = nb | 1;
        double* V = base;
        for (int x = threadIdx.x; x < na * nb; x += blockDim.x) {
            int i = x / nb, m = x % nb;
            double v = 1.0;
            if (use_delta && lab_a[oa + i] != lab_b[ob + m]) v = 0.0;
            if (v != 0.0 && node_gamma > 0.0) {
                double s = 0.0;
                for (int k = 0; k < n_attr; ++k) {
                    double diff = att_a[(oa + i) * n_attr + k] - att_b[(ob + m) * n_attr + k];
                    s += diff * diff;
                }
                v = exp(-node_gamma * s);
            }
            V[(long long)i * ld + m] = v;
        }
        __syncthreads();
        bool matrix = form == 2 || (form == 0 && matrix_is_cheaper(
            a_cnt + a * n_cnt, b_cnt + b * n_cnt, n_cnt, na, nb,
            (double)(a_ptr[a + 1] - a_ptr[a]), (double)(b_ptr[b + 1] - b_ptr[b]), length_delta));
        double mine;
        if (matrix) {
            double* W = V + (long long)na * ld;
            double* M = W + (long long)na * ld;
            int* colptr = (int*)(M + (length_delta ? 0 : (long long)nb * ld));
            mine = matrix_pair(w, bt_src, bt_dst, bt_len, b_lid + b_sq[b], a, b, na, nb, V, W, M, ld,
                               colptr, colptr + nb + 1, table, n_lens, length_delta);
        } else {
            mine = walk_pair(w, a, b, V, ld, table, n_lens, length_delta, lens, length_gamma);
        }
        double total = block_sum(mine, partial);
        if (threadIdx.x == 0) out[t] = total;
    }
}

// ---- Delta kernels: path histograms straight from the distance blocks --------------------------
// The key of path (i, j), i != j, of finite length d in graph g: (label_i * n_labels + label_j)
// * n_lens + the id of d among lens (d itself for hop counts, lens = 0, 1, ...; else the sorted
// distinct lengths, searched); without labels (n_labels == 0) the length id alone. A block per
// graph walks its n × n block: sp_mark flags the keys used, sp_count adds each path to its
// graph's row of counts at the key's column (column[key], the flags' prefix sum).
__device__ __forceinline__ long long path_key(double d, long long i, long long j, long long node0,
                                              const int* __restrict__ label, int n_labels,
                                              const double* __restrict__ lens, int n_lens, int hops) {
    long long lid;
    if (hops) {
        lid = (long long)d;
    } else {
        int lo = 0, hi = n_lens - 1;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (lens[mid] < d) lo = mid + 1; else hi = mid;
        }
        lid = lo;
    }
    if (n_labels == 0) return lid;
    return ((long long)label[node0 + i] * n_labels + label[node0 + j]) * n_lens + lid;
}

#define FOR_EACH_PATH(BODY)                                                                                    \
    for (long long g = blockIdx.x; g < n_graphs; g += gridDim.x) {                                             \
        const long long node0 = graph_ptr[g], n = graph_ptr[g + 1] - node0;                                     \
        const double* d = dist + sq_ptr[g];                                                                    \
        for (long long k = threadIdx.x; k < n * n; k += blockDim.x) {                                          \
            const long long i = k / n, j = k - i * n;                                                          \
            if (i == j || !(d[k] < INF)) continue;                                                             \
            const long long key = path_key(d[k], i, j, node0, label, n_labels, lens, n_lens, hops);            \
            BODY;                                                                                              \
        }                                                                                                      \
    }

extern "C" __global__ void sp_mark(const double* __restrict__ dist, const long long* __restrict__ sq_ptr,
                                   const long long* __restrict__ graph_ptr, long long n_graphs,
                                   const int* __restrict__ label, int n_labels, const double* __restrict__ lens,
                                   int n_lens, int hops, unsigned char* __restrict__ used) {
    FOR_EACH_PATH(used[key] = 1)
}

extern "C" __global__ void sp_count(const double* __restrict__ dist, const long long* __restrict__ sq_ptr,
                                    const long long* __restrict__ graph_ptr, long long n_graphs,
                                    const int* __restrict__ label, int n_labels, const double* __restrict__ lens,
                                    int n_lens, int hops, const long long* __restrict__ column, long long ld,
                                    int* __restrict__ counts) {
    FOR_EACH_PATH(atomicAdd(&counts[g * ld + column[key]], 1))
}
