/* Shared by every C file of graphgrad's native kernels (see __init__.py).
 *
 * Kernels are plain loops over float32 arrays that the compiler vectorizes (-O3 -march=native):
 * no branches inside the loops, and exp written here as a polynomial (libm's expf is a function
 * call the compiler cannot vectorize without -ffast-math, which would also break NaN handling). */
#ifndef GG_NATIVE_H
#define GG_NATIVE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define GG_EXPORT __declspec(dllexport)
#else
#define GG_EXPORT __attribute__((visibility("default")))
#endif

/* exp(x) for float32 within 2 ulp on [-87.3, 88.7]; +inf above, exp(-87.3) ~ 1e-38 below (no
 * subnormal results);
 * NaN stays NaN. Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial for e^r,
 * and 2^n put into the exponent bits. */
static inline float gg_expf(float x) {
    const float hi = 88.72283f, lo = -87.33654f;
    float c = x > hi ? hi : x;
    c = c < lo ? lo : c;
    float n = rintf(c * 1.44269504088896341f);
    float r = c - n * 0.693359375f;           /* ln2, high part (exact product) */
    r = r - n * -2.12194440e-4f;              /* ln2, low part */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float y = p * scale;
    y = x > hi ? INFINITY : y;
    return x != x ? x : y;                    /* NaN in, NaN out */
}

/* 1 / (1 + exp(-x)), accurate for large negative x (no cancellation). */
static inline float gg_sigmoidf(float x) {
    return 1.0f / (1.0f + gg_expf(-x));
}

/* tanh(x) = 2 sigmoid(2x) - 1 for |x| >= 0.55; below, where that subtraction would lose relative
 * accuracy, tanh's Taylor series to x^19 (its terms shrink ~8x each there). */
static inline float gg_tanhf(float x) {
    float big = 2.0f * gg_sigmoidf(2.0f * x) - 1.0f;
    float t = x * x;
    float p = -2.39129114e-4f;                /* c19 = -443861162 / 1856156927625 */
    p = p * t + 5.90027440e-4f;
    p = p * t - 1.45583438e-3f;
    p = p * t + 3.59212803e-3f;
    p = p * t - 8.86323552e-3f;
    p = p * t + 2.18694885e-2f;
    p = p * t - 5.39682540e-2f;
    p = p * t + 1.33333333e-1f;
    p = p * t - 3.33333333e-1f;
    float small = x + x * t * p;
    return fabsf(x) < 0.55f ? small : big;
}

/* dst[j * ld + i] = src[i * ls + j] for i < rows, j < cols (a transpose between row strides ls and ld):
 * 8 x 8 blocks through AVX registers where the CPU has them, the edges element by element. */
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

static inline void gg_transpose(const float *src, int64_t rows, int64_t cols, int64_t ls, float *dst, int64_t ld) {
    int64_t rows8 = 0, cols8 = 0;
#ifdef __AVX__
    rows8 = rows - rows % 8;
    cols8 = cols - cols % 8;
    for (int64_t j = 0; j < cols8; j += 8)  /* (writing dst row block by row block: 1.7x faster) */
        for (int64_t i = 0; i < rows8; i += 8) transpose8(src + i * ls + j, ls, dst + j * ld + i, ld);
#endif
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = i < rows8 ? cols8 : 0; j < cols; j++) dst[j * ld + i] = src[i * ls + j];
    }
}

/* Input row src (n columns) into the padded row dst split into sw phases of phase_len: padded column
 * col = q + pad goes to element col / sw of phase col % sw. Strides 1 and 2 as constant-stride loops
 * (vectorized); others element by element. */
static inline void gg_split_row(float *restrict dst, int64_t phase_len, const float *restrict src, int64_t n, int64_t pad,
                      int64_t sw) {
    if (n <= 0) return;
    if (sw == 1) {
        memcpy(dst + pad, src, sizeof(float) * (size_t)n);
        return;
    }
    if (sw == 2) {
        const int64_t first = pad % 2;                       /* phase of q = 0 */
        float *a = dst + first * phase_len + pad / 2;        /* q = 0, 2, 4, ... */
        float *b = dst + (1 - first) * phase_len + (pad + 1) / 2;  /* q = 1, 3, 5, ... */
        for (int64_t k = 0; 2 * k < n; k++) a[k] = src[2 * k];
        for (int64_t k = 0; 2 * k + 1 < n; k++) b[k] = src[2 * k + 1];
        return;
    }
    int64_t phase = pad % sw, at = pad / sw;
    for (int64_t q = 0; q < n; q++) {
        dst[phase * phase_len + at] = src[q];
        if (++phase == sw) { phase = 0; at++; }
    }
}

/* ---- threads (parallel.c) ---- */
#define GG_MAX_WORKERS 8
/* run(task, first, stop, worker, chunk): units [first, stop), chunk number `chunk` of a split, run by
 * worker `worker` (0: the calling thread; < the workers asked for: an index for per-worker scratch). */
typedef void (*gg_range_fn)(void *task, int64_t first, int64_t stop, int worker, int64_t chunk);
/* run over [0, n) in chunks of `chunk` units, on up to `workers` threads (the caller's included). */
void gg_parallel(gg_range_fn run, void *task, int64_t n, int64_t chunk, int64_t workers);
/* gg_parallel's type, for generated kernels (a library of their own), which are given its address. */
typedef void (*gg_split_fn)(gg_range_fn run, void *task, int64_t n, int64_t chunk, int64_t workers);
/* How many threads for `work` units: the thread count, but none with less than min_work. */
int64_t gg_workers(int64_t work, int64_t min_work);
/* gg_workers where the split runs on MKL's OpenMP team, or on the pool that NumPy's OpenBLAS shares
 * (parallel.c), else 1: for kernels that run right after products (GELU, layer norm, attention), which
 * lost when split over threads of our own while another library's threads spun on the other core. */
int64_t gg_team_workers(int64_t work, int64_t min_work);
/* The chunk size for n units: n / 16 (rounded up), at least min_chunk. Independent of the thread
 * count, so that per-chunk partial sums (and so the results) are too; 16 chunks let two or four threads
 * even out, and handing one out costs nothing next to its work. */
static inline int64_t gg_chunk(int64_t n, int64_t min_chunk) {
    int64_t chunk = (n + 15) / 16;
    return chunk > min_chunk ? chunk : (min_chunk > 1 ? min_chunk : 1);
}

/* ---- small products (smallgemm.c) ---- */
#define GG_PRODUCT_DEPTH 128
/* out (rows, ncols) (+)= a (rows, K) p (K, ncols): a[r lda + k ka], p[k ldp + c], ncols a multiple of 16;
 * column chunk j (64 wide) vector v at out[r ldo + j step + v vs]; see smallgemm.c. */
void gg_small_product(const float *a, int64_t lda, int64_t ka, int64_t rows, const float *p, int64_t ldp, int64_t K,
                      int64_t ncols, float *out, int64_t ldo, int64_t step, int64_t vs, int acc_in);

#endif
