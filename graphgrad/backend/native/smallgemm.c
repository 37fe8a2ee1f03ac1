/* Small matrix products for the native kernels that need one inside a loop (an LSTM time step, one
 * attention head): out (rows, ncols) = a (rows, K) times p (K, ncols), register-blocked, single thread.
 * Called per step or per head, where a BLAS call's setup, its threads and (from Python) the call
 * itself cost as much as the arithmetic, and where operands are strided views (a head of a packed
 * q/k/v) that BLAS would want copied.
 *
 * a is read as a[r * lda + k * ka] (ka = 1: rows; lda = 1: a transposed operand); p as p[k * ldp + c]
 * (rows of ldp floats; columns in runs of 16). Columns go in chunks of 64, 32 or 16 (ncols must be a
 * multiple of 16); chunk j's vector v lands at out + r * ldo + j * step + v * vs (step 64, vs 16 for a
 * plain row-major out; others scatter whole vectors, e.g. the LSTM's gates). K goes in slices of
 * GG_PRODUCT_DEPTH so that a slice of p stays in L1 while every row block goes by. acc_in: add to out
 * instead of writing it. The loops are a block of RB rows x NV vectors of accumulators: 6 x 4, 12 x 2,
 * 8 x 1 (24, 24, 8 registers of 16 floats), fused multiply-adds. */
#pragma GCC optimize("fp-contract=fast")
#include "gg_native.h"

typedef float sv16 __attribute__((vector_size(64)));
#define SL 16
#define S_UNROLL _Pragma("GCC unroll 32")

static inline sv16 sload(const float *p) { sv16 v; memcpy(&v, p, sizeof v); return v; }
static inline void sstore(float *p, sv16 v) { memcpy(p, &v, sizeof v); }

#define BLOCK(NAME, RB, NV)                                                                              \
static void NAME(const float *a, int64_t lda, int64_t ka, const float *p, int64_t ldp, int64_t K, float *out, \
                 int64_t ldo, int64_t vs, int acc_in) {                                                  \
    sv16 acc[RB][NV];                                                                                    \
    S_UNROLL for (int r = 0; r < RB; r++)                                                                \
        S_UNROLL for (int v = 0; v < NV; v++) acc[r][v] = acc_in ? sload(out + r * ldo + v * vs) : (sv16){0}; \
    for (int64_t k = 0; k < K; k++) {                                                                    \
        sv16 w[NV];                                                                                      \
        S_UNROLL for (int v = 0; v < NV; v++) w[v] = sload(p + k * ldp + v * SL);                        \
        S_UNROLL for (int r = 0; r < RB; r++) {                                                          \
            const float s = a[r * lda + k * ka];                                                         \
            S_UNROLL for (int v = 0; v < NV; v++) acc[r][v] += w[v] * s;                                 \
        }                                                                                                \
    }                                                                                                    \
    S_UNROLL for (int r = 0; r < RB; r++)                                                                \
        S_UNROLL for (int v = 0; v < NV; v++) sstore(out + r * ldo + v * vs, acc[r][v]);                 \
}
BLOCK(block_6x4, 6, 4)
BLOCK(block_2x4, 2, 4)
BLOCK(block_1x4, 1, 4)
BLOCK(block_12x2, 12, 2)
BLOCK(block_4x2, 4, 2)
BLOCK(block_1x2, 1, 2)
BLOCK(block_8x1, 8, 1)
BLOCK(block_1x1, 1, 1)

typedef void (*block_fn)(const float *, int64_t, int64_t, const float *, int64_t, int64_t, float *, int64_t,
                         int64_t, int);

void gg_small_product(const float *a, int64_t lda, int64_t ka, int64_t rows, const float *p, int64_t ldp, int64_t K,
                      int64_t ncols, float *out, int64_t ldo, int64_t step, int64_t vs, int acc_in) {
    for (int64_t c0 = 0, width; c0 < ncols; c0 += width) {
        width = ncols - c0 >= 64 ? 64 : ncols - c0 >= 32 ? 32 : 16;
        /* (RB, function) pairs for this width, widest first */
        const int64_t rb[3] = {width == 64 ? 6 : width == 32 ? 12 : 8, width == 64 ? 2 : width == 32 ? 4 : 1, 1};
        const block_fn fn[3] = {width == 64 ? block_6x4 : width == 32 ? block_12x2 : block_8x1,
                                width == 64 ? block_2x4 : width == 32 ? block_4x2 : block_1x1,
                                width == 64 ? block_1x4 : width == 32 ? block_1x2 : block_1x1};
        float *o = out + (c0 / 64) * step + (c0 % 64) / SL * vs;
        for (int64_t k0 = 0; k0 < K; k0 += GG_PRODUCT_DEPTH) {
            const int64_t depth = K - k0 < GG_PRODUCT_DEPTH ? K - k0 : GG_PRODUCT_DEPTH;
            const float *pk = p + k0 * ldp + c0;
            const int add = acc_in || k0 > 0;
            int64_t r = 0;
            for (int b = 0; b < 3; b++)
                for (; r + rb[b] <= rows; r += rb[b])
                    fn[b](a + r * lda + k0 * ka, lda, ka, pk, ldp, depth, o + r * ldo, ldo, vs, add);
        }
    }
}
