/* gg_native.h's building blocks (sigmoid, tanh; exp through both) as exported kernels, so that their
 * accuracy is tested on their own (tests/backend/test_native.py); the ops use them inline. */
#include "gg_native.h"

GG_EXPORT void gg_sigmoid_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_sigmoidf(x[i]);
}

GG_EXPORT void gg_tanh_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_tanhf(x[i]);
}

/* dst (cols, rows) = src (rows, cols) transposed: 8 x 8 blocks through AVX registers where the CPU
 * has them, the edges element by element. (NumPy's strided copy of a transposed view takes about 14 us
 * for 512 x 32, the size of one recurrent time step's product; this about 3.5 us.) */
#ifdef __AVX__
#include <immintrin.h>
static inline void transpose8(const float *src, int64_t ls, float *dst, int64_t ld) {
    __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ls), r2 = _mm256_loadu_ps(src + 2 * ls),
           r3 = _mm256_loadu_ps(src + 3 * ls), r4 = _mm256_loadu_ps(src + 4 * ls), r5 = _mm256_loadu_ps(src + 5 * ls),
           r6 = _mm256_loadu_ps(src + 6 * ls), r7 = _mm256_loadu_ps(src + 7 * ls);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
           t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
           t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
           u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
           u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
           u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(dst + ld, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(dst + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(dst + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(dst + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(dst + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(dst + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(dst + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

GG_EXPORT void gg_transpose_f32(const float *src, float *dst, int64_t rows, int64_t cols) {
    int64_t rows8 = 0, cols8 = 0;
#ifdef __AVX__
    rows8 = rows - rows % 8;
    cols8 = cols - cols % 8;
    for (int64_t j = 0; j < cols8; j += 8)  /* (writing dst row block by row block: 1.7x faster) */
        for (int64_t i = 0; i < rows8; i += 8) transpose8(src + i * cols + j, cols, dst + j * rows + i, rows);
#endif
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = i < rows8 ? cols8 : 0; j < cols; j++) dst[j * rows + i] = src[i * cols + j];
    }
}
