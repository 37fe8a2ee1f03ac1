/* Transformer kernels (float32): GELU and its gradient, layer norm and its gradient, and the softmax
 * passes of attention. Each is one pass over memory where NumPy needs several (see ops/unary.py,
 * ops/nn.py, ops/attention.py, which keep the NumPy paths these must match). */
/* Fused multiply-adds for the polynomials here and in gg_native.h's exp (-std=c99 turns contraction off;
 * on a CPU without FMA this changes nothing). ~1.4x on GELU. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#include "gg_native.h"
#include <stdlib.h>

/* ---- GELU ------------------------------------------------------------------------------------------
 * Exact form: gelu(x) = x Phi(x), Phi(x) = (1 + erf(u)) / 2, u = x / sqrt(2). With erf(u) ~ tanh(u R(u^2))
 * (R the rational of numpy_backend._ERF_TANH_R, fitted on |u| <= 4.1), 1 + tanh(z) = 2 sigmoid(2 z), so
 * Phi(x) = sigmoid(2 u R(u^2)): no 1 + erf cancellation for negative x. R's argument is clipped to
 * 4.1^2 (its fitted range) but u is not, so Phi keeps falling to 0 (and to exactly 0 at -inf). */
static inline float gg_gelu_phi(float x) {
    const float u = x * 0.70710678118654752f;
    float t = u * u;
    t = t > 16.81f ? 16.81f : t;
    float r = 1.453083736503803e-07f;
    r = r * t - 5.726719813304002e-06f;
    r = r * t + 8.796751928228843e-05f;
    r = r * t - 6.205292635586529e-04f;
    r = r * t - 1.9124662403909135e-04f;
    r = r * t + 0.10276899935488447f;
    r = r * t + 1.1283792646810522f;
    return gg_sigmoidf(2.0f * u * r);
}

/* The tanh form: x/2 (1 + tanh(k (x + c x^3))) = x sigmoid(2 k (x + c x^3)). */
#define GG_GELU_K 0.7978845608028654f   /* sqrt(2 / pi) */
#define GG_GELU_C 0.044715f

static void gelu_erf(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * gg_gelu_phi(x[i]);
}

static void gelu_tanh(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        y[i] = v * gg_sigmoidf(2.0f * GG_GELU_K * (v + GG_GELU_C * v * v * v));
    }
}

/* out = g (Phi(x) + x phi(x)), phi the normal density, Phi(x) = y / x from y = gelu(x) (1/2 at x = 0),
 * as NumPy's path does: one division where recomputing Phi costs a second exp (2.5x slower).
 * exp(-x^2/2) is set to 0 where it is below float32's normal range (gg_expf stops at ~1e-38), so
 * x phi(x) is 0 there and NaN at +-inf, as in NumPy's path. */
static void gelu_erf_grad(const float *x, const float *y, const float *g, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        float d = gg_expf(-0.5f * v * v);
        d = v * v > 174.0f ? 0.0f : d;
        const float phi = v != 0.0f ? y[i] / v : 0.5f;
        out[i] = g[i] * (phi + v * d * 0.3989422804014327f);
    }
}

/* out = g gelu'(x) for the tanh form: s + x k (1 + 3 c x^2) 2 s (1 - s), s = sigmoid(2 u), u = k (x + c x^3)
 * (1/cosh(u)^2 = 4 s (1 - s)). With e = exp(-2|u|): s (1 - s) = e / (1 + e)^2 without cancellation, and
 * s = 1 / (1 + e) or e / (1 + e) by the sign of u: one exp. e is 0 where it would underflow, so the
 * slope term is 0 there and NaN at +-inf, as in NumPy's path. */
static void gelu_tanh_grad(const float *x, const float *g, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i], v2 = v * v;
        const float u = GG_GELU_K * (v + GG_GELU_C * v2 * v);
        const float a = fabsf(u);
        float e = gg_expf(-2.0f * a);
        e = a > 43.0f ? 0.0f : e;
        const float inv = 1.0f / (1.0f + e);
        const float s = u >= 0.0f ? inv : e * inv;
        const float ramp = v * GG_GELU_K * (1.0f + 3.0f * GG_GELU_C * v2);
        out[i] = g[i] * (s + 2.0f * ramp * e * inv * inv);
    }
}

/* The four GELU passes split into runs of elements over MKL's OpenMP team (gg_team_workers; each
 * element is computed alike wherever it runs). */
#define GELU_CHUNK 16384
typedef struct { const float *x, *y, *g; float *out; int kind; } gelu_task;

static void gelu_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const gelu_task *t = (const gelu_task *)p;
    const int64_t n = stop - first;
    (void)worker, (void)chunk;
    if (t->kind == 0) gelu_erf(t->x + first, t->out + first, n);
    else if (t->kind == 1) gelu_tanh(t->x + first, t->out + first, n);
    else if (t->kind == 2) gelu_erf_grad(t->x + first, t->y + first, t->g + first, t->out + first, n);
    else gelu_tanh_grad(t->x + first, t->g + first, t->out + first, n);
}

static void gelu_split(gelu_task t, int64_t n) {
    gg_parallel(gelu_part, &t, n, GELU_CHUNK, gg_team_workers(n, GELU_CHUNK * 4));
}

GG_EXPORT void gg_gelu_erf_f32(const float *x, float *y, int64_t n) {
    gelu_split((gelu_task){x, NULL, NULL, y, 0}, n);
}

GG_EXPORT void gg_gelu_tanh_f32(const float *x, float *y, int64_t n) {
    gelu_split((gelu_task){x, NULL, NULL, y, 1}, n);
}

GG_EXPORT void gg_gelu_erf_grad_f32(const float *x, const float *y, const float *g, float *out, int64_t n) {
    gelu_split((gelu_task){x, y, g, out, 2}, n);
}

GG_EXPORT void gg_gelu_tanh_grad_f32(const float *x, const float *g, float *out, int64_t n) {
    gelu_split((gelu_task){x, NULL, g, out, 3}, n);
}

/* ---- layer norm -----------------------------------------------------------------------------------
 * Rows of `size` elements (the normalized axes). Sums go into 16 lanes (then added): a float reduction
 * in one accumulator does not vectorize without -ffast-math, 16 independent ones do. */
#define GG_LANES 16

static inline float gg_lanes_total(const float *acc) {
    float s = 0.0f;
    for (int j = 0; j < GG_LANES; j++) s += acc[j];
    return s;
}

/* mean and 1 / sqrt(var + eps) of one row, var from the centered values (two passes, as NumPy's path). */
static inline void gg_row_moments(const float *x, int64_t size, float eps, float *mean_out, float *rstd_out) {
    const float inv_n = 1.0f / (float)(size > 1 ? size : 1);
    float acc[GG_LANES] = {0.0f};
    int64_t i = 0;
    for (; i + GG_LANES <= size; i += GG_LANES)
        for (int j = 0; j < GG_LANES; j++) acc[j] += x[i + j];
    float s = gg_lanes_total(acc);
    for (; i < size; i++) s += x[i];
    const float mean = s * inv_n;
    float sq[GG_LANES] = {0.0f};
    for (i = 0; i + GG_LANES <= size; i += GG_LANES)
        for (int j = 0; j < GG_LANES; j++) { const float c = x[i + j] - mean; sq[j] += c * c; }
    float v = gg_lanes_total(sq);
    for (; i < size; i++) { const float c = x[i] - mean; v += c * c; }
    *mean_out = mean;
    *rstd_out = 1.0f / sqrtf(v * inv_n + eps);
}

/* y = (x - mean) * rstd [* weight] [+ bias] per row; weight/bias are read only when has_weight/has_bias. */
static void layer_norm_rows(const float *x, const float *weight, const float *bias, float *y, int64_t first,
                            int64_t stop, int64_t size, float eps, int has_weight, int has_bias) {
    for (int64_t r = first; r < stop; r++) {
        const float *xr = x + r * size;
        float *yr = y + r * size;
        float mean, rstd;
        gg_row_moments(xr, size, eps, &mean, &rstd);
        if (has_weight && has_bias)
            for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mean) * rstd * weight[i] + bias[i];
        else if (has_weight)
            for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mean) * rstd * weight[i];
        else if (has_bias)
            for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mean) * rstd + bias[i];
        else
            for (int64_t i = 0; i < size; i++) yr[i] = (xr[i] - mean) * rstd;
    }
}

/* Rows split over MKL's OpenMP team from this many elements a worker (gg_team_workers). */
#define LN_SPLIT_ELEMENTS 65536

typedef struct {
    const float *x, *weight, *bias, *g;
    float *y, *partial;
    int64_t rows, size;
    float eps;
    int has_weight, has_bias;
} layer_norm_task;

static void layer_norm_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const layer_norm_task *t = (const layer_norm_task *)p;
    (void)worker, (void)chunk;
    layer_norm_rows(t->x, t->weight, t->bias, t->y, first, stop, t->size, t->eps, t->has_weight, t->has_bias);
}

GG_EXPORT void gg_layer_norm_f32(const float *x, const float *weight, const float *bias, float *y, int64_t rows, int64_t size, float eps, int has_weight, int has_bias) {
    layer_norm_task t = {x, weight, bias, NULL, y, NULL, rows, size, eps, has_weight, has_bias};
    gg_parallel(layer_norm_part, &t, rows, gg_chunk(rows, 1), gg_team_workers(rows * size, LN_SPLIT_ELEMENTS));
}

/* One row of the layer norm's gradient: dx from x, g (and the weight), and the row's share of dweight
 * and dbias. restrict: the loops vectorize without run-time overlap checks. */
static inline void gg_layer_norm_grad_row(const float *restrict x, const float *restrict weight,
                                          const float *restrict g, float *restrict dx, float *restrict dw,
                                          float *restrict db, int64_t size, float eps, int has_weight) {
    const float inv_n = 1.0f / (float)(size > 1 ? size : 1);
    float mean, rstd;
    gg_row_moments(x, size, eps, &mean, &rstd);
    for (int64_t i = 0; i < size; i++) {       /* xhat, kept in dx; the parameter gradients */
        const float xh = (x[i] - mean) * rstd;
        dx[i] = xh;
        dw[i] += g[i] * xh;
        db[i] += g[i];
    }
    float sg[GG_LANES] = {0.0f}, sgx[GG_LANES] = {0.0f};
    int64_t i = 0;
    for (; i + GG_LANES <= size; i += GG_LANES)
        for (int j = 0; j < GG_LANES; j++) {
            const float gh = has_weight ? g[i + j] * weight[i + j] : g[i + j];
            sg[j] += gh;
            sgx[j] += gh * dx[i + j];
        }
    float mg = gg_lanes_total(sg), mgx = gg_lanes_total(sgx);
    for (; i < size; i++) {
        const float gh = has_weight ? g[i] * weight[i] : g[i];
        mg += gh;
        mgx += gh * dx[i];
    }
    mg *= inv_n;
    mgx *= inv_n;
    for (i = 0; i < size; i++) {
        const float gh = has_weight ? g[i] * weight[i] : g[i];
        dx[i] = ((gh - dx[i] * mgx) - mg) * rstd;
    }
}

/* A chunk of rows of the layer norm's gradient: dx, and the chunk's own sums for dweight and dbias
 * (partial + chunk * 2 * size), added in chunk order afterwards. */
static void layer_norm_grad_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const layer_norm_task *t = (const layer_norm_task *)p;
    const int64_t size = t->size;
    float *dw = t->partial + chunk * 2 * size, *db = dw + size;
    (void)worker;
    for (int64_t i = 0; i < size; i++) { dw[i] = 0.0f; db[i] = 0.0f; }
    for (int64_t r = first; r < stop; r++)
        gg_layer_norm_grad_row(t->x + r * size, t->weight, t->g + r * size, t->y + r * size, dw, db, size, t->eps,
                               t->has_weight);
}

/* All gradients of the layer norm, packed as ops/nn.py LayerNormGrad does: out (rows + 2, size), rows
 * :rows dx, row `rows` dweight = sum_rows g xhat, row rows + 1 dbias = sum_rows g. With gh = g [* weight]:
 * dx = ((gh - xhat mean(gh xhat)) - mean(gh)) rstd, in NumPy's order. Each row is read from memory
 * once; its passes (moments, xhat, sums, dx) run in L1. The rows go in chunks (gg_chunk: the same
 * chunks on any number of threads), each summing its own dweight and dbias, then added in order. */
GG_EXPORT void gg_layer_norm_grad_f32(const float *x, const float *weight, const float *g, float *out, int64_t rows, int64_t size, float eps, int has_weight) {
    float *dw = out + rows * size, *db = dw + size;
    const int64_t chunk = gg_chunk(rows, 1), chunks = rows > 0 ? (rows + chunk - 1) / chunk : 0;
    float *partial = chunks > 1 ? malloc(sizeof(float) * (size_t)(chunks * 2 * size)) : NULL;
    for (int64_t i = 0; i < size; i++) { dw[i] = 0.0f; db[i] = 0.0f; }
    if (partial == NULL) {  /* one chunk (or no memory for more): the rows in order, on this thread */
        for (int64_t r = 0; r < rows; r++)
            gg_layer_norm_grad_row(x + r * size, weight, g + r * size, out + r * size, dw, db, size, eps, has_weight);
        return;
    }
    layer_norm_task t = {x, weight, NULL, g, out, partial, rows, size, eps, has_weight, 0};
    gg_parallel(layer_norm_grad_part, &t, rows, chunk, gg_team_workers(rows * size, LN_SPLIT_ELEMENTS));
    for (int64_t k = 0; k < chunks; k++) {
        const float *pw = partial + k * 2 * size, *pb = pw + size;
        for (int64_t i = 0; i < size; i++) { dw[i] += pw[i]; db[i] += pb[i]; }
    }
    free(partial);
}

/* ---- attention softmax (transposed scores) --------------------------------------------------------
 * ops/attention.py keeps the scores transposed, (S keys, L queries) per block, so the softmax over the
 * keys reduces down the columns: each pass runs along rows, vectorized across the queries, on a block
 * that stays in L1. Columns go in chunks of GG_COLS (the column statistics live on the stack). */
#define GG_COLS 256

/* The passes of softmax_t_block over one row's run of n columns (restrict: vectorized without
 * run-time overlap checks, which short rows cannot afford). */
static inline void scores_row(float *restrict row, const float *restrict mrow, float *restrict top, int64_t n,
                              float scale, int masked, int64_t hidden) {
    for (int64_t l = 0; l < n; l++) {
        float v = row[l] * scale;
        v = masked ? v + mrow[l] : v;
        v = l < hidden ? -INFINITY : v;    /* (causal: queries before the key) */
        row[l] = v;
        top[l] = v > top[l] ? v : top[l];
    }
}

static inline void exp_row(float *restrict row, const float *restrict top, float *restrict total, int64_t n) {
    for (int64_t l = 0; l < n; l++) {
        const float d = row[l] - top[l];
        const float e = d < -87.3f ? 0.0f : gg_expf(d);
        row[l] = e;
        total[l] += e;
    }
}

static inline void scale_row(float *restrict row, const float *restrict by, int64_t n) {
    for (int64_t l = 0; l < n; l++) row[l] *= by[l];
}

/* In place on one block (S, L) of the raw k q^T, rows ld floats apart: softmax over s of (st * scale +
 * mask [- inf where causal hides key s > query l]); mask (S, L), rows mld apart, read when mask_mode.
 * Causal: the whole vectors of a row that are hidden (queries l < s) are set to 0, not computed. */
static void softmax_t_block(float *block, int64_t ld, const float *mblock, int64_t mld, int64_t S, int64_t L,
                            float scale, int mask_mode, int causal) {
    for (int64_t l0 = 0; l0 < L; l0 += GG_COLS) {
        const int64_t cols = L - l0 < GG_COLS ? L - l0 : GG_COLS;
        float top[GG_COLS], total[GG_COLS];
        for (int64_t l = 0; l < cols; l++) { top[l] = -INFINITY; total[l] = 0.0f; }
        for (int64_t s = 0; s < S; s++) {      /* scale, mask, column max */
            const int64_t hidden = causal ? (s - l0 < 0 ? 0 : s - l0 > cols ? cols : s - l0) : 0;
            const int64_t first = hidden / 16 * 16;  /* (whole vectors skipped: no scalar loop ends) */
            float *row = block + s * ld + l0;
            scores_row(row + first, mask_mode ? mblock + s * mld + l0 + first : row, top + first, cols - first,
                       scale, mask_mode != 0, hidden - first);
        }
        for (int64_t s = 0; s < S; s++) {      /* exp, column sums */
            const int64_t hidden = causal ? (s - l0 < 0 ? 0 : s - l0 > cols ? cols : s - l0) : 0;
            const int64_t first = hidden / 16 * 16;
            float *row = block + s * ld + l0;
            for (int64_t l = 0; l < first; l++) row[l] = 0.0f;
            exp_row(row + first, top + first, total + first, cols - first);
        }
        for (int64_t l = 0; l < cols; l++) total[l] = 1.0f / total[l];
        for (int64_t s = 0; s < S; s++)       /* normalize */
            scale_row(block + s * ld + l0, total, cols);
    }
}

/* In place on st (blocks, S, L), the raw k q^T: st = softmax over s of (st * scale + mask [- inf where
 * causal hides key s > query l]). mask_mode 0: no mask; 1: one additive (S, L) mask for every block;
 * 2: one per block (blocks, S, L). A column that sees no key gets NaN (-inf - -inf), as NumPy's path;
 * exp of what is below -87.3 after the max is taken as 0 (gg_expf stops at ~1e-38), so masked keys get
 * exactly 0. */
GG_EXPORT void gg_attention_softmax_t_f32(float *st, const float *mask, int64_t blocks, int64_t S, int64_t L, float scale, int mask_mode, int causal) {
    for (int64_t b = 0; b < blocks; b++)
        softmax_t_block(st + b * S * L, L, mask_mode == 2 ? mask + b * S * L : mask, L, S, L, scale, mask_mode, causal);
}

/* The softmax's backward on one transposed block, in place on d = dP^T (S, L) given p = P^T (rows pld
 * and dld floats apart): d = (p d - p colsum(p d)) * scale, the gradient of the scaled scores (NumPy's
 * order). */
static void softmax_grad_t_block(const float *pb, int64_t pld, float *db, int64_t dld, int64_t S, int64_t L,
                                 float scale) {
    for (int64_t l0 = 0; l0 < L; l0 += GG_COLS) {
        const int64_t cols = L - l0 < GG_COLS ? L - l0 : GG_COLS;
        float c[GG_COLS];
        for (int64_t l = 0; l < cols; l++) c[l] = 0.0f;
        for (int64_t s = 0; s < S; s++) {
            const float *prow = pb + s * pld + l0, *drow = db + s * dld + l0;
            for (int64_t l = 0; l < cols; l++) c[l] += prow[l] * drow[l];
        }
        for (int64_t s = 0; s < S; s++) {
            const float *prow = pb + s * pld + l0;
            float *drow = db + s * dld + l0;
            for (int64_t l = 0; l < cols; l++) drow[l] = (prow[l] * drow[l] - prow[l] * c[l]) * scale;
        }
    }
}

GG_EXPORT void gg_attention_softmax_grad_t_f32(const float *p, float *d, int64_t blocks, int64_t S, int64_t L, float scale) {
    for (int64_t b = 0; b < blocks; b++)
        softmax_grad_t_block(p + b * S * L, L, d + b * S * L, L, S, L, scale);
}

/* ---- self-attention over packed heads, whole ----------------------------------------------------------
 * ops/attention.py's packed layout: qkv (N, L, 3E), E = heads * D, head h of q at columns h D .. h D + D
 * (k at E + h D, v at 2 E + h D); the output and the upstream gradient (N, L, E) with heads merged the
 * same way. Each (sample, head) block is done whole, its products by gg_small_product straight on the
 * strided heads (no BLAS call per block, no copies of the heads but a transposed q or g of D x L floats),
 * the softmax passes as above on a block in L1. D must be a multiple of 16; S = L (self-attention).
 * Blocks are independent: they split over MKL's OpenMP team (gg_team_workers). Scratch is allocated
 * per call and worker; ok[0] = 0 when it could not be (the caller takes its BLAS path). */
typedef struct { float *st, *lt; int64_t lp; } attention_scratch;

typedef struct attention_task attention_task;
/* One (sample n, head h) block, number b = n * heads + h, with a worker's scratch. */
typedef void (*attention_block_fn)(const attention_task *t, const attention_scratch *w, int64_t n, int64_t h, int64_t b);

struct attention_task {
    const float *qkv, *mask, *weights, *g;
    float *out;
    int64_t L, heads, D;
    float scale;
    int mask_mode, causal;
    attention_block_fn block;
    attention_scratch scratch[GG_MAX_WORKERS];  /* one per worker */
};

/* Blocks (sample, head) are split over MKL's OpenMP team from this many multiply-adds a worker. */
#define ATTENTION_SPLIT_MULTIPLY_ADDS (1 << 21)

static void attention_part(void *p, int64_t first, int64_t stop, int worker, int64_t chunk) {
    const attention_task *t = (const attention_task *)p;
    (void)chunk;
    for (int64_t b = first; b < stop; b++) t->block(t, &t->scratch[worker], b / t->heads, b % t->heads, b);
}

/* Run t->block over the N * heads blocks, with scratch per worker; ok[0] = 0 (nothing computed) when
 * the scratch could not be allocated. */
static void attention_run(attention_task *t, int64_t N, int64_t *ok) {
    const int64_t L = t->L, D = t->D, blocks = N * t->heads;
    const int64_t workers = gg_team_workers(blocks * L * L * D, ATTENTION_SPLIT_MULTIPLY_ADDS);
    int fine = 1;
    for (int64_t w = 0; w < GG_MAX_WORKERS; w++) {
        attention_scratch *s = &t->scratch[w];
        *s = (attention_scratch){NULL, NULL, (L + 15) / 16 * 16};     /* L padded to whole vectors */
        if (w >= workers) continue;
        s->st = calloc((size_t)(L * s->lp), sizeof(float));           /* (S, lp): a block of scores */
        s->lt = calloc((size_t)(D * s->lp), sizeof(float));           /* (D, lp): a head transposed */
        fine = fine && s->st != NULL && s->lt != NULL;
    }
    ok[0] = fine;
    if (fine) gg_parallel(attention_part, t, blocks, gg_chunk(blocks, 1), workers);
    for (int64_t w = 0; w < GG_MAX_WORKERS; w++) {
        free(t->scratch[w].st);
        free(t->scratch[w].lt);
    }
}

static void weights_block(const attention_task *t, const attention_scratch *w, int64_t n, int64_t h, int64_t b) {
    const int64_t L = t->L, D = t->D, E = t->heads * D, row = 3 * E;
    const float *q = t->qkv + n * L * row + h * D, *k = q + E;
    const float *mask = t->mask_mode == 2 ? t->mask + b * L * L : t->mask;
    gg_transpose(q, L, D, row, w->lt, w->lp);                                      /* q^T (D, lp) */
    gg_small_product(k, row, 1, L, w->lt, w->lp, D, w->lp, w->st, w->lp, 64, 16, 0);  /* k q^T (S, lp) */
    softmax_t_block(w->st, w->lp, mask, L, L, L, t->scale, t->mask_mode, t->causal);
    for (int64_t s = 0; s < L; s++) memcpy(t->out + (b * L + s) * L, w->st + s * w->lp, sizeof(float) * (size_t)L);
}

/* weights (N, heads, S, L) = softmax(q k^T * scale + mask)^T per head, as gg_attention_softmax_t_f32. */
GG_EXPORT void gg_attention_weights_packed_f32(const float *qkv, const float *mask, float *weights, int64_t N, int64_t L, int64_t heads, int64_t D, float scale, int mask_mode, int causal, int64_t *ok) {
    attention_task t = {qkv, mask, NULL, NULL, weights, L, heads, D, scale, mask_mode, causal, weights_block, {{0}}};
    attention_run(&t, N, ok);
}

static void apply_block(const attention_task *t, const attention_scratch *w, int64_t n, int64_t h, int64_t b) {
    const int64_t L = t->L, D = t->D, E = t->heads * D, row = 3 * E;
    const float *v = t->qkv + n * L * row + 2 * E + h * D;
    const float *pt = t->weights + b * L * L;
    if (w->lp != L) {  /* P^T's rows padded to whole vectors (the product reads lp columns) */
        for (int64_t s = 0; s < L; s++) memcpy(w->st + s * w->lp, pt + s * L, sizeof(float) * (size_t)L);
        pt = w->st;
    }
    /* out^T (D, L) = v^T P^T: rows of v^T are v's columns (a[e + s row]) */
    gg_small_product(v, 1, row, D, pt, w->lp, L, w->lp, w->lt, w->lp, 64, 16, 0);
    gg_transpose(w->lt, D, L, w->lp, t->out + n * L * E + h * D, E);
}

/* out (N, L, E) = P v per head, from weights = P^T (N, heads, S, L). */
GG_EXPORT void gg_attention_apply_packed_f32(const float *qkv, const float *weights, float *out, int64_t N, int64_t L, int64_t heads, int64_t D, int64_t *ok) {
    attention_task t = {qkv, NULL, weights, NULL, out, L, heads, D, 0.0f, 0, 0, apply_block, {{0}}};
    attention_run(&t, N, ok);
}

static void grad_block(const attention_task *t, const attention_scratch *w, int64_t n, int64_t h, int64_t b) {
    const int64_t L = t->L, D = t->D, E = t->heads * D, row = 3 * E;
    const float *q = t->qkv + n * L * row + h * D, *k = q + E, *v = q + 2 * E;
    const float *p = t->weights + b * L * L, *gh = t->g + n * L * E + h * D;
    float *gq = t->out + n * L * row + h * D, *gk = gq + E, *gv = gq + 2 * E;
    gg_small_product(p, L, 1, L, gh, E, L, D, gv, row, 64, 16, 0);                /* dV = P^T g */
    gg_transpose(gh, L, D, E, w->lt, w->lp);                                       /* g^T (D, lp) */
    gg_small_product(v, row, 1, L, w->lt, w->lp, D, w->lp, w->st, w->lp, 64, 16, 0);  /* dP^T = v g^T */
    softmax_grad_t_block(p, L, w->st, w->lp, L, L, t->scale);                      /* dS^T */
    gg_small_product(w->st, 1, w->lp, L, k, row, L, D, gq, row, 64, 16, 0);        /* dQ = dS k */
    gg_small_product(w->st, w->lp, 1, L, q, row, L, D, gk, row, 64, 16, 0);        /* dK = dS^T q */
}

/* grad (N, L, 3E): the gradients of q, k, v (packed as qkv) for the upstream gradient g (N, L, E), from
 * weights = P^T: dV = P^T g, dP^T = v g^T, dS^T = softmax backward (times scale), dQ = dS k, dK = dS^T q. */
GG_EXPORT void gg_attention_grad_packed_f32(const float *qkv, const float *weights, const float *g, float *grad, int64_t N, int64_t L, int64_t heads, int64_t D, float scale, int64_t *ok) {
    attention_task t = {qkv, NULL, weights, g, grad, L, heads, D, scale, 0, 0, grad_block, {{0}}};
    attention_run(&t, N, ok);
}

/* The gradient of softmax cross-entropy over class indices (ops/losses.py's SoftmaxCrossEntropyGrad with
 * a 'mean' or 'sum' reduction) in one call: out = (softmax(x) - onehot(t)) * scale, scale = g (divided
 * by the count of rows whose target is not ignore_index when mean != 0); ignored rows are computed
 * with class 0 as their target and multiplied by 0 * scale, exactly as the NumPy path does (so an
 * all-ignored batch gives its NaN). x, out: (n, c); t: (n,) int64. info[0] is set to 1, and nothing
 * else written, when a target is out of range; info[1] gets the count of rows kept. With `losses`
 * (SoftmaxCrossEntropyWithGrad), losses[i] = log(sum exp(z)) - z[t_i] for z = x_i - max (0 for ignored
 * rows), the NumPy path's per-row losses, are written too. The same arithmetic as NumPy's:
 * z = x - max, exp(z), divided by the row's sum. */
/* A row's max and sum in GG_LANES running lanes (vectorized; one running value would keep the loop
 * scalar, and the exp with it). The max skips NaN; a row with a NaN still comes out NaN (its exp, then
 * the sum), as NumPy's. */
static inline float row_max(const float *x, int64_t c) {
    float lanes[GG_LANES];
    int64_t j = 0;
    for (int k = 0; k < GG_LANES; k++) lanes[k] = x[0];
    for (; j + GG_LANES <= c; j += GG_LANES)
        for (int k = 0; k < GG_LANES; k++) lanes[k] = x[j + k] > lanes[k] ? x[j + k] : lanes[k];
    float m = lanes[0];
    for (int k = 1; k < GG_LANES; k++) m = lanes[k] > m ? lanes[k] : m;
    for (; j < c; j++) m = x[j] > m ? x[j] : m;
    return m;
}

static inline float row_sum(const float *x, int64_t c) {
    float lanes[GG_LANES] = {0.0f};
    int64_t j = 0;
    for (; j + GG_LANES <= c; j += GG_LANES)
        for (int k = 0; k < GG_LANES; k++) lanes[k] += x[j + k];
    float s = gg_lanes_total(lanes);
    for (; j < c; j++) s += x[j];
    return s;
}

/* Few classes (W6: 3): a row's loops would be a few elements long, so rows go 16 at a time instead,
 * each step of the arithmetic one vector across 16 rows (the same operations per element, in the same
 * order, as the row by row loop). */
#define XENT_FEW 16
static void softmax_xent_few(const float *x, const int64_t *t, float *out, int64_t n, int64_t c, float scale,
                             int64_t ignore_index) {
    for (int64_t i0 = 0; i0 < n; i0 += 16) {
        const int64_t rows = n - i0 < 16 ? n - i0 : 16;
        float e[XENT_FEW][16], m[16], s[16], w[16];
        int64_t target[16];
        for (int r = 0; r < 16; r++) {
            const int64_t i = i0 + (r < rows ? r : 0);     /* (lanes past the end repeat row i0) */
            const int ignored = t[i] == ignore_index;
            target[r] = ignored ? 0 : t[i];
            w[r] = ignored ? 0.0f * scale : scale;
            m[r] = x[i * c];
        }
        for (int64_t j = 0; j < c; j++)
            for (int r = 0; r < 16; r++) {
                const float v = x[(i0 + (r < rows ? r : 0)) * c + j];
                e[j][r] = v;
                m[r] = v > m[r] ? v : m[r];
            }
        for (int r = 0; r < 16; r++) s[r] = 0.0f;
        for (int64_t j = 0; j < c; j++)
            for (int r = 0; r < 16; r++) {
                e[j][r] = gg_expf(e[j][r] - m[r]);
                s[r] += e[j][r];
            }
        for (int64_t j = 0; j < c; j++)
            for (int r = 0; r < 16; r++) {
                float p = e[j][r] / s[r];
                p = j == target[r] ? p - 1.0f : p;
                e[j][r] = p * w[r];
            }
        for (int r = 0; r < rows; r++)
            for (int64_t j = 0; j < c; j++) out[(i0 + r) * c + j] = e[j][r];
    }
}

static void softmax_xent(const float *x, const int64_t *t, float *out, float *losses, int64_t *info, int64_t n,
                         int64_t c, float g, int64_t ignore_index, int mean) {
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        if (t[i] != ignore_index && (t[i] < 0 || t[i] >= c)) {
            info[0] = 1;  /* a target out of range: nothing written; the caller takes the NumPy path */
            return;
        }
        kept += t[i] != ignore_index;
    }
    info[1] = kept;
    const float scale = mean ? g / (float)kept : g;
    if (c <= XENT_FEW && !losses) {
        softmax_xent_few(x, t, out, n, c, scale, ignore_index);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const float *xi = x + i * c;
        float *oi = out + i * c;
        const int ignored = t[i] == ignore_index;
        const int64_t target = ignored ? 0 : t[i];
        const float m = row_max(xi, c);
        for (int64_t j = 0; j < c; j++) oi[j] = gg_expf(xi[j] - m);  /* (apart from the sum: vectorized) */
        const float s = row_sum(oi, c);
        if (losses) losses[i] = ignored ? 0.0f : logf(s) - (xi[target] - m);
        for (int64_t j = 0; j < c; j++) oi[j] = oi[j] / s;
        oi[target] -= 1.0f;
        const float w = ignored ? 0.0f * scale : scale;
        for (int64_t j = 0; j < c; j++) oi[j] *= w;
    }
}

GG_EXPORT void gg_softmax_xent_grad_f32(const float *x, const int64_t *t, float *out, int64_t *info, int64_t n, int64_t c, float g, int64_t ignore_index, int mean) {
    softmax_xent(x, t, out, NULL, info, n, c, g, ignore_index, mean);
}

GG_EXPORT void gg_softmax_xent_with_grad_f32(const float *x, const int64_t *t, float *out, float *losses, int64_t *info, int64_t n, int64_t c, float g, int64_t ignore_index, int mean) {
    softmax_xent(x, t, out, losses, info, n, c, g, ignore_index, mean);
}
