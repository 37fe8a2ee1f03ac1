/* Direct 2-D convolution (any kernel, padding and dilation, one group), float32, NCHW, with no im2col
 * copy and the work split over threads: stride 1 (forward, weight gradient, and the transposed
 * convolution as a forward), and strided forwards (make_strided_geometry).
 *
 * The trick: copy each sample into a zero-padded buffer whose rows are Wp = w + pad_left + pad_right
 * floats long, and number the outputs in that same row length, q = oy * Wp + ox. Output q then reads
 * input q + ky*dh*Wp + kx*dw for kernel offset (ky, kx): for every offset, consecutive outputs read
 * consecutive inputs, so one vector load feeds 16 outputs, and the loops are a stack of small dense
 * products with no gathering. The ow..Wp-1 columns of each output row are computed and dropped (the
 * price: Wp / ow more arithmetic, 16/14 for a 14-wide 'same' 3x3 convolution).
 *
 *   forward:      y[n, o, q]  = sum over (c, k) of  w[o, c, k] * xpad[n, c, q + off[k]]
 *   weight grad:  gw[o, c, k] = sum over (n, q) of gy[n, o, q] * xpad[n, c, q + off[k]]
 *                 (gy put in the padded row length, zeros in the dropped columns)
 *   input grad:   a forward convolution of gy by the flipped, transposed weight (ops/conv.py).
 *
 * Register blocking: the forward keeps 8 output channels x 48 positions in 24 vector accumulators,
 * loading 3 input vectors and 8 weights per (c, k); the weight gradient keeps 2 output channels x 9
 * offsets (18 accumulators) over runs of 16 positions. Vectors are GCC/Clang vector types (16 floats:
 * one AVX-512 register, two AVX ones), contracted to fused multiply-adds. */
#pragma GCC optimize("fp-contract=fast")
#include "gg_native.h"
#include <stdlib.h>

typedef float v16 __attribute__((vector_size(64)));
#define LANES 16
#define FWD_CO 8        /* output channels per (widest) forward block */
#define MAX_Q 192       /* positions per forward block, at most (12 vectors) */

#define UNROLL _Pragma("GCC unroll 32")  /* whole register blocks: the accumulators stay in registers */

static inline v16 load16(const float *p) { v16 v; memcpy(&v, p, sizeof v); return v; }
static inline void store16(float *p, v16 v) { memcpy(p, &v, sizeof v); }
static inline int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }
/* A short row copy, inlined (a memcpy call per 14-float row costs more than the copy). */
static inline void copy_row(float *restrict dst, const float *restrict src, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = src[i];
}

typedef struct {
    int64_t n, c, h, w, co, kh, kw, pt, pl, dh, dw, sh, sw;
    int64_t hp, wp, oh, ow, kk;
    int64_t q, qr;      /* outputs in padded rows (oh * wp); qr: room for any block's last run past q */
    int64_t ps;         /* floats per padded input plane (room for the last block's reads) */
    int64_t off[64];    /* kernel offsets in the padded plane (kk <= 64) */
    int64_t phase_len;  /* strided ("by rows"): the length of a padded row's phases; else 0 */
} geometry;

static int make_geometry(geometry *g, int64_t n, int64_t c, int64_t h, int64_t w, int64_t co, int64_t kh,
                         int64_t kw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw) {
    g->n = n; g->c = c; g->h = h; g->w = w; g->co = co; g->kh = kh; g->kw = kw;
    g->pt = pt; g->pl = pl; g->dh = dh; g->dw = dw; g->sh = 1; g->sw = 1; g->phase_len = 0;
    g->hp = h + pt + pb;
    g->wp = w + pl + pr;
    g->oh = g->hp - dh * (kh - 1);
    g->ow = g->wp - dw * (kw - 1);
    g->kk = kh * kw;
    if (g->kk > 64 || g->oh <= 0 || g->ow <= 0) return 0;
    for (int64_t a = 0; a < kh; a++)
        for (int64_t b = 0; b < kw; b++) g->off[a * kw + b] = a * dh * g->wp + b * dw;
    g->q = g->oh * g->wp;
    g->qr = round_up(g->q + MAX_Q, LANES);
    int64_t reach = g->qr + g->off[g->kk - 1];
    g->ps = round_up(reach > g->hp * g->wp ? reach : g->hp * g->wp, LANES);
    return 1;
}

/* The strided forward ("by rows"): the padded plane keeps the rows any output reads, each split into
 * sw phases (phase p holds padded columns p, p + sw, ...; see gg_split_row), so that along an output
 * row every kernel offset still reads consecutive floats. Outputs go one row at a time: q numbers
 * the ow outputs of a row, and the row's kernel offsets are ky dh rows plus a phase and a shift. */
static int make_strided_geometry(geometry *g, int64_t n, int64_t c, int64_t h, int64_t w, int64_t co, int64_t kh,
                                 int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                                 int64_t dh, int64_t dw) {
    g->n = n; g->c = c; g->h = h; g->w = w; g->co = co; g->kh = kh; g->kw = kw;
    g->pt = pt; g->pl = pl; g->dh = dh; g->dw = dw; g->sh = sh; g->sw = sw;
    g->oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
    g->ow = (w + pl + pr - dw * (kw - 1) - 1) / sw + 1;
    g->kk = kh * kw;
    if (g->kk > 64 || h + pt + pb - dh * (kh - 1) <= 0 || w + pl + pr - dw * (kw - 1) <= 0) return 0;
    g->hp = (g->oh - 1) * sh + (kh - 1) * dh + 1;                 /* rows read */
    const int64_t cols = (g->ow - 1) * sw + (kw - 1) * dw + 1;    /* padded columns read */
    g->phase_len = (cols + sw - 1) / sw + MAX_Q;                  /* (room for a block's last run) */
    g->wp = sw * g->phase_len;                                    /* a padded row, all its phases */
    for (int64_t a = 0; a < kh; a++)
        for (int64_t b = 0; b < kw; b++)
            g->off[a * kw + b] = a * dh * g->wp + ((b * dw) % sw) * g->phase_len + (b * dw) / sw;
    g->q = g->ow;
    g->qr = round_up(g->q + MAX_Q, LANES);
    g->ps = g->hp * g->wp;
    return 1;
}

/* Sample s of x into the padded planes (whose borders stay zero from the first fill). */
static void pad_sample(const geometry *g, const float *x, float *xpad) {
    for (int64_t c = 0; c < g->c; c++) {
        const float *src = x + c * g->h * g->w;
        if (g->phase_len) {  /* strided: rows and columns past the reach are not read */
            const int64_t cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1 - g->pl;
            for (int64_t i = 0; i < g->h && i + g->pt < g->hp; i++)
                gg_split_row(xpad + c * g->ps + (i + g->pt) * g->wp, g->phase_len, src + i * g->w,
                             g->w < cols ? g->w : cols, g->pl, g->sw);
            continue;
        }
        float *dst = xpad + c * g->ps + g->pt * g->wp + g->pl;
        for (int64_t i = 0; i < g->h; i++) copy_row(dst + i * g->wp, src + i * g->w, g->w);
    }
}

/* ---- forward ------------------------------------------------------------------------------------ */
/* wpack: per block of CB output channels, (c, kk, CB) weights. yf: (CB, qr) outputs in padded rows.
 * CB channels x QV vectors of positions: CB * QV accumulators and QV input vectors in registers; blocks
 * of fewer channels take more positions, to keep enough independent sums in flight. */
#define FORWARD_BLOCK(NAME, CB, QV)                                                                      \
static void NAME(const geometry *g, const float *xpad, const float *wpack, float *yf) {                 \
    const int64_t kk = g->kk;                                                                            \
    for (int64_t q = 0; q < g->q; q += QV * LANES) {                                                     \
        v16 acc[CB][QV];                                                                                 \
        UNROLL for (int b = 0; b < CB; b++)                                                              \
            UNROLL for (int j = 0; j < QV; j++) acc[b][j] = (v16){0};                                    \
        for (int64_t c = 0; c < g->c; c++) {                                                             \
            const float *xc = xpad + c * g->ps + q;                                                      \
            const float *wc = wpack + c * kk * CB;                                                       \
            for (int64_t k = 0; k < kk; k++) {                                                           \
                const float *xr = xc + g->off[k];                                                        \
                v16 xv[QV];                                                                              \
                UNROLL for (int j = 0; j < QV; j++) xv[j] = load16(xr + j * LANES);                      \
                UNROLL for (int b = 0; b < CB; b++) {                                                    \
                    float s = wc[k * CB + b];                                                            \
                    UNROLL for (int j = 0; j < QV; j++) acc[b][j] += xv[j] * s;                          \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
        UNROLL for (int b = 0; b < CB; b++)                                                              \
            UNROLL for (int j = 0; j < QV; j++) store16(yf + b * g->qr + q + j * LANES, acc[b][j]);      \
    }                                                                                                    \
}
FORWARD_BLOCK(forward_8x3, 8, 3)
FORWARD_BLOCK(forward_4x5, 4, 5)
FORWARD_BLOCK(forward_2x8, 2, 8)
FORWARD_BLOCK(forward_1x12, 1, 12)

/* The output channels of the forward block at o: 8 while 8 are left, else 4, 2, 1. */
static int64_t forward_width(int64_t co, int64_t o) {
    int64_t left = co - o;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

typedef struct {
    const geometry *g;
    const float *x, *wpack;
    float *y;
    float *xpad[GG_MAX_WORKERS], *yf[GG_MAX_WORKERS];  /* per worker: padded sample, block outputs */
} forward_task;

static void forward_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const forward_task *t = (const forward_task *)p;
    const geometry *g = t->g;
    float *xpad = t->xpad[worker], *yf = t->yf[worker];
    (void)chunk;
    for (int64_t s = first; s < stop; s++) {
        pad_sample(g, t->x + s * g->c * g->h * g->w, xpad);
        float *ys = t->y + s * g->co * g->oh * g->ow;
        for (int64_t o = 0, cb; o < g->co; o += cb) {
            cb = forward_width(g->co, o);
            const float *wb = t->wpack + o * g->c * g->kk;
            const int64_t rows = g->phase_len ? g->oh : 1;      /* strided: one output row per pass */
            for (int64_t i = 0; i < rows; i++) {
                const float *xr = xpad + (g->phase_len ? i * g->sh * g->wp : 0);
                if (cb == 8) forward_8x3(g, xr, wb, yf);
                else if (cb == 4) forward_4x5(g, xr, wb, yf);
                else if (cb == 2) forward_2x8(g, xr, wb, yf);
                else forward_1x12(g, xr, wb, yf);
                if (g->phase_len) {
                    for (int64_t b = 0; b < cb; b++) copy_row(ys + ((o + b) * g->oh + i) * g->ow, yf + b * g->qr, g->ow);
                    continue;
                }
                for (int64_t b = 0; b < cb; b++)
                    for (int64_t r = 0; r < g->oh; r++)
                        copy_row(ys + ((o + b) * g->oh + r) * g->ow, yf + b * g->qr + r * g->wp, g->ow);
            }
        }
    }
}

/* Per-worker buffers: `count` zeroed floats each (freed by free_all); 0 when memory ran out. */
static int alloc_all(float **buffers, int64_t workers, int64_t count) {
    int ok = 1;
    for (int64_t w = 0; w < workers; w++) {
        buffers[w] = calloc((size_t)count, sizeof(float));
        ok = ok && buffers[w] != NULL;
    }
    return ok;
}

static void free_all(float **buffers, int64_t workers) {
    for (int64_t w = 0; w < workers; w++) free(buffers[w]);
}

/* y (n, co, oh, ow) = the convolution of x (n, c, h, w) by weight (co, c, kh, kw), strided by sh/sw,
 * padded by pt/pl/pb/pr zeros, dilated by dh/dw; threads: how many threads to split the samples over.
 * ok[0] = 1 when done, 0 when the geometry is out of this kernel's range or memory ran out (y is then
 * unspecified and the caller takes its other path). */
GG_EXPORT void gg_conv2d_direct_f32(const float *x, const float *weight, float *y, int64_t n, int64_t c, int64_t h,
                                    int64_t w, int64_t co, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt,
                                    int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw, int64_t threads,
                                    int64_t *ok) {
    geometry g;
    ok[0] = 0;
    if (sh == 1 && sw == 1 ? !make_geometry(&g, n, c, h, w, co, kh, kw, pt, pl, pb, pr, dh, dw)
                           : !make_strided_geometry(&g, n, c, h, w, co, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw))
        return;
    const int64_t chunk = gg_chunk(n, 1);
    int64_t workers = (n + chunk - 1) / chunk;
    workers = workers < threads ? workers : threads;
    workers = workers < 1 ? 1 : workers > GG_MAX_WORKERS ? GG_MAX_WORKERS : workers;
    forward_task t = {&g, x, NULL, y, {0}, {0}};
    float *wpack = malloc((size_t)(co * c * g.kk) * sizeof(float));
    int ready = wpack != NULL && alloc_all(t.xpad, workers, g.c * g.ps) && alloc_all(t.yf, workers, FWD_CO * g.qr);
    if (ready) {
        for (int64_t o0 = 0, cb; o0 < co; o0 += cb) {  /* each block (o0..o0+cb) as (c, kk, cb) */
            cb = forward_width(co, o0);
            for (int64_t o = o0; o < o0 + cb; o++)
                for (int64_t ci = 0; ci < c; ci++)
                    for (int64_t k = 0; k < g.kk; k++)
                        wpack[o0 * c * g.kk + (ci * g.kk + k) * cb + (o - o0)] = weight[(o * c + ci) * g.kk + k];
        }
        t.wpack = wpack;
        gg_parallel(forward_part, &t, n, chunk, workers);
    }
    free(wpack);
    free_all(t.xpad, workers);
    free_all(t.yf, workers);
    ok[0] = ready;
}

/* ---- weight gradient ---------------------------------------------------------------------------- */
/* The gradient as a product over positions: gw^T (c*kk, co) = sum over p of x's column p (one value per
 * (c, k): xpad[c, q(p) + off[k]]) times gy's row p (co values, vectors of 16 channels). Per sample, gy
 * is first transposed to gyt (oh*ow, cv*16), zero beyond co; the accumulators stay in registers over
 * every position of a sample, so no horizontal sums: acc (c*kk, cv*16) adds each sample's block. */
#define WEIGHT_BLOCK(NAME, OV, JB, RUN)                                                                  \
static void NAME(const geometry *g, const float *xpad, const float *gyt, int64_t cv, const int64_t *colofs, \
                 int64_t j0, int64_t v0, float *acc) {                                                   \
    v16 a[OV][JB];                                                                                       \
    const float *xs[JB / RUN];                                                                           \
    for (int j = 0; j < JB / RUN; j++) xs[j] = xpad + colofs[j0 + j * RUN];                              \
    for (int j = 0; j < JB; j++)                                                                         \
        for (int v = 0; v < OV; v++) a[v][j] = (v16){0};                                                 \
    const float *gp = gyt + v0 * LANES;                                                                  \
    for (int64_t i = 0; i < g->oh; i++) {                                                                \
        const int64_t row = i * g->wp;                                                                   \
        for (int64_t x = 0; x < g->ow; x++, gp += cv * LANES) {                                          \
            v16 gv[OV];                                                                                  \
            for (int v = 0; v < OV; v++) gv[v] = load16(gp + v * LANES);                                 \
            UNROLL for (int j = 0; j < JB; j++) {                                                        \
                float s = xs[j / RUN][row + x + j % RUN];                                                \
                UNROLL for (int v = 0; v < OV; v++) a[v][j] += gv[v] * s;                                       \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    for (int j = 0; j < JB; j++)                                                                         \
        for (int v = 0; v < OV; v++) {                                                                   \
            float *ap = acc + (j0 + j) * cv * LANES + (v0 + v) * LANES;                                  \
            store16(ap, load16(ap) + a[v][j]);                                                           \
        }                                                                                                \
}
/* RUN 3: columns in threes (c, a, b = 0..2) of a kernel 3 wide, undilated along rows, read through one
 * pointer each (more pointers than registers made the blocks slow); RUN 1: any kernel. */
WEIGHT_BLOCK(weight_2x12_run3, 2, 12, 3)
WEIGHT_BLOCK(weight_2x3_run3, 2, 3, 3)
WEIGHT_BLOCK(weight_1x24_run3, 1, 24, 3)
WEIGHT_BLOCK(weight_1x12_run3, 1, 12, 3)
WEIGHT_BLOCK(weight_1x3_run3, 1, 3, 3)
WEIGHT_BLOCK(weight_2x4, 2, 4, 1)
WEIGHT_BLOCK(weight_1x8, 1, 8, 1)
WEIGHT_BLOCK(weight_2x1, 2, 1, 1)
WEIGHT_BLOCK(weight_1x1, 1, 1, 1)

typedef void (*weight_block)(const geometry *, const float *, const float *, int64_t, const int64_t *, int64_t,
                             int64_t, float *);

/* The widest block of ov vectors that fits the columns left from j. */
static int64_t pick_block(const geometry *g, int64_t ov, int64_t left, weight_block *fn) {
    static const struct { int64_t ov, jb, run; weight_block fn; } blocks[] = {
        {2, 12, 3, weight_2x12_run3}, {2, 3, 3, weight_2x3_run3}, {2, 4, 1, weight_2x4}, {2, 1, 1, weight_2x1},
        {1, 24, 3, weight_1x24_run3}, {1, 12, 3, weight_1x12_run3}, {1, 3, 3, weight_1x3_run3},
        {1, 8, 1, weight_1x8}, {1, 1, 1, weight_1x1}};
    int runs = g->kw == 3 && g->dw == 1;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        if (blocks[b].ov == ov && blocks[b].jb <= left && (blocks[b].run == 1 || runs)) {
            *fn = blocks[b].fn;
            return blocks[b].jb;
        }
    return 0;  /* (unreachable: the 1-column blocks always fit) */
}

typedef struct {
    const geometry *g;
    const float *x, *gy;
    const int64_t *colofs;
    int64_t cv;
    float *xpad[GG_MAX_WORKERS], *gyt[GG_MAX_WORKERS];  /* per worker: padded sample, transposed gy */
    float *acc;         /* per chunk: (c*kk, cv*16) partial sums, added in chunk order at the end */
} weight_task;

static void weight_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const weight_task *t = (const weight_task *)p;
    const geometry *g = t->g;
    const int64_t cv = t->cv, cols = g->c * g->kk, positions = g->oh * g->ow;
    float *xpad = t->xpad[worker], *gyt = t->gyt[worker], *acc = t->acc + chunk * cols * cv * LANES;
    for (int64_t s = first; s < stop; s++) {
        pad_sample(g, t->x + s * g->c * g->h * g->w, xpad);
        const float *gys = t->gy + s * g->co * positions;
        gg_transpose(gys, g->co, positions, positions, gyt, cv * LANES);  /* (lanes past co stay zero) */
        for (int64_t v = 0; v < cv; ) {
            int64_t ov = cv - v >= 2 ? 2 : 1;
            for (int64_t j = 0, jb; j < cols; j += jb) {
                weight_block fn;
                jb = pick_block(g, ov, cols - j, &fn);
                fn(g, xpad, gyt, cv, t->colofs, j, v, acc);
            }
            v += ov;
        }
    }
}

/* gw (co, c, kh, kw) = the weight gradient of a stride-1 gg_conv2d_direct_f32 for output gradient gy (n, co, oh, ow);
 * ok[0] as there. */
GG_EXPORT void gg_conv2d_s1_weight_grad_f32(const float *x, const float *gy, float *gw, int64_t n, int64_t c,
                                            int64_t h, int64_t w, int64_t co, int64_t kh, int64_t kw, int64_t pt,
                                            int64_t pl, int64_t pb, int64_t pr, int64_t dh, int64_t dw,
                                            int64_t threads, int64_t *ok) {
    geometry g;
    ok[0] = 0;
    if (!make_geometry(&g, n, c, h, w, co, kh, kw, pt, pl, pb, pr, dh, dw)) return;
    const int64_t cols = c * g.kk, cv = (co + LANES - 1) / LANES;
    const int64_t chunk = gg_chunk(n, 1), chunks = (n + chunk - 1) / chunk;
    int64_t workers = chunks < threads ? chunks : threads;
    workers = workers < 1 ? 1 : workers > GG_MAX_WORKERS ? GG_MAX_WORKERS : workers;
    weight_task t = {&g, x, gy, NULL, cv, {0}, {0}, NULL};
    int64_t *colofs = malloc((size_t)cols * sizeof(int64_t));
    t.acc = calloc((size_t)((chunks > 0 ? chunks : 1) * cols * cv * LANES), sizeof(float));
    int ready = colofs != NULL && t.acc != NULL && alloc_all(t.xpad, workers, g.c * g.ps)
        && alloc_all(t.gyt, workers, g.oh * g.ow * cv * LANES);
    if (ready) {
        for (int64_t j = 0; j < cols; j++) colofs[j] = (j / g.kk) * g.ps + g.off[j % g.kk];
        t.colofs = colofs;
        gg_parallel(weight_part, &t, n, chunk, workers);
        for (int64_t o = 0; o < co; o++)
            for (int64_t j = 0; j < cols; j++) {
                float total = 0.0f;
                for (int64_t k = 0; k < chunks; k++) total += t.acc[(k * cols + j) * cv * LANES + o];
                gw[o * cols + j] = total;
            }
    }
    free(colofs);
    free(t.acc);
    free_all(t.xpad, workers);
    free_all(t.gyt, workers);
    ok[0] = ready;
}
