// One tile of a Gram matrix into its float64 place, in one pass: out[r, c] = in[r, c], or, with
// the diagonals, in[r, c] / sqrt(drow[r] dcol[c]) (0 where that product is not positive), the
// same IEEE operations as graphops.engine.gram.normalize, so the bits are the CPU's. `in` may be
// `out` (float64, normalized in place) or a float32 tile (a tensor-core GEMM's). Rows are
// blockIdx.y (strided), columns blockIdx.x * blockDim.x + threadIdx.x: coalesced.
template <typename T>
__device__ __forceinline__ void tile_out(const T* in, long long ld_in, double* out, long long ld_out,
                                         const double* drow, const double* dcol, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    const double dc = dcol ? dcol[c] : 0.0;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        double v = (double)in[r * ld_in + c];
        if (drow) {
            const double s = sqrt(drow[r] * dc);
            v = s > 0.0 ? v / s : 0.0;
        }
        out[r * ld_out + c] = v;
    }
}

extern "C" __global__ void gram_tile_f32(const float* in, long long ld_in, double* out, long long ld_out,
                                         const double* drow, const double* dcol, int rows, int cols) {
    tile_out(in, ld_in, out, ld_out, drow, dcol, rows, cols);
}

extern "C" __global__ void gram_tile_f64(const double* in, long long ld_in, double* out, long long ld_out,
                                         const double* drow, const double* dcol, int rows, int cols) {
    tile_out(in, ld_in, out, ld_out, drow, dcol, rows, cols);
}
