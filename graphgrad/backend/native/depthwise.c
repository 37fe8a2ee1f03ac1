/* Depthwise 2-D convolution (one input channel per group, M filters per channel), float32, NCHW:
 * y[n, c*M + m, oh, ow] = sum over (kh, kw) of w[c*M + m, kh, kw] * x[n, c, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw]
 * (zero outside the input). Each output row is summed in place over the kernel offsets that reach
 * inside the input; the inner loop runs along the output row. With a stride sw > 1 along rows, each
 * input plane is first split into sw phases per row (phase p holds columns p, p + sw, ...), so that
 * the inner loop still reads consecutive floats: column q*sw + off is element q + floor(off / sw) of
 * phase off mod sw. `scratch` holds one plane's phases: h * sw * ceil(width / sw) floats. */
#include "gg_native.h"

static inline int64_t first_inside(int64_t offset, int64_t stride) {
    /* the first o >= 0 with o * stride + offset >= 0 */
    return offset >= 0 ? 0 : (-offset + stride - 1) / stride;
}

static inline int64_t end_inside(int64_t offset, int64_t stride, int64_t size, int64_t out) {
    /* one past the last o < out with o * stride + offset < size */
    int64_t end = offset >= size ? 0 : (size - 1 - offset) / stride + 1;
    return end < out ? end : out;
}

static inline int64_t floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

GG_EXPORT void gg_depthwise2d_f32(const float *x, const float *w, float *y, float *scratch, int64_t n, int64_t c, int64_t h, int64_t width, int64_t m, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
    int64_t phase_len = (width + sw - 1) / sw, row_len = phase_len * sw;
    const float *planes = NULL;
    int64_t loaded = -1;  /* which input plane scratch holds */
    for (int64_t plane = 0; plane < n * c * m; plane++) {
        int64_t sample = plane / (c * m), channel = plane % (c * m);
        int64_t source = sample * c + channel / m;
        const float *xp = x + source * h * width;
        if (sw > 1 && source != loaded) {
            for (int64_t r = 0; r < h; r++)
                for (int64_t p = 0; p < sw; p++)
                    for (int64_t q = 0; q < phase_len; q++) {
                        int64_t col = q * sw + p;
                        scratch[r * row_len + p * phase_len + q] = col < width ? xp[r * width + col] : 0.0f;
                    }
            loaded = source;
        }
        planes = sw > 1 ? scratch : xp;
        int64_t stride_row = sw > 1 ? row_len : width;
        const float *wp = w + channel * kh * kw;
        float *yp = y + plane * oh * ow;
        for (int64_t r = 0; r < oh; r++) {
            float *row = yp + r * ow;
            for (int64_t q = 0; q < ow; q++) row[q] = 0.0f;
            for (int64_t i = 0; i < kh; i++) {
                int64_t in_row = r * sh + i * dh - ph;
                if (in_row < 0 || in_row >= h) continue;
                const float *xr = planes + in_row * stride_row;
                for (int64_t j = 0; j < kw; j++) {
                    int64_t offset = j * dw - pw;
                    int64_t lo = first_inside(offset, sw), hi = end_inside(offset, sw, width, ow);
                    int64_t base = floor_div(offset, sw), phase = offset - base * sw;
                    const float *src = xr + phase * phase_len + base;  /* column q*sw + offset = src[q] */
                    float coef = wp[i * kw + j];
                    for (int64_t q = lo; q < hi; q++) row[q] += coef * src[q];
                }
            }
        }
    }
}

/* The same convolution for small maps (short output rows, where a row-wise inner loop is too short
 * to vectorize): 16 planes at a time, interleaved in `scratch` as a zero-padded [hp][wp] block of
 * 16-float vectors, so that every multiply-add works on 16 planes at once; results are gathered in
 * [oh*ow] vectors and then written back plane by plane. `scratch` holds (hp*wp + oh*ow + kh*kw) * 16
 * floats, 64-byte aligned is not required, with hp = h + ph + pb and wp = width + pw + pr (the padded
 * size; pb, pr the bottom/right padding). */
typedef float gg_v16 __attribute__((vector_size(64), aligned(4)));

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
        for (int64_t r = 0; r < oh; r++) {
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
