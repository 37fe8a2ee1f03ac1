/* 2-D max pooling and the window copies of 2-D convolution (float32, NCHW), one pass each.
 *
 * Max pooling: a plane is (H, W), there are `planes` = N*C of them; windows start at o*s - p and take
 * every d-th element, k of them per axis, padding excluded (it counts as -inf in the NumPy path, so
 * it never wins). The maximum is found by a scan in row-major window order that moves on a strictly
 * greater value or on a NaN: the value is NumPy's xp.maximum reduction (NaN propagates) and the
 * position the first maximum (the last NaN), as ops/pool.py's MaxPoolIndices and PyTorch. The
 * backward recomputes that position from x (one read of x, cheaper than caching an index) and adds
 * g there. Kernel 2, stride 2, no padding (the usual CNN pooling) has its own branch-free loops;
 * other windows go one output row at a time (window_row).
 *
 * Convolution: see the comment above gg_im2col2d_f32. */
#include "gg_native.h"

/* The scan's step: take v when it is greater than the best so far, or NaN. */
#define GG_TAKES(v, best) (((v) > (best)) | ((v) != (v)))

/* Output positions o in [lo, hi) whose window o*s - p + j*d (j < k) lies wholly inside [0, n). */
static void inner_range(int64_t n, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d,
                        int64_t *lo, int64_t *hi) {
    int64_t a = (p + s - 1) / s;                         /* o*s - p >= 0 */
    int64_t last = n - 1 + p - (k - 1) * d;              /* o*s <= last */
    int64_t b = last < 0 ? 0 : last / s + 1;
    a = a > out ? out : a;
    b = b > out ? out : b;
    *lo = a;
    *hi = b < a ? a : b;
}

/* The flat position (within the plane) of the window's maximum, -1 for a window of padding only;
 * *best gets its value (-inf for padding only). The general case: bounds checked per element. */
static inline int64_t window_argmax(const float *x, int64_t h, int64_t w, int64_t i0, int64_t j0,
                                    int64_t kh, int64_t kw, int64_t dh, int64_t dw, float *best) {
    int64_t at = -1;
    float m = -INFINITY;
    for (int64_t a = 0; a < kh; a++) {
        int64_t i = i0 + a * dh;
        if (i < 0 || i >= h) continue;
        for (int64_t b = 0; b < kw; b++) {
            int64_t j = j0 + b * dw;
            if (j < 0 || j >= w) continue;
            float v = x[i * w + j];
            int take = at < 0 || GG_TAKES(v, m);
            m = take ? v : m;
            at = take ? i * w + j : at;
        }
    }
    *best = m;
    return at;
}

/* Kernel 2, stride 2, no padding or dilation, windows (a b / c d): done in chunks of whole row pairs
 * so that every loop is long and contiguous (rows of 7 or 14 windows would leave the vector loops
 * to their scalar remainders): a vertical pass (a vs c, b vs d) over the row pairs into a buffer of
 * 2*ow columns per pair, whose column pairs are then exactly the windows (a flat horizontal pass).
 * Selections are bit masks, not ternaries: gcc makes branches of those in scalar code, and branches
 * on data mispredict. */
#define GG_POOL_BUF 1024

static inline uint32_t f2u(float v) { uint32_t u; memcpy(&u, &v, sizeof u); return u; }
static inline float u2f(uint32_t u) { float v; memcpy(&v, &u, sizeof v); return v; }
static inline uint32_t takes_mask(float v, float best) { return -(uint32_t)GG_TAKES(v, best); }
static inline float pick(uint32_t mask, float yes, float no) { return u2f((f2u(yes) & mask) | (f2u(no) & ~mask)); }

/* y (rows, ow) = the maxima of the 2x2 windows of rows (2*rows, w >= 2*ow) of x. */
static void max2x2(const float *restrict x, float *restrict y, int64_t rows, int64_t w, int64_t ow) {
    float v[GG_POOL_BUF];
    int64_t cols = 2 * ow, chunk = GG_POOL_BUF / cols;
    for (int64_t k0 = 0; k0 < rows; k0 += chunk) {
        int64_t n = rows - k0 < chunk ? rows - k0 : chunk;
        for (int64_t k = 0; k < n; k++) {
            const float *r0 = x + 2 * (k0 + k) * w, *r1 = r0 + w;
            float *vk = v + k * cols;
            for (int64_t c = 0; c < cols; c++) vk[c] = pick(takes_mask(r1[c], r0[c]), r1[c], r0[c]);
        }
        float *yk = y + k0 * ow;
        for (int64_t t = 0; t < n * ow; t++) yk[t] = pick(takes_mask(v[2 * t + 1], v[2 * t]), v[2 * t + 1], v[2 * t]);
    }
}

/* gx (2*rows, w) = g (rows, ow) at the first maximum (the last NaN) of each window, zero elsewhere.
 * The scan a, b, c, d from the column winners L (a or c) and R (b or d): R wins when greater, or
 * when NaN and L is not; on a tie of equal values L wins (it holds a, or else c after b... unless
 * R holds b and L holds c: b comes first); on two NaNs R wins (the later one) except in that case. */
static void max2x2_backward(const float *restrict x, const float *restrict g, float *restrict gx, int64_t rows,
                            int64_t w, int64_t ow) {
    float v[GG_POOL_BUF], share[GG_POOL_BUF];
    uint32_t low[GG_POOL_BUF];  /* all ones where the lower row wins its column pair */
    int64_t cols = 2 * ow, chunk = GG_POOL_BUF / cols;
    for (int64_t k0 = 0; k0 < rows; k0 += chunk) {
        int64_t n = rows - k0 < chunk ? rows - k0 : chunk;
        for (int64_t k = 0; k < n; k++) {
            const float *r0 = x + 2 * (k0 + k) * w, *r1 = r0 + w;
            for (int64_t c = 0; c < cols; c++) {
                uint32_t t = takes_mask(r1[c], r0[c]);
                low[k * cols + c] = t;
                v[k * cols + c] = pick(t, r1[c], r0[c]);
            }
        }
        const float *gk = g + k0 * ow;
        for (int64_t t = 0; t < n * ow; t++) {  /* share: g on the winning column of each window */
            float l = v[2 * t], r = v[2 * t + 1];
            uint32_t cross = low[2 * t] & ~low[2 * t + 1];  /* L holds c, R holds b */
            uint32_t nl = -(uint32_t)(l != l), nr = -(uint32_t)(r != r);
            uint32_t right = -(uint32_t)(r > l) | (-(uint32_t)(r == l) & cross) | (nr & ~nl) | (nr & nl & ~cross);
            uint32_t gv = f2u(gk[t]);
            share[2 * t] = u2f(gv & ~right);
            share[2 * t + 1] = u2f(gv & right);
        }
        for (int64_t k = 0; k < n; k++) {
            float *o0 = gx + 2 * (k0 + k) * w, *o1 = o0 + w;
            for (int64_t c = 0; c < cols; c++) {
                uint32_t s = f2u(share[k * cols + c]), t = low[k * cols + c];
                o0[c] = u2f(s & ~t);
                o1[c] = u2f(s & t);
            }
            for (int64_t c = cols; c < w; c++) o0[c] = o1[c] = 0.0f;
        }
    }
}

/* Any kernel, stride, padding, dilation: one output row at a time. Its windows inside the plane
 * horizontally are scanned offset by offset over the whole row (a running maximum per window: long,
 * branch-free, vectorizable loops; the offsets in row-major order, so the same scan as
 * window_argmax), the few at the edges by window_argmax. m[j] gets each window's maximum and, when
 * `at` is given, at[j] its flat position in the plane (-1: padding only). ow <= GG_POOL_ROW, and
 * h * w < 2^31 (the caller checks both). */
#define GG_POOL_ROW 4096

static void window_row(const float *restrict xp, int64_t h, int64_t w, int64_t ow, int64_t i0, int64_t kh,
                       int64_t kw, int64_t sw, int64_t pw, int64_t dh, int64_t dw, int64_t jlo, int64_t jhi,
                       float *restrict m, int32_t *restrict at) {
    for (int64_t j = 0; j < ow; j++) {  /* the edges: [0, jlo) and [jhi, ow) */
        if (j == jlo) j = jhi;
        if (j >= ow) break;
        int64_t k = window_argmax(xp, h, w, i0, j * sw - pw, kh, kw, dh, dw, &m[j]);
        if (at) at[j] = (int32_t)k;
    }
    int first = 1;
    for (int64_t a = 0; a < kh; a++) {
        int64_t i = i0 + a * dh;
        if (i < 0 || i >= h) continue;
        for (int64_t b = 0; b < kw; b++) {
            int32_t off = (int32_t)(i * w + b * dw - pw);
            const float *src = xp + off;  /* src[j * sw] lies in the plane for j in [jlo, jhi) */
            if (first) {
                for (int64_t j = jlo; j < jhi; j++) m[j] = src[j * sw];
                if (at)
                    for (int64_t j = jlo; j < jhi; j++) at[j] = off + (int32_t)(j * sw);
            } else if (at) {
                for (int64_t j = jlo; j < jhi; j++) {
                    float v = src[j * sw];
                    uint32_t t = takes_mask(v, m[j]);
                    m[j] = pick(t, v, m[j]);
                    at[j] = (int32_t)(((uint32_t)(off + (int32_t)(j * sw)) & t) | ((uint32_t)at[j] & ~t));
                }
            } else {
                for (int64_t j = jlo; j < jhi; j++) m[j] = pick(takes_mask(src[j * sw], m[j]), src[j * sw], m[j]);
            }
            first = 0;
        }
    }
    for (int64_t j = jlo; first && j < jhi; j++) {  /* a row of padding only (not with PyTorch's limits) */
        m[j] = -INFINITY;
        if (at) at[j] = -1;
    }
}

static int is_2x2(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                  int64_t h, int64_t w, int64_t oh, int64_t ow) {
    return kh == 2 && kw == 2 && sh == 2 && sw == 2 && ph == 0 && pw == 0 && dh == 1 && dw == 1
        && 2 * oh <= h && 2 * ow <= w && 2 * ow <= GG_POOL_BUF;
}

typedef struct {
    const float *x, *g;
    float *y;
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} pool_task;

/* Threads for a pooling of `planes` planes of h x w: none for less than ~64K input floats each. */
static int64_t pool_workers(int64_t planes, int64_t h, int64_t w) {
    return gg_workers(planes * h * w, 1 << 16);
}

static void max_pool_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const pool_task *t = (const pool_task *)p;
    const int64_t h = t->h, w = t->w, oh = t->oh, ow = t->ow;
    int64_t jlo, jhi;
    (void)worker;
    (void)chunk;
    inner_range(w, ow, t->kw, t->sw, t->pw, t->dw, &jlo, &jhi);
    int fast = is_2x2(t->kh, t->kw, t->sh, t->sw, t->ph, t->pw, t->dh, t->dw, h, w, oh, ow);
    if (fast && h == 2 * oh) {  /* the planes' row pairs follow each other: one run over all */
        max2x2(t->x + first * h * w, t->y + first * oh * ow, (stop - first) * oh, w, ow);
        return;
    }
    for (int64_t p = first; p < stop; p++) {
        const float *xp = t->x + p * h * w;
        float *yp = t->y + p * oh * ow;
        if (fast) {
            max2x2(xp, yp, oh, w, ow);
            continue;
        }
        for (int64_t i = 0; i < oh; i++)
            window_row(xp, h, w, ow, i * t->sh - t->ph, t->kh, t->kw, t->sw, t->pw, t->dh, t->dw, jlo, jhi,
                       yp + i * ow, NULL);
    }
}

/* y (planes, oh, ow) = the maximum of each window of x (planes, h, w); planes split over threads. */
GG_EXPORT void gg_max_pool2d_f32(const float *x, float *y, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
    pool_task t = {x, NULL, y, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw};
    gg_parallel(max_pool_part, &t, planes, gg_chunk(planes, 1), pool_workers(planes, h, w));
}

static void max_pool_backward_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const pool_task *t = (const pool_task *)p;
    const int64_t h = t->h, w = t->w, oh = t->oh, ow = t->ow;
    int64_t jlo, jhi;
    (void)worker;
    (void)chunk;
    inner_range(w, ow, t->kw, t->sw, t->pw, t->dw, &jlo, &jhi);
    int fast = is_2x2(t->kh, t->kw, t->sh, t->sw, t->ph, t->pw, t->dh, t->dw, h, w, oh, ow);
    float m[GG_POOL_ROW];
    int32_t at[GG_POOL_ROW];
    if (fast && h == 2 * oh) {
        max2x2_backward(t->x + first * h * w, t->g + first * oh * ow, t->y + first * h * w, (stop - first) * oh, w, ow);
        return;
    }
    for (int64_t p = first; p < stop; p++) {
        const float *xp = t->x + p * h * w, *gp = t->g + p * oh * ow;
        float *gxp = t->y + p * h * w;
        if (fast) {  /* every element of the covered block written once; the rest zeroed */
            max2x2_backward(xp, gp, gxp, oh, w, ow);
            memset(gxp + 2 * oh * w, 0, sizeof(float) * (size_t)((h - 2 * oh) * w));
            continue;
        }
        /* windows in reverse order: overlapping windows then add into an element in the order of
         * their kernel offsets, as the NumPy path (bit-identical sums) */
        memset(gxp, 0, sizeof(float) * (size_t)(h * w));
        for (int64_t i = oh - 1; i >= 0; i--) {
            window_row(xp, h, w, ow, i * t->sh - t->ph, t->kh, t->kw, t->sw, t->pw, t->dh, t->dw, jlo, jhi, m, at);
            for (int64_t j = ow - 1; j >= 0; j--)
                if (at[j] >= 0) gxp[at[j]] += gp[i * ow + j];
        }
    }
}

/* gx (planes, h, w) = g (planes, oh, ow) added at each window's first maximum in x, zero elsewhere;
 * planes split over threads. */
GG_EXPORT void gg_max_pool2d_backward_f32(const float *x, const float *g, float *gx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
    pool_task t = {x, g, gx, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw};
    gg_parallel(max_pool_backward_part, &t, planes, gg_chunk(planes, 1), pool_workers(planes, h, w));
}

/* ---- convolution: im2col and col2im ------------------------------------------------------------------
 * Every window of x (n, c, h, w), zero-padded by ph, pw at the top and left (the bottom and right
 * follow from oh, ow), is copied into a matrix `cols` whose row r = ci * kh * kw + a * kw + b (input
 * channel ci, kernel offset a, b) holds, for sample s, the oh * ow output positions contiguously at
 * cols + s * sn + r * sr: ops/conv.py's per-sample layout (n, c*kh*kw, oh*ow) is sn = c*kh*kw*oh*ow,
 * sr = oh*ow; its whole-batch layout (c*kh*kw, n*oh*ow) is sn = oh*ow, sr = n*oh*ow (groups split the
 * rows only, so both layouts ignore them). Output position (i, j) reads input (i*sh - ph + a*dh,
 * j*sw - pw + b*dw). */

/* The output positions [lo, hi) of a row whose input position o*s + shift lies in [0, n). */
static void valid_range(int64_t n, int64_t out, int64_t s, int64_t shift, int64_t *lo, int64_t *hi) {
    int64_t a = shift >= 0 ? 0 : (-shift + s - 1) / s;
    int64_t b = n - 1 - shift < 0 ? 0 : (n - 1 - shift) / s + 1;
    a = a > out ? out : a;
    b = b > out ? out : b;
    *lo = a;
    *hi = b < a ? a : b;
}

/* Zero the columns outside [jlo, jhi) of rows [ilo, ihi) of a (rows, ow) block. */
static void zero_columns(float *block, int64_t ilo, int64_t ihi, int64_t ow, int64_t jlo, int64_t jhi) {
    for (int64_t i = ilo; i < ihi; i++) {
        for (int64_t j = 0; j < jlo; j++) block[i * ow + j] = 0.0f;
        for (int64_t j = jhi; j < ow; j++) block[i * ow + j] = 0.0f;
    }
}

/* Stride 1 and rows as long as the input's ('same' convolutions): an input row and an output row
 * then differ by a constant flat offset, so a kernel offset's rows are copied (or added) as one
 * long run instead of oh runs of ow (7 to 28 elements: the vector loops' remainders dominated). */
static int flat_rows(int64_t sh, int64_t sw, int64_t w, int64_t ow) {
    return sh == 1 && sw == 1 && ow == w;
}

/* The geometry of a 2-D convolution: input plane (h, w), output plane (oh, ow), kernel, stride,
 * top/left padding, dilation. */
typedef struct {
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    int flat;  /* flat_rows */
} conv_geometry;

static conv_geometry geometry(int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                              int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
    conv_geometry g = {h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, flat_rows(sh, sw, w, ow)};
    return g;
}

/* One row of cols: kernel offset (a, b) of every window of one input plane. */
static void im2col_row(const float *plane, float *row, const conv_geometry *g, int64_t a, int64_t b) {
    int64_t h = g->h, w = g->w, oh = g->oh, ow = g->ow, sw = g->sw;
    int64_t ilo, ihi, jlo, jhi, shift = b * g->dw - g->pw;
    valid_range(h, oh, g->sh, a * g->dh - g->ph, &ilo, &ihi);
    valid_range(w, ow, sw, shift, &jlo, &jhi);
    memset(row, 0, sizeof(float) * (size_t)(ilo * ow));
    if (g->flat && jlo < jhi) {  /* one long copy of the valid rows, then the wrapped columns zeroed */
        int64_t off = (a * g->dh - g->ph) * w + shift;
        int64_t k0 = ilo * ow + (shift < 0 ? -shift : 0), k1 = ihi * ow - (shift > 0 ? shift : 0);
        for (int64_t k = k0; k < k1; k++) row[k] = plane[k + off];
        zero_columns(row, ilo, ihi, ow, jlo, jhi);
    } else {
        for (int64_t i = ilo; i < ihi; i++) {
            const float *src = plane + (i * g->sh + a * g->dh - g->ph) * w + shift;
            float *dst = row + i * ow;
            for (int64_t j = 0; j < jlo; j++) dst[j] = 0.0f;
            if (sw == 1)
                for (int64_t j = jlo; j < jhi; j++) dst[j] = src[j];
            else
                for (int64_t j = jlo; j < jhi; j++) dst[j] = src[j * sw];
            for (int64_t j = jhi > jlo ? jhi : jlo; j < ow; j++) dst[j] = 0.0f;
        }
    }
    memset(row + ihi * ow, 0, sizeof(float) * (size_t)((oh - ihi) * ow));
}

/* cols as described above. Its writes run on in memory: samples are the inner loop in the
 * whole-batch layout (sn < sr: a row holds every sample), the outer one per sample. */
GG_EXPORT void gg_im2col2d_f32(const float *x, float *cols, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t sn, int64_t sr) {
    conv_geometry g = geometry(h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw);
    if (sn < sr) {
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++)
                    for (int64_t s = 0; s < n; s++)
                        im2col_row(x + (s * c + ci) * h * w, cols + s * sn + ((ci * kh + a) * kw + b) * sr, &g, a, b);
        return;
    }
    for (int64_t s = 0; s < n; s++)
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t a = 0; a < kh; a++)
                for (int64_t b = 0; b < kw; b++)
                    im2col_row(x + (s * c + ci) * h * w, cols + s * sn + ((ci * kh + a) * kw + b) * sr, &g, a, b);
}

/* The first kernel offset a * kw + b whose windows cover every input position exactly once (stride
 * 1, the output reaching both edges: the centre of a 'same' convolution), else -1; as ops/conv.py's
 * _col2im picks it. */
static int64_t whole_offset(const conv_geometry *g) {
    for (int64_t a = 0; a < g->kh; a++)
        for (int64_t b = 0; b < g->kw; b++) {
            int64_t si = a * g->dh - g->ph, sj = b * g->dw - g->pw;
            if (g->sh == 1 && g->sw == 1 && si <= 0 && sj <= 0 && g->oh - 1 + si >= g->h - 1 && g->ow - 1 + sj >= g->w - 1)
                return a * g->kw + b;
        }
    return -1;
}

/* A plane's first term: a copy of the whole offset's row (plane[i][j] = row[(i - si) * ow + j - sj]),
 * else zeros. */
static void col2im_start(float *plane, const float *base, const conv_geometry *g, int64_t whole, int64_t sr) {
    int64_t h = g->h, w = g->w;
    if (whole < 0) {
        memset(plane, 0, sizeof(float) * (size_t)(h * w));
        return;
    }
    int64_t si = (whole / g->kw) * g->dh - g->ph, sj = (whole % g->kw) * g->dw - g->pw;
    const float *row = base + whole * sr;
    for (int64_t i = 0; i < h; i++)
        memcpy(plane + i * w, row + (i - si) * g->ow - sj, sizeof(float) * (size_t)w);
}

/* plane += row of kernel offset (a, b), each entry at the input position it was copied from. */
static void col2im_add(float *plane, float *row, const conv_geometry *g, int64_t a, int64_t b) {
    int64_t w = g->w, ow = g->ow, sw = g->sw;
    int64_t ilo, ihi, jlo, jhi, shift = b * g->dw - g->pw;
    valid_range(g->h, g->oh, g->sh, a * g->dh - g->ph, &ilo, &ihi);
    valid_range(w, ow, sw, shift, &jlo, &jhi);
    if (jlo >= jhi)
        return;
    if (g->flat) {
        int64_t off = (a * g->dh - g->ph) * w + shift;
        int64_t k0 = ilo * ow + (shift < 0 ? -shift : 0), k1 = ihi * ow - (shift > 0 ? shift : 0);
        zero_columns(row, ilo, ihi, ow, jlo, jhi);
        for (int64_t k = k0; k < k1; k++) plane[k + off] += row[k];
        return;
    }
    for (int64_t i = ilo; i < ihi; i++) {
        float *dst = plane + (i * g->sh + a * g->dh - g->ph) * w + shift;
        const float *src = row + i * ow;
        if (sw == 1)
            for (int64_t j = jlo; j < jhi; j++) dst[j] += src[j];
        else
            for (int64_t j = jlo; j < jhi; j++) dst[j * sw] += src[j];
    }
}

/* The adjoint: x (n, c, h, w) = the sum of every cols entry at the input position it was copied
 * from (entries on padding are dropped). Per element the terms are added in the NumPy path's order
 * (ops/conv.py's _col2im): first the whole offset (col2im_start), then the others in row-major
 * order, so the sums are bit-identical. As in im2col, samples are the inner loop in the whole-batch
 * layout. `cols` is also scratch: with flat_rows, its entries that fall on padding columns are
 * zeroed (they are added as +0 to a wrapped position). */
GG_EXPORT void gg_col2im2d_f32(float *cols, float *x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t sn, int64_t sr) {
    conv_geometry g = geometry(h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw);
    int64_t whole = whole_offset(&g), kk = kh * kw;
    if (sn < sr) {
        for (int64_t ci = 0; ci < c; ci++) {
            for (int64_t s = 0; s < n; s++)
                col2im_start(x + (s * c + ci) * h * w, cols + s * sn + ci * kk * sr, &g, whole, sr);
            for (int64_t k = 0; k < kk; k++)
                if (k != whole)
                    for (int64_t s = 0; s < n; s++)
                        col2im_add(x + (s * c + ci) * h * w, cols + s * sn + (ci * kk + k) * sr, &g, k / kw, k % kw);
        }
        return;
    }
    for (int64_t s = 0; s < n; s++)
        for (int64_t ci = 0; ci < c; ci++) {
            float *plane = x + (s * c + ci) * h * w;
            col2im_start(plane, cols + s * sn + ci * kk * sr, &g, whole, sr);
            for (int64_t k = 0; k < kk; k++)
                if (k != whole)
                    col2im_add(plane, cols + s * sn + (ci * kk + k) * sr, &g, k / kw, k % kw);
        }
}
