/* Depthwise 2-D convolution (one input channel per group, M filters per channel), float32, NCHW:
 * y[n, c*M + m, oh, ow] = sum over (kh, kw) of w[c*M + m, kh, kw] * x[n, c, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw]
 * (zero outside the input).
 *
 * gg_depthwise2d_f32 (output rows of 16 or more): each input plane is copied once into a zero-padded
 * plane whose rows are split into sw phases (phase p holds padded columns p, p + sw, ...), so that
 * for every kernel offset consecutive outputs read consecutive floats: output column q, offset j
 * reads element q + (j dw) / sw of phase (j dw) mod sw. Blocks of 4 output rows x 32 columns are then
 * summed over the kernel offsets in 8 vector registers (one pass over the output, none over memory
 * per offset), fused multiply-adds. */
#pragma GCC optimize("fp-contract=fast")
#include "gg_native.h"
#include <stdlib.h>

typedef float dv16 __attribute__((vector_size(64)));
#define DW_ROWS 4   /* output rows per block */
#define DW_VECS 2   /* vectors of 16 output columns per block */

static inline dv16 dload(const float *p) { dv16 v; memcpy(&v, p, sizeof v); return v; }
static inline void dstore(float *p, dv16 v) { memcpy(p, &v, sizeof v); }

/* One block: rows r0 .. r0 + rows - 1 (rows <= DW_ROWS), columns q0 .. q0 + 31 (those < ow kept). */
static void depthwise_block(const float *plane, int64_t row_len, int64_t phase_len, const float *wk, float *yp,
                            int64_t r0, int64_t rows, int64_t q0, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                            int64_t sw, int64_t dh, int64_t dw) {
    dv16 acc[DW_ROWS][DW_VECS];
    for (int r = 0; r < DW_ROWS; r++)
        for (int v = 0; v < DW_VECS; v++) acc[r][v] = (dv16){0};
    for (int64_t i = 0; i < kh; i++)
        for (int64_t j = 0; j < kw; j++) {
            const float coef = wk[i * kw + j];
            const int64_t off = j * dw;
            const float *src = plane + (off % sw) * phase_len + off / sw + q0;
            for (int r = 0; r < DW_ROWS; r++) {
                if (r >= rows) break;
                const float *row = src + ((r0 + r) * sh + i * dh) * row_len;
                for (int v = 0; v < DW_VECS; v++) acc[r][v] += dload(row + v * 16) * coef;
            }
        }
    for (int r = 0; r < rows; r++) {
        float *out = yp + (r0 + r) * ow + q0;
        if (q0 + DW_VECS * 16 <= ow) {
            for (int v = 0; v < DW_VECS; v++) dstore(out + v * 16, acc[r][v]);
        } else {
            float tail[DW_VECS * 16];
            for (int v = 0; v < DW_VECS; v++) dstore(tail + v * 16, acc[r][v]);
            for (int64_t q = 0; q < ow - q0; q++) out[q] = tail[q];
        }
    }
}

GG_EXPORT void gg_depthwise2d_f32(const float *x, const float *w, float *y, int64_t n, int64_t c, int64_t h, int64_t width, int64_t m, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t *ok) {
    /* the padded plane: every row and column any output reads (rounded up to whole blocks) */
    const int64_t rows_read = ((oh + DW_ROWS - 1) / DW_ROWS * DW_ROWS - 1) * sh + (kh - 1) * dh + 1;
    const int64_t cols_read = ((ow + 31) / 32 * 32 - 1) * sw + (kw - 1) * dw + 1;
    const int64_t phase_len = (cols_read + sw - 1) / sw, row_len = phase_len * sw;
    float *plane = calloc((size_t)(rows_read * row_len), sizeof(float));
    ok[0] = plane != NULL;
    if (!plane) return;
    for (int64_t src = 0; src < n * c; src++) {
        const float *xp = x + src * h * width;
        const int64_t cols = width < cols_read - pw ? width : cols_read - pw;  /* (columns past the reach: unread) */
        for (int64_t r = 0; r < h && r + ph < rows_read; r++)
            gg_split_row(plane + (r + ph) * row_len, phase_len, xp + r * width, cols, pw, sw);
        for (int64_t k = 0; k < m; k++) {
            const int64_t channel = (src % c) * m + k;
            float *yp = y + ((src / c) * c * m + channel) * oh * ow;
            const float *wk = w + channel * kh * kw;
            for (int64_t r0 = 0; r0 < oh; r0 += DW_ROWS)
                for (int64_t q0 = 0; q0 < ow; q0 += DW_VECS * 16)
                    depthwise_block(plane, row_len, phase_len, wk, yp, r0, oh - r0 < DW_ROWS ? oh - r0 : DW_ROWS, q0,
                                    ow, kh, kw, sh, sw, dh, dw);
        }
    }
    free(plane);
}

/* The same convolution for small maps (short output rows, where a row-wise inner loop is too short
 * to vectorize): 16 planes at a time, interleaved in `scratch` as a zero-padded [hp][wp] block of
 * 16-float vectors, so that every multiply-add works on 16 planes at once; results are gathered in
 * [oh*ow] vectors and then written back plane by plane. `scratch` holds (hp*wp + oh*ow + kh*kw) * 16
 * floats, 64-byte aligned is not required, with hp = h + ph + pb and wp = width + pw + pr (the padded
 * size; pb, pr the bottom/right padding). */
typedef float gg_v16 __attribute__((vector_size(64), aligned(4)));

/* The sums of one group of 16 planes for the common 3x3 and 5x5 kernels (no dilation): the kernel's
 * vectors held in registers for the whole plane and the offsets unrolled (the general loop reloads
 * them for every output). The same products, added in the same order, as the general loop. */
#define SMALL_TAPS(NAME, KH, KW)                                                                        \
static void NAME(const gg_v16 *padded, const gg_v16 *coef, gg_v16 *acc, int64_t oh, int64_t ow, int64_t wp, \
                 int64_t sh, int64_t sw) {                                                             \
    gg_v16 k[KH * KW];                                                                                  \
    for (int t = 0; t < KH * KW; t++) k[t] = coef[t];                                                   \
    for (int64_t r = 0; r < oh; r++)                                                                    \
        for (int64_t q = 0; q < ow; q++) {                                                              \
            const gg_v16 *src = padded + r * sh * wp + q * sw;                                          \
            gg_v16 sum = {0};                                                                           \
            _Pragma("GCC unroll 8") for (int i = 0; i < KH; i++)                                        \
                _Pragma("GCC unroll 8") for (int j = 0; j < KW; j++) sum += k[i * KW + j] * src[i * wp + j]; \
            acc[r * ow + q] = sum;                                                                      \
        }                                                                                               \
}
SMALL_TAPS(small_taps_3x3, 3, 3)
SMALL_TAPS(small_taps_5x5, 5, 5)

GG_EXPORT void gg_depthwise2d_small_f32(const float *x, const float *w, float *y, float *scratch, int64_t n, int64_t c, int64_t h, int64_t width, int64_t m, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t hp, int64_t wp) {
    gg_v16 *padded = (gg_v16 *)scratch, *acc = padded + hp * wp, *coef = acc + oh * ow;
    int64_t planes = n * c * m, taps = kh * kw;
    for (int64_t i = 0; i < hp * wp * 16; i++) scratch[i] = 0.0f;  /* the border stays zero */
    for (int64_t first = 0; first < planes; first += 16) {
        int64_t lanes = planes - first < 16 ? planes - first : 16;
        float *pad = scratch, *k = (float *)coef;
        for (int64_t l = 0; l < lanes; l++) {
            int64_t plane = first + l, sample = plane / (c * m), channel = plane % (c * m);
            const float *xp = x + (sample * c + channel / m) * h * width;
            for (int64_t r = 0; r < h; r++)
                for (int64_t q = 0; q < width; q++)
                    pad[((r + ph) * wp + q + pw) * 16 + l] = xp[r * width + q];
            for (int64_t t = 0; t < taps; t++) k[t * 16 + l] = w[channel * taps + t];
        }
        const int undilated = dh == 1 && dw == 1;
        if (undilated && kh == 3 && kw == 3) small_taps_3x3(padded, coef, acc, oh, ow, wp, sh, sw);
        else if (undilated && kh == 5 && kw == 5) small_taps_5x5(padded, coef, acc, oh, ow, wp, sh, sw);
        else for (int64_t r = 0; r < oh; r++) {
            for (int64_t q = 0; q < ow; q++) {
                gg_v16 sum = {0};
                for (int64_t i = 0; i < kh; i++) {
                    const gg_v16 *src = padded + (r * sh + i * dh) * wp + q * sw;
                    const gg_v16 *kr = coef + i * kw;
                    for (int64_t j = 0; j < kw; j++) sum += kr[j] * src[j * dw];
                }
                acc[r * ow + q] = sum;
            }
        }
        const float *out = (const float *)acc;
        for (int64_t l = 0; l < lanes; l++) {
            float *yp = y + (first + l) * oh * ow;
            for (int64_t p = 0; p < oh * ow; p++) yp[p] = out[p * 16 + l];
        }
    }
}
