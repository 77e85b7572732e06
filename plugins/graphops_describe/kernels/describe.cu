// describe: per-vertex scans and lock-free union-find over a CSR (indptr int64, indices int32).
// Compiled by CuPy (RawModule, NVRTC) and checked offline with nvcc -c.

// Row of CSR entry j: the last r with indptr[r] <= j.
__device__ __forceinline__ long long row_of(const long long* __restrict__ indptr, long long n,
                                            long long j) {
    long long lo = 0, hi = n;  // invariant: indptr[lo] <= j < indptr[hi]
    while (hi - lo > 1) {
        long long mid = (lo + hi) >> 1;
        if (indptr[mid] <= j) lo = mid; else hi = mid;
    }
    return lo;
}

// One thread per stored entry: self-loops, repeated entries (undirected: counted in the
// row of the lower endpoint) and, for directed graphs, in-degrees.
extern "C" __global__ void entry_stats(const long long* __restrict__ indptr,
                                       const int* __restrict__ indices, long long n,
                                       long long entries, int directed,
                                       long long* __restrict__ self_at,
                                       long long* __restrict__ multi_at,
                                       long long* __restrict__ indeg) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < entries; j += stride) {
        long long r = row_of(indptr, n, j);
        int c = indices[j];
        if (c == r) atomicAdd((unsigned long long*)&self_at[r], 1ULL);
        if (j > indptr[r] && c == indices[j - 1] && (directed || c >= r))
            atomicAdd((unsigned long long*)&multi_at[r], 1ULL);
        if (directed) atomicAdd((unsigned long long*)&indeg[c], 1ULL);
    }
}

// Root of v; parent[x] <= x always holds, so the walk ends. Halves the path as it goes.
__device__ __forceinline__ int find_root(int* parent, int v) {
    int p = parent[v];
    while (p != v) {
        int gp = parent[p];
        if (gp != p) parent[v] = gp;  // benign race: any ancestor is a valid parent
        v = p;
        p = gp;
    }
    return v;
}

// One thread per stored entry: link the two roots, the larger under the smaller, with CAS.
extern "C" __global__ void cc_link(const long long* __restrict__ indptr,
                                   const int* __restrict__ indices, long long n, long long entries,
                                   int* parent) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < entries; j += stride) {
        int a = (int)row_of(indptr, n, j);
        int b = indices[j];
        if (a == b) continue;
        a = find_root(parent, a);
        b = find_root(parent, b);
        while (a != b) {
            int hi = a > b ? a : b, lo = a > b ? b : a;
            int seen = atomicCAS(&parent[hi], hi, lo);
            if (seen == hi) break;          // linked
            a = find_root(parent, seen);    // hi got a new parent meanwhile: climb and retry
            b = lo;
        }
    }
}

// After linking: 1 for each vertex that is its component's root.
extern "C" __global__ void cc_roots(const int* __restrict__ parent, long long n,
                                    unsigned char* __restrict__ roots) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += stride)
        roots[v] = parent[v] == (int)v;
}
