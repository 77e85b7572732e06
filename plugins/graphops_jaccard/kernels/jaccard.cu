// Jaccard coefficients, and the family's intersections, of vertex pairs on a sorted, duplicate-free
// CSR adjacency; and the pairs that share a neighbour (two_hop, at the end).
//
// Load balancing by the shorter list's length d_min of each pair:
//   d_min <= thread_max      one thread: merge or galloping binary search (as the CPU does); both
//                            lists of at most 8 entries (counts only): all loaded at once, S x S compares
//   d_min <= warp_max        one warp: lanes binary-search strided entries of the shorter list
//   larger                   one block: threads do the same over the whole block
// jaccard_thread visits every pair once, does the light ones and appends the others to
// two work lists (warp pairs from the front of `lists`, block pairs from the back), so
// binning costs no extra pass; jaccard_warp / jaccard_block then run with grids sized
// for the device and read the list lengths on the device (no host round trip).
// mode (common.py's Mode, given as macros): MODE_SETS = J of the set adjacency, MODE_WEIGHTED =
// weighted J, MODE_SHARED = the shared count |N(u) ∩ N(v)| itself (exact in a double), which a
// graph cut into column slices adds up over its slices; the sums over the shared neighbours x that
// the family's measures are formed from (finish_pairs): MODE_MIN_SUM Σ min(w_ux, w_vx),
// MODE_PROD_SUM Σ w_ux w_vx, MODE_AUX_SUM Σ aux[x] over x other than u and v.
// Pairs of the CPU share (hybrid backend) are skipped: key = d_u + d_v below cpu_key, or equal
// to it at a position below cpu_cut (ties split by position, so any share can be asked for).


#if !defined(MODE_SETS) || !defined(MODE_WEIGHTED) || !defined(MODE_SHARED) || !defined(MODE_MIN_SUM) \
    || !defined(MODE_PROD_SUM) || !defined(MODE_AUX_SUM)
#error "define the MODE_ macros (gpu.py passes common.Mode)"
#endif
#if !defined(FORMULA_JACCARD) || !defined(FORMULA_SORENSEN) || !defined(FORMULA_OVERLAP) \
    || !defined(FORMULA_COSINE) || !defined(FORMULA_SUM)
#error "define the FORMULA_ macros (gpu.py passes common's formulas)"
#endif

typedef long long i64;

__device__ __forceinline__ i64 lower_bound(const int* __restrict__ idx, i64 lo, i64 hi, int x) {
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (idx[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Whether a mode adds a term per shared neighbour (else it only counts them).
__device__ __forceinline__ bool sums(int mode) { return mode != MODE_SETS && mode != MODE_SHARED; }

// The term of the shared neighbour x, met at entry k of one list and j of the other (the products
// rounded apart, never fused, as the CPU adds them); excluded: 0 terms are never asked for here.
__device__ __forceinline__ double term(int mode, const double* __restrict__ w, const double* __restrict__ aux,
                                       i64 k, i64 j, int x) {
    if (mode == MODE_PROD_SUM) return __dmul_rn(w[k], w[j]);
    if (mode == MODE_AUX_SUM) return aux[x];
    return fmin(w[k], w[j]);
}

// A shared neighbour the mode leaves out: u or v itself for networkx's indices (MODE_AUX_SUM).
__device__ __forceinline__ bool left_out(int mode, int x, i64 u, i64 v) {
    return mode == MODE_AUX_SUM && (x == u || x == v);
}

__device__ __forceinline__ double finish(i64 na, i64 nb, i64 shared, double wmin,
                                         const double* __restrict__ wdeg, i64 u, i64 v, int mode) {
    if (mode == MODE_SHARED) return (double)shared;
    if (mode == MODE_MIN_SUM || mode == MODE_PROD_SUM || mode == MODE_AUX_SUM) return wmin;
    if (mode == MODE_WEIGHTED) {
        double uni = wdeg[u] + wdeg[v] - wmin;
        return uni <= 0.0 ? 0.0 : wmin / uni;
    }
    i64 uni = na + nb - shared;
    return uni == 0 ? 0.0 : (double)shared / (double)uni;
}

// A measure's score from the intersection (shared count, sum), the degrees and the sizes (weight
// sums, or norms for cosine), operation for operation as measures.finish does on the CPU.
__device__ __forceinline__ double finish_measure(int formula, bool weighted, i64 shared, double acc,
                                                 i64 du, i64 dv, double su, double sv) {
    if (formula == FORMULA_SUM) return acc;
    const double a = weighted ? acc : (double)shared, x = weighted ? su : (double)du, y = weighted ? sv : (double)dv;
    if (formula == FORMULA_JACCARD) {
        if (weighted) {
            const double uni = x + y - a;
            return uni <= 0.0 ? 0.0 : a / uni;
        }
        const i64 uni = du + dv - shared;
        return uni == 0 ? 0.0 : (double)shared / (double)uni;
    }
    if (formula == FORMULA_SORENSEN) {
        const double s = x + y;
        return s <= 0.0 ? 0.0 : __dmul_rn(2.0, a) / s;
    }
    if (formula == FORMULA_OVERLAP) {
        const double m = fmin(x, y);
        return m <= 0.0 ? 0.0 : a / m;
    }
    const double den = weighted ? __dmul_rn(x, y) : sqrt(__dmul_rn(x, y));  // cosine
    return den <= 0.0 ? 0.0 : a / den;
}

// Per pair: the measure from the mode's value `raw` (a count or a sum), in place when out == raw.
extern "C" __global__ void finish_pairs(const i64* __restrict__ indptr, const i64* __restrict__ first,
                                        const i64* __restrict__ second, const double* __restrict__ size,
                                        const double* raw, i64 n_pairs, int formula, int weighted, double* out) {
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n_pairs; i += (i64)gridDim.x * blockDim.x) {
        const i64 u = first[i], v = second[i];
        const double r = raw[i];
        out[i] = finish_measure(formula, weighted, (i64)r, r, indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v],
                                weighted ? size[u] : 0.0, weighted ? size[v] : 0.0);
    }
}

// The shorter list first: (a0, a1) shorter, (b0, b1) longer; ties keep u's list as the shorter.
__device__ __forceinline__ void order_lists(const i64* __restrict__ indptr, i64 u, i64 v,
                                            i64& a0, i64& a1, i64& b0, i64& b1) {
    a0 = indptr[u]; a1 = indptr[u + 1]; b0 = indptr[v]; b1 = indptr[v + 1];
    if (a1 - a0 > b1 - b0) { i64 t0 = a0, t1 = a1; a0 = b0; a1 = b1; b0 = t0; b1 = t1; }
}

// |A ∩ B| of two short lists (at most S entries each; lists hold distinct vertices): every entry
// loaded at once (independent loads, no chain of dependent ones as in a merge), then all S x S
// compares. Padding never matches: -1 in A, -2 in B, vertices >= 0.
template <int S>
__device__ __forceinline__ i64 small_shared(const int* __restrict__ idx, i64 a0, i64 na, i64 b0, i64 nb) {
    int a[S], b[S];
#pragma unroll
    for (int k = 0; k < S; ++k) {
        a[k] = k < na ? idx[a0 + k] : -1;
        b[k] = k < nb ? idx[b0 + k] : -2;
    }
    int shared = 0;
#pragma unroll
    for (int k = 0; k < S; ++k)
#pragma unroll
        for (int l = 0; l < S; ++l) shared += a[k] == b[l];
    return shared;
}

extern "C" __global__ void jaccard_thread(
        const i64* __restrict__ indptr, const int* __restrict__ idx, const double* __restrict__ w,
        const double* __restrict__ wdeg, const double* __restrict__ aux, const i64* __restrict__ first,
        const i64* __restrict__ second, i64 n_pairs, i64 cpu_key, i64 cpu_cut, i64 thread_max, i64 warp_max, int mode,
        double* __restrict__ out, i64* __restrict__ lists, unsigned long long* __restrict__ counts) {
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n_pairs; i += (i64)gridDim.x * blockDim.x) {
        i64 u = first[i], v = second[i];
        i64 a0, a1, b0, b1;
        order_lists(indptr, u, v, a0, a1, b0, b1);
        i64 na = a1 - a0, nb = b1 - b0;
        const i64 key = na + nb;
        if (key < cpu_key || (key == cpu_key && i < cpu_cut)) continue;
        if (na > thread_max) {
            if (na <= warp_max) lists[atomicAdd(&counts[0], 1ULL)] = i;
            else lists[n_pairs - 1 - (i64)atomicAdd(&counts[1], 1ULL)] = i;
            continue;
        }
        const bool summed = sums(mode);
        i64 shared = 0;
        double wmin = 0.0;
        if (na > 0 && !summed && nb <= 8) {  // the longer list has at most 8 entries
            shared = nb <= 4 ? small_shared<4>(idx, a0, na, b0, nb) : small_shared<8>(idx, a0, na, b0, nb);
        } else if (na > 0) {
            if ((double)na * log2((double)nb) < (double)(na + nb)) {
                i64 lo = b0;
                for (i64 k = a0; k < a1; ++k) {
                    int x = idx[k];
                    lo = lower_bound(idx, lo, b1, x);
                    if (lo == b1) break;
                    if (idx[lo] == x) {
                        if (!left_out(mode, x, u, v)) {
                            ++shared;
                            if (summed) wmin += term(mode, w, aux, k, lo, x);
                        }
                        ++lo;
                    }
                }
            } else {
                i64 p = a0, q = b0;
                while (p < a1 && q < b1) {
                    int x = idx[p], y = idx[q];
                    if (x == y) {
                        if (!left_out(mode, x, u, v)) {
                            ++shared;
                            if (summed) wmin += term(mode, w, aux, p, q, x);
                        }
                        ++p; ++q;
                    } else if (x < y) {
                        ++p;
                    } else {
                        ++q;
                    }
                }
            }
        }
        out[i] = finish(na, nb, shared, wmin, wdeg, u, v, mode);
    }
}

// Shared entries among a strided share of the shorter list, found by binary search.
__device__ __forceinline__ void strided_search(const int* __restrict__ idx, const double* __restrict__ w,
                                               const double* __restrict__ aux, i64 u, i64 v,
                                               i64 a0, i64 a1, i64 b0, i64 b1, int lane, int width,
                                               int mode, i64& shared, double& wmin) {
    const bool summed = sums(mode);
    for (i64 k = a0 + lane; k < a1; k += width) {
        int x = idx[k];
        i64 pos = lower_bound(idx, b0, b1, x);
        if (pos < b1 && idx[pos] == x && !left_out(mode, x, u, v)) {
            ++shared;
            if (summed) wmin += term(mode, w, aux, k, pos, x);
        }
    }
}

__device__ __forceinline__ void warp_sum(i64& shared, double& wmin) {
    for (int off = 16; off > 0; off >>= 1) {
        shared += __shfl_down_sync(0xffffffffu, shared, off);
        wmin += __shfl_down_sync(0xffffffffu, wmin, off);
    }
}

extern "C" __global__ void jaccard_warp(
        const i64* __restrict__ indptr, const int* __restrict__ idx, const double* __restrict__ w,
        const double* __restrict__ wdeg, const double* __restrict__ aux, const i64* __restrict__ first,
        const i64* __restrict__ second, int mode, double* __restrict__ out, const i64* __restrict__ lists,
        const unsigned long long* __restrict__ counts) {
    const i64 n = (i64)counts[0];
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 t = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; t < n; t += warps) {
        i64 i = lists[t];
        i64 u = first[i], v = second[i];
        i64 a0, a1, b0, b1;
        order_lists(indptr, u, v, a0, a1, b0, b1);
        i64 shared = 0;
        double wmin = 0.0;
        strided_search(idx, w, aux, u, v, a0, a1, b0, b1, lane, 32, mode, shared, wmin);
        warp_sum(shared, wmin);
        if (lane == 0) out[i] = finish(a1 - a0, b1 - b0, shared, wmin, wdeg, u, v, mode);
    }
}

extern "C" __global__ void jaccard_block(
        const i64* __restrict__ indptr, const int* __restrict__ idx, const double* __restrict__ w,
        const double* __restrict__ wdeg, const double* __restrict__ aux, const i64* __restrict__ first,
        const i64* __restrict__ second, int mode, double* __restrict__ out, const i64* __restrict__ lists,
        const unsigned long long* __restrict__ counts, i64 n_pairs) {
    __shared__ i64 s_shared[32];
    __shared__ double s_wmin[32];
    const i64 n = (i64)counts[1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    for (i64 t = blockIdx.x; t < n; t += gridDim.x) {
        i64 i = lists[n_pairs - 1 - t];
        i64 u = first[i], v = second[i];
        i64 a0, a1, b0, b1;
        order_lists(indptr, u, v, a0, a1, b0, b1);
        i64 shared = 0;
        double wmin = 0.0;
        strided_search(idx, w, aux, u, v, a0, a1, b0, b1, threadIdx.x, blockDim.x, mode, shared, wmin);
        warp_sum(shared, wmin);
        if (lane == 0) { s_shared[warp] = shared; s_wmin[warp] = wmin; }
        __syncthreads();
        if (warp == 0) {
            shared = lane < n_warps ? s_shared[lane] : 0;
            wmin = lane < n_warps ? s_wmin[lane] : 0.0;
            warp_sum(shared, wmin);
            if (lane == 0) out[i] = finish(a1 - a0, b1 - b0, shared, wmin, wdeg, u, v, mode);
        }
        __syncthreads();
    }
}

// Each row's weight sum, left to right (the CPU adds in the same order).
extern "C" __global__ void row_sums(const i64* __restrict__ indptr, const double* __restrict__ w,
                                    i64 n, double* __restrict__ out) {
    for (i64 r = blockIdx.x * (i64)blockDim.x + threadIdx.x; r < n; r += (i64)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (i64 k = indptr[r]; k < indptr[r + 1]; ++k) s += w[k];
        out[r] = s;
    }
}

// Per pair: d_u + d_v (the work key the hybrid backend splits on).
extern "C" __global__ void pair_keys(const i64* __restrict__ indptr, const i64* __restrict__ first,
                                     const i64* __restrict__ second, i64 n_pairs, i64* __restrict__ keys) {
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n_pairs; i += (i64)gridDim.x * blockDim.x) {
        i64 u = first[i], v = second[i];
        keys[i] = (indptr[u + 1] - indptr[u]) + (indptr[v + 1] - indptr[v]);
    }
}

// ---- Heavy pairs grouped by hub (unweighted modes) ---------------------------------------------
// A pair whose shorter list is longer than thread_max is scored against its "hub", the vertex with
// the longer list (v on a tie, as order_lists). The pairs are sorted by (d_hub, hub) and cut into
// tasks of one hub and at most TASK_PAIRS pairs; a block builds the hub's list once into something
// O(1) to probe (a hash set in shared memory, or for the largest hubs a bitmap over all vertices
// in global memory, which stays in L2 while the blocks on that hub run), then probes the entries
// of its pairs' other lists: min(d_u, d_v) probes per pair instead of binary searches. The entries
// of a task's lists are one flat range that the block's threads stride over, so a long list and
// many short ones keep every thread busy alike, and each thread's loads are independent.

#ifndef TASK_PAIRS
#error "define TASK_PAIRS (gpu.py passes it)"
#endif

// Per heavy pair: key = d_hub << 32 | hub (the sort key), and its shorter list's length.
extern "C" __global__ void hub_keys(const i64* __restrict__ indptr, const i64* __restrict__ first,
                                    const i64* __restrict__ second, const i64* __restrict__ heavy, i64 m,
                                    i64* __restrict__ keys, int* __restrict__ short_len) {
    for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t < m; t += (i64)gridDim.x * blockDim.x) {
        i64 i = heavy[t], u = first[i], v = second[i];
        i64 du = indptr[u + 1] - indptr[u], dv = indptr[v + 1] - indptr[v];
        const bool u_long = du > dv;
        keys[t] = ((u_long ? du : dv) << 32) | (u_long ? u : v);
        short_len[t] = (int)(u_long ? dv : du);
    }
}

__device__ __forceinline__ unsigned slot_of(int x, int shift) {
    return ((unsigned)x * 2654435761u) >> shift;
}

// Tasks t0 .. t0 + n_tasks - 1, a block each. bits == nullptr: the hub's hash set has
// 1 << (32 - shift) slots of dynamic shared memory (at least twice the hub's degree); else the
// task's hub has the bitmap bits + task_bitmap[task - t0] * words. entry: the exclusive prefix
// sum of the shorter lists' lengths over the sorted pairs (m + 1 values).
extern "C" __global__ void jaccard_hub(
        const i64* __restrict__ indptr, const int* __restrict__ idx, const i64* __restrict__ first,
        const i64* __restrict__ second, const i64* __restrict__ pairs, const i64* __restrict__ keys,
        const i64* __restrict__ entry, const i64* __restrict__ task_ptr, i64 t0, i64 n_tasks, int shift,
        const unsigned* __restrict__ bits, const i64* __restrict__ task_bitmap, i64 words, int mode,
        double* __restrict__ out) {
    extern __shared__ int table[];
    __shared__ i64 s_start[TASK_PAIRS];
    __shared__ i64 s_off[TASK_PAIRS + 1];
    __shared__ int s_count[TASK_PAIRS];
    const unsigned slots = bits ? 0u : 1u << (32 - shift), mask = slots - 1;
    for (i64 task = t0 + blockIdx.x; task < t0 + n_tasks; task += gridDim.x) {
        const i64 p0 = task_ptr[task], np = task_ptr[task + 1] - p0;
        const i64 h = keys[p0] & 0xffffffffLL;
        const i64 b0 = indptr[h], b1 = indptr[h + 1];
        const i64 e0 = entry[p0];
        const i64 total = entry[p0 + np] - e0;
        const unsigned* b = bits ? bits + task_bitmap[task - t0] * words : nullptr;
        for (unsigned k = threadIdx.x; k < slots; k += blockDim.x) table[k] = -1;
        for (int j = threadIdx.x; j < np; j += blockDim.x) {
            const i64 i = pairs[p0 + j], u = first[i], v = second[i];
            s_start[j] = indptr[v == h ? u : v];  // the other vertex's list
            s_off[j] = entry[p0 + j] - e0;
            s_count[j] = 0;
        }
        if (threadIdx.x == 0) s_off[np] = total;
        __syncthreads();
        for (i64 k = b0 + threadIdx.x; k < b1 && !bits; k += blockDim.x) {
            const int x = idx[k];
            unsigned q = slot_of(x, shift);
            while (atomicCAS(&table[q], -1, x) != -1) q = (q + 1) & mask;  // lists hold no repeats
        }
        __syncthreads();
        // each warp takes an equal run of entries, its lanes 32 consecutive ones at a time
        const int lane = threadIdx.x & 31, n_warps = blockDim.x >> 5;
        const i64 run = ((total + n_warps - 1) / n_warps + 31) & ~31LL;
        const i64 e_end = min(total, (i64)((threadIdx.x >> 5) + 1) * run);
        i64 e = (threadIdx.x >> 5) * run + lane;
        int j = 0;
        if (e < e_end) {  // the pair holding entry e, by bisection; then forward as e grows
            int hi = (int)np - 1;
            while (j < hi) {
                const int mid = (j + hi + 1) >> 1;
                if (s_off[mid] <= e) j = mid; else hi = mid - 1;
            }
        }
        for (; e < e_end; e += 4 * 32) {  // four independent loads in flight per lane
            int xs[4], js[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const i64 eu = e + 32 * u;
                js[u] = -1;
                if (eu < e_end) {
                    while (eu >= s_off[j + 1]) ++j;
                    js[u] = j;
                    xs[u] = idx[s_start[j] + (eu - s_off[j])];
                }
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                if (js[u] < 0) continue;
                const int x = xs[u];
                bool hit;
                if (b) {
                    hit = (b[x >> 5] >> (x & 31)) & 1u;
                } else {
                    unsigned q = slot_of(x, shift);
                    int y;
                    while ((y = table[q]) != x && y != -1) q = (q + 1) & mask;
                    hit = y == x;
                }
                if (hit) atomicAdd(&s_count[js[u]], 1);
            }
        }
        __syncthreads();
        for (int j = threadIdx.x; j < np; j += blockDim.x)
            out[pairs[p0 + j]] = finish(s_off[j + 1] - s_off[j], b1 - b0, s_count[j], 0.0, nullptr, 0, 0, mode);
        __syncthreads();
    }
}

// Bitmaps of hubs over all vertices: words 32-bit words each, one block per hub.
extern "C" __global__ void hub_bitmaps(const i64* __restrict__ indptr, const int* __restrict__ idx,
                                       const i64* __restrict__ hubs, i64 n_hubs, i64 words,
                                       unsigned* __restrict__ bits) {
    for (i64 j = blockIdx.x; j < n_hubs; j += gridDim.x) {
        const i64 h = hubs[j];
        unsigned* b = bits + j * words;
        for (i64 k = indptr[h] + threadIdx.x; k < indptr[h + 1]; k += blockDim.x) {
            const int x = idx[k];
            atomicOr(&b[x >> 5], 1u << (x & 31));
        }
    }
}

// ---- Two-hop pairs -----------------------------------------------------------------------------
// The pairs (u, v), v != u, that share a neighbour, for the first vertices u of `us`. A block takes
// one u at a time (from the counter `next`, the heaviest first as `us` is given) and walks its wedges
// u–x–v (x a neighbour of u, v a neighbour of x; with `upper`, v > u only): the wedges of TWO_HOP
// neighbours at a time, balanced over the threads by a scan of their lengths. Each wedge adds, in the
// block's own lane arrays over all vertices (global memory), 1 to cnt[v] and the mode's term to acc[v],
// and sets v's bit in `bits` and its group's flag (a group: TWO_HOP words of bits); no returned value
// is waited for. Then the flagged groups' words are read back in vertex order, so each u's pairs come
// out with v ascending without a sort, and every array is cleared behind the read.
//   pass 0 (count)  counts[t]: the pairs of us[t] (bits only: no count, no sum)
//   pass 1 (fill)   (u, v, score) of us[t] written from offsets[t]
//   pass 2 (best)   the pairs that beat the k-th best so far (score tau, then the pair (tu, tv) on a
//                   tie) appended at the counter `found`, at most `capacity` of them written
// mode: MODE_SHARED (counts only) or a sum's mode; formula, weighted, size: as finish_measure.

#define TWO_HOP 256

__device__ __forceinline__ i64 block_scan(i64 x, i64& total, i64* s_warp) {  // exclusive; every thread calls
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    i64 incl = x;
    for (int o = 1; o < 32; o <<= 1) {
        const i64 y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) s_warp[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        i64 s = lane < n_warps ? s_warp[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        if (lane < n_warps) s_warp[lane] = s;
    }
    __syncthreads();
    const i64 before = (warp ? s_warp[warp - 1] : 0) + incl - x;
    total = s_warp[n_warps - 1];
    __syncthreads();
    return before;
}

__device__ __forceinline__ bool beats(double s, i64 u, i64 v, double tau, i64 tu, i64 tv) {
    return s > tau || (s == tau && (u < tu || (u == tu && v < tv)));
}

extern "C" __global__ void __launch_bounds__(TWO_HOP) two_hop(
        const i64* __restrict__ indptr, const int* __restrict__ idx, const double* __restrict__ w,
        const double* __restrict__ size, const double* __restrict__ aux, const i64* __restrict__ us, i64 n_us,
        i64 n, int upper, int mode, int formula, int weighted, int pass,
        int* __restrict__ cnt_all, double* __restrict__ acc_all, unsigned* __restrict__ bits_all,
        unsigned char* __restrict__ flags_all, unsigned long long* __restrict__ next,
        i64* __restrict__ counts, const i64* __restrict__ offsets, i64* __restrict__ first_out,
        i64* __restrict__ second_out, double* __restrict__ score_out,
        double tau, i64 tu, i64 tv, unsigned long long* __restrict__ found, i64 capacity) {
    __shared__ i64 s_warp[32];
    __shared__ i64 s_off[TWO_HOP + 1];
    __shared__ i64 s_b0[TWO_HOP];
    __shared__ int s_x[TWO_HOP];
    __shared__ i64 s_t, s_base;
    const int tid = threadIdx.x;
    const i64 words = (n + 31) >> 5, groups = (words + TWO_HOP - 1) / TWO_HOP;
    const bool counting = pass == 0, summed = !counting && sums(mode);
    int* cnt = cnt_all + blockIdx.x * n;
    double* acc = summed ? acc_all + blockIdx.x * n : nullptr;
    unsigned* bits = bits_all + blockIdx.x * words;
    unsigned char* flags = flags_all + blockIdx.x * groups;
    for (;;) {
        if (tid == 0) s_t = (i64)atomicAdd(next, 1ULL);
        __syncthreads();
        const i64 t = s_t;
        __syncthreads();
        if (t >= n_us) break;
        const i64 u = us[t], a0 = indptr[u], a1 = indptr[u + 1];
        for (i64 c0 = a0; c0 < a1; c0 += TWO_HOP) {  // the wedges of TWO_HOP neighbours x at a time
            const i64 k = c0 + tid;
            i64 len = 0;
            if (k < a1) {
                const int x = idx[k];
                i64 b0 = indptr[x];
                const i64 b1 = indptr[x + 1];
                if (upper) b0 = lower_bound(idx, b0, b1, (int)u + 1);
                s_x[tid] = x;
                s_b0[tid] = b0;
                len = b1 - b0;
            }
            i64 total;
            s_off[tid] = block_scan(len, total, s_warp);
            if (tid == 0) s_off[TWO_HOP] = total;
            __syncthreads();
            int j = 0;
            for (i64 e = tid; e < total; e += TWO_HOP) {
                int hi = TWO_HOP - 1;  // the last neighbour whose wedges start at or before e
                while (j < hi) {
                    const int mid = (j + hi + 1) >> 1;
                    if (s_off[mid] <= e) j = mid; else hi = mid - 1;
                }
                const int x = s_x[j];
                const i64 jv = s_b0[j] + (e - s_off[j]);
                const int v = idx[jv];
                if (v == u || left_out(mode, x, u, v)) continue;
                if (!counting) atomicAdd(&cnt[v], 1);
                if (summed) atomicAdd(&acc[v], term(mode, w, aux, c0 + j, jv, x));
                atomicOr(&bits[v >> 5], 1u << (v & 31));
                flags[(v >> 5) / TWO_HOP] = 1;
            }
            __syncthreads();
        }
        // read back the flagged groups in vertex order: TWO_HOP groups at a time, a word a thread
        const i64 du = a1 - a0;
        const double su = weighted ? size[u] : 0.0;
        i64 base = pass == 1 ? offsets[t] : 0;
        for (i64 g0 = 0; g0 < groups; g0 += TWO_HOP) {
            const i64 g = g0 + tid;
            const int f = g < groups ? __ldcg(flags + g) : 0;  // read where the atomics wrote (L2)
            if (f) flags[g] = 0;
            i64 n_flagged;
            const i64 at = block_scan(f, n_flagged, s_warp);
            if (f) s_b0[at] = g;
            __syncthreads();
            for (i64 q = 0; q < n_flagged; ++q) {
                const i64 wi = s_b0[q] * TWO_HOP + tid;
                unsigned word = 0;
                if (wi < words) {
                    word = __ldcg(bits + wi);
                    if (word) bits[wi] = 0;
                }
                int kept = 0;
                if (pass != 2) {
                    kept = __popc(word);
                } else {
                    for (unsigned m = word; m; m &= m - 1) {
                        const i64 v = wi * 32 + __ffs(m) - 1;
                        const double s = finish_measure(formula, weighted, __ldcg(cnt + v), summed ? __ldcg(acc + v) : 0.0,
                                                        du, indptr[v + 1] - indptr[v], su, weighted ? size[v] : 0.0);
                        kept += beats(s, u, v, tau, tu, tv);
                    }
                }
                i64 total;
                const i64 before = block_scan(kept, total, s_warp);
                if (pass == 2) {
                    if (tid == 0) s_base = total ? (i64)atomicAdd(found, (unsigned long long)total) : 0;
                    __syncthreads();
                    base = s_base;
                    __syncthreads();
                }
                if (!counting) {
                    i64 o = base + before;
                    for (unsigned m = word; m; m &= m - 1) {
                        const i64 v = wi * 32 + __ffs(m) - 1;
                        const double s = finish_measure(formula, weighted, __ldcg(cnt + v), summed ? __ldcg(acc + v) : 0.0,
                                                        du, indptr[v + 1] - indptr[v], su, weighted ? size[v] : 0.0);
                        cnt[v] = 0;
                        if (summed) acc[v] = 0.0;
                        if (pass == 2 && !beats(s, u, v, tau, tu, tv)) continue;
                        if (o < capacity) {
                            first_out[o] = u;
                            second_out[o] = v;
                            score_out[o] = s;
                        }
                        ++o;
                    }
                }
                base += total;
            }
            __syncthreads();
        }
        if (counting && tid == 0) counts[t] = base;
    }
}
