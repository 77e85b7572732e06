// euler GPU kernels: the array steps of the parallel cycle-merging algorithm that are not a
// CuPy sort or gather (see graphops_euler.gpu). Arcs and vertices are int32; every kernel
// loops grid-stride, so any grid size is correct. All results are deterministic: the only
// atomics are integer minima, whose outcome does not depend on their order.

typedef long long i64;

#define GRID_STRIDE(i, n) for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < (n); \
                               i += (i64)gridDim.x * blockDim.x)

// One pointer-jumping round for cycle labels: lab_out[a] = min(lab[a], lab[nxt[a]]),
// nxt_out[a] = nxt[nxt[a]]. Sets *changed when any label fell.
extern "C" __global__ void jump_min(const int* nxt, const int* lab, int* nxt_out, int* lab_out, i64 n,
                                    int* changed) {
    int fell = 0;
    GRID_STRIDE(a, n) {
        int j = nxt[a];
        int l = lab[a], k = lab[j];
        if (k < l) {
            l = k;
            fell = 1;
        }
        lab_out[a] = l;
        nxt_out[a] = nxt[j];
    }
    if (__syncthreads_or(fell) && threadIdx.x == 0) *changed = 1;
}

// One round of Wyllie's list ranking: dist_out[a] = dist[a] + dist[nxt[a]], nxt_out[a] =
// nxt[nxt[a]]; the last element points to itself with distance 0.
extern "C" __global__ void rank_step(const int* nxt, const int* dist, int* nxt_out, int* dist_out, i64 n) {
    GRID_STRIDE(a, n) {
        int j = nxt[a];
        dist_out[a] = dist[a] + dist[j];
        nxt_out[a] = nxt[j];
    }
}

// Connected components of vertices by edges (direction ignored): hook the larger root label
// onto the smaller one; then `compress` flattens the labels. Repeated until nothing hooks.
extern "C" __global__ void cc_hook(const int* src, const int* dst, i64 m, int* lab, int* changed) {
    int hooked = 0;
    GRID_STRIDE(e, m) {
        int a = lab[src[e]], b = lab[dst[e]];
        if (a != b) {
            int hi = a > b ? a : b, lo = a > b ? b : a;
            atomicMin(lab + hi, lo);
            hooked = 1;
        }
    }
    if (__syncthreads_or(hooked) && threadIdx.x == 0) *changed = 1;
}

extern "C" __global__ void compress(int* lab, i64 n) {
    GRID_STRIDE(v, n) {
        int l = lab[v];
        while (lab[l] != l) l = lab[l];
        lab[v] = l;
    }
}

// Boruvka, step 1: the lightest live link (the link's index is its weight: all distinct) at
// each component. Link i joins cycles la[i] and lb[i]; comp maps a cycle to its component.
extern "C" __global__ void boruvka_min(const int* la, const int* lb, i64 links, const int* comp, int* best,
                                       int* any) {
    int live = 0;
    GRID_STRIDE(i, links) {
        int a = comp[la[i]], b = comp[lb[i]];
        if (a != b) {
            atomicMin(best + a, (int)i);
            atomicMin(best + b, (int)i);
            live = 1;
        }
    }
    if (__syncthreads_or(live) && threadIdx.x == 0) *any = 1;
}

// Boruvka, step 2: each component with a lightest link marks it chosen and hooks onto the
// component at its other end; of two components that chose the same link, the smaller stays
// a root. best is reset for the next round.
extern "C" __global__ void boruvka_hook(int* best, const int* la, const int* lb, const int* comp, i64 ncomp,
                                        int* parent, unsigned char* chosen) {
    GRID_STRIDE(c, ncomp) {
        int i = best[c];
        if (i == 0x7fffffff) continue;
        chosen[i] = 1;
        int a = comp[la[i]], b = comp[lb[i]];
        int other = a == (int)c ? b : a;
        // mutual choice: the other component's best is this same link
        if (best[other] == i && other > (int)c) continue;
        parent[c] = other;
    }
}

extern "C" __global__ void reset_best(int* best, i64 n) {
    GRID_STRIDE(c, n) best[c] = 0x7fffffff;
}

// Merging: for every representative in-arc r of a run of chosen links at one vertex, take
// the successor of the next representative of the run; the last one of the run takes the
// first one's. chosen[j]: the link between representatives j and j + 1 is in the forest;
// start[j]: the first representative of j's run.
extern "C" __global__ void rotate(const int* rep, const unsigned char* chosen, const int* start, i64 reps,
                                  const int* succ, int* succ_out) {
    GRID_STRIDE(j, reps) {
        bool next = j + 1 < reps && chosen[j];
        bool prev = j > 0 && chosen[j - 1];
        if (next) succ_out[rep[j]] = succ[rep[j + 1]];
        else if (prev) succ_out[rep[j]] = succ[rep[start[j]]];
    }
}
