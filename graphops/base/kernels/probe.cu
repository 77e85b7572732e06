// Random 4-byte reads from a table of mask + 1 words (a power of two): each thread reads `rounds`
// words at xorshift positions, independent of the values read, and writes their sum (so the
// reads are kept). The rate of such reads is the work floor's rate for lookups (hash sets,
// bitmaps) that land anywhere in a table of that size.
extern "C" __global__ void random_reads(const unsigned* __restrict__ table, unsigned long long mask, int rounds,
                                        unsigned* __restrict__ out) {
    const unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned x = (unsigned)t * 2654435761u + 0x9e3779b9u, s = 0;
#pragma unroll 8
    for (int r = 0; r < rounds; ++r) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s += __ldg(&table[x & mask]);
    }
    out[t] = s;
}
