/* Recurrent cells (graphgrad/ops/recurrent.py): the pointwise part of one LSTM or GRU time step, forward
 * and backward, in one pass. The matmuls of a step stay in NumPy (BLAS); what is left of a step is
 * about ten elementwise NumPy calls over (B, H) blocks, each a Python call and a pass over memory,
 * which this replaces with one call.
 *
 * The workspace layouts are the ones of recurrent.py's NumPy path (_lstm_views / _gru_views), so a
 * workspace written here is read by either backward path. Rows are (B, H) blocks, bh = B * H floats:
 *   LSTM (7T + 2 rows): h[0..T), h_n, c_n, c[0..T), tanh(c)[0..T), then gates i, f, g, o gate-major
 *                       (gate k of step t at row 3T + 2 + k T + t);
 *   GRU  (5T + 1 rows): h[0..T), h_n, then gates r, z, n gate-major (row T + 1 + k T + t), then
 *                       W_hn h_{t-1} + b_hn (row 4T + 1 + t).
 * Projections are (rows, B, G * H) with the gates side by side along the last axis (PyTorch's order).
 * The arithmetic follows the NumPy path's formulas (same products and sums in the same order) where
 * it can; the activations come from gg_native.h, within a few ulp of NumPy's.
 *
 * The loops over one row of H sit in static inline functions because gcc honours `restrict` on
 * function parameters (not on local pointers); without it, the many arrays of a row need more
 * run-time alias checks than gcc will version a loop for, and the loop stays scalar. */
/* Fused multiply-adds for the polynomials (-std=c99 turns contraction off), as transformer.c. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#include "gg_native.h"
#include <stdlib.h>

/* tanh(x) as x P(x^2) / Q(x^2), a rational fit of degrees 6 and 3 in x^2 (relative error 7e-9 on
 * [0, 9]; float32 evaluation brings it to <= 6 ulp, the most near +-1), with x clamped to +-9, where
 * tanh rounds to +-1 in float32, and the result to [-1, 1]. About half the work of gg_tanhf (an exp,
 * a division and a Taylor series for small x): one division, ten multiply-adds. NaN stays NaN (the
 * clamps are comparisons, false for NaN). The sigmoids of a cell are 0.5 tanh(x / 2) + 0.5, as in
 * recurrent.py's NumPy path. */
static inline float rec_tanhf(float x) {
    float c = x > 9.0f ? 9.0f : x;
    c = c < -9.0f ? -9.0f : c;
    float s = c * c;
    float p = -8.48909159e-14f;
    p = p * s + 5.27810642e-11f;
    p = p * s - 2.02255741e-08f;
    p = p * s + 1.11543986e-05f;
    p = p * s + 3.10396519e-03f;
    p = p * s + 1.30840182e-01f;
    p = p * s + 1.0f;
    float q = 2.54615792e-04f;
    q = q * s + 2.44952142e-02f;
    q = q * s + 4.64173466e-01f;
    q = q * s + 1.0f;
    float y = c * p / q;
    y = y > 1.0f ? 1.0f : y;
    return y < -1.0f ? -1.0f : y;
}

static inline float rec_sigmoidf(float x) {
    return 0.5f * rec_tanhf(0.5f * x) + 0.5f;
}

/* n units of an LSTM step: x, p the input and recurrent projections, gate k of unit j at x[k xs + j] and
 * p[k ps + j] (p and cp read only when has_prev), bx the biases b_ih + b_hh (gate stride xs) added to
 * x; writes h, c, tanh(c) and the gate activations. */
static inline void lstm_units(const float *restrict x, int64_t xs, const float *restrict bx, const float *restrict p,
                              int64_t ps, const float *restrict cp, float *restrict h, float *restrict c,
                              float *restrict tc, float *restrict ai, float *restrict af, float *restrict ag,
                              float *restrict ao, int64_t n, int has_prev) {
    if (has_prev) {
        for (int64_t j = 0; j < n; j++) {
            float i = rec_sigmoidf((x[j] + bx[j]) + p[j]);
            float f = rec_sigmoidf((x[xs + j] + bx[xs + j]) + p[ps + j]);
            float g = rec_tanhf((x[2 * xs + j] + bx[2 * xs + j]) + p[2 * ps + j]);
            float o = rec_sigmoidf((x[3 * xs + j] + bx[3 * xs + j]) + p[3 * ps + j]);
            float cn = f * cp[j] + i * g;
            float tn = rec_tanhf(cn);
            ai[j] = i; af[j] = f; ag[j] = g; ao[j] = o;
            c[j] = cn; tc[j] = tn; h[j] = o * tn;
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            float i = rec_sigmoidf(x[j] + bx[j]);
            float f = rec_sigmoidf(x[xs + j] + bx[xs + j]);
            float g = rec_tanhf(x[2 * xs + j] + bx[2 * xs + j]);
            float o = rec_sigmoidf(x[3 * xs + j] + bx[3 * xs + j]);
            float cn = i * g;
            float tn = rec_tanhf(cn);
            ai[j] = i; af[j] = f; ag[j] = g; ao[j] = o;
            c[j] = cn; tc[j] = tn; h[j] = o * tn;
        }
    }
}

/* The previous cell state of a step: row `prev` of the c block of ws when prev >= 0, the initial
 * state c0 when prev == -1; NULL (start from zero states) when prev == -2. */
static inline const float *lstm_c_prev(const float *ws, const float *c0, int64_t prev, int64_t T, int64_t bh) {
    return prev >= 0 ? ws + (T + 2 + prev) * bh : prev == -1 ? c0 : NULL;
}

/* LSTM forward of step t. gx: (T, B, 4H) input projections x_t W_ih^T; bias: (4H,) b_ih + b_hh (zeros
 * without biases; added here, not in a pass over all of gx); pre: (B, 4H) the
 * recurrent projection h_{t-1} W_hh^T, read unless the step starts from zero states (prev == -2,
 * then c_t = i g); prev: where c_{t-1} is (lstm_c_prev; c0 is (B, H), any array when unused).
 * Writes h[t], c[t], tanh(c[t]) and the gate activations of step t into the workspace ws. Every
 * array is the same at every step, so the caller makes its pointers once. */
GG_EXPORT void gg_lstm_step_f32(const float *gx, const float *bias, const float *pre, const float *c0, float *ws, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H) {
    const int64_t bh = B * H;
    const float *c_prev = lstm_c_prev(ws, c0, prev, T, bh);
    for (int64_t b = 0; b < B; b++) {
        const int64_t row = t * bh + b * H;
        float *a = ws + (3 * T + 2) * bh + row;  /* gate k of this row at a + k T bh */
        lstm_units(gx + (t * B + b) * 4 * H, H, bias, pre + b * 4 * H, H, c_prev ? c_prev + b * H : NULL, ws + row,
                   ws + (T + 2) * bh + row, ws + (2 * T + 2) * bh + row, a, a + T * bh, a + 2 * T * bh,
                   a + 3 * T * bh, H, c_prev != NULL);
    }
}

/* One row of an LSTM step's backward: the gate gradients di, df, dg, d_o; dc is updated in place. */
static inline void lstm_grad_row(const float *restrict gt, const float *restrict dn, const float *restrict cp,
                                 const float *restrict h, const float *restrict tc, const float *restrict ai,
                                 const float *restrict af, const float *restrict ag, const float *restrict ao,
                                 float *restrict dc, float *restrict di, float *restrict df, float *restrict dg,
                                 float *restrict d_o, int64_t H, int has_prev) {
    for (int64_t j = 0; j < H; j++) {
        float i = ai[j], f = af[j], g = ag[j], o = ao[j], tn = tc[j];
        float dh = gt[j] + dn[j];
        float d = dc[j] + dh * (o - h[j] * tn);            /* o (1 - tanh(c)^2), as o - h tanh(c) */
        di[j] = d * (g * (i - i * i));
        dg[j] = d * (i * (1.0f - g * g));
        d_o[j] = dh * (tn * (o - o * o));
        dc[j] = d * f;
        df[j] = d;                                         /* times c_{t-1} f (1 - f) below */
    }
    if (has_prev) {
        for (int64_t j = 0; j < H; j++) df[j] *= cp[j] * (af[j] - af[j] * af[j]);
    } else {
        for (int64_t j = 0; j < H; j++) df[j] *= 0.0f;    /* (NaN and inf stay NaN, as NumPy's dc * 0) */
    }
}

/* LSTM backward of step t (steps are visited in the reverse of the forward order). g: (T + 2, B, H)
 * the upstream gradient; dh_next: (B, H) the gradient reaching h_t through the next step's recurrent
 * product; dc: (B, H) the gradient of c_t, updated in place to that of c_{t-1}; prev, c0: where
 * c_{t-1} is, as in gg_lstm_step_f32 (zero states: f gets no gradient). Writes the gradients of the
 * gate pre-activations (i, f, g, o side by side) into row t of d (T + 1, B, 4H). */
static void lstm_step_grad_rows(const float *ws, const float *g, const float *dh_next, const float *c0, float *dc,
                                float *d, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H, int64_t b0,
                                int64_t b1) {
    const int64_t bh = B * H;
    const float *c_prev = lstm_c_prev(ws, c0, prev, T, bh);
    for (int64_t b = b0; b < b1; b++) {
        const int64_t row = t * bh + b * H;
        const float *a = ws + (3 * T + 2) * bh + row;
        float *out = d + (t * B + b) * 4 * H;
        lstm_grad_row(g + row, dh_next + b * H, c_prev ? c_prev + b * H : NULL, ws + row,
                      ws + (2 * T + 2) * bh + row, a, a + T * bh, a + 2 * T * bh, a + 3 * T * bh, dc + b * H,
                      out, out + H, out + 2 * H, out + 3 * H, H, c_prev != NULL);
    }
}

GG_EXPORT void gg_lstm_step_grad_f32(const float *ws, const float *g, const float *dh_next, const float *c0, float *dc, float *d, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H) {
    lstm_step_grad_rows(ws, g, dh_next, c0, dc, d, t, prev, T, B, H, 0, B);
}

/* ---- the whole LSTM sequence in one call ----------------------------------------------------------
 * gg_lstm_scan_f32 and gg_lstm_scan_grad_f32 run every time step of the scan and of its backward in
 * C, with their own products (no BLAS call, no Python between steps): a step's product is small (W3:
 * 32x128 by 128x512) and called 35 times a sequence, where a BLAS call's setup and the Python loop
 * around it cost about as much as the arithmetic.
 *
 * Forward: W_hh^T is packed once per call with the four gates of each 16 hidden units side by side
 * (64 columns: gate k, unit j at 16 k + j); h_{t-1} times it (gg_small_product, smallgemm.c) gives the
 * step's gate pre-activations, gate by gate, and the cell update (lstm_units) runs on them row by row.
 * Backward: the gate gradients of a step as gg_lstm_step_grad_f32, then dh_{t-1} = d_t W_hh (W_hh's
 * rows padded to whole vectors). */
#define RL 16

/* Batch rows are independent all through a sequence (row b of h_t needs row b of h_{t-1} only), so
 * both scans split the batch into chunks of rows, each chunk run over the whole sequence by one thread
 * (parallel.c): no synchronization between time steps. A row's arithmetic does not depend on the
 * chunk it is in, so neither do the results. */
#define SCAN_ROWS 8  /* batch rows per chunk when split (one thread: all rows, one chunk, so that each
                      * step's weights stream through the cache once) */

typedef struct {
    const float *gx, *bias, *h0, *c0, *w;       /* w: the packed weights */
    float *ws;
    float *scratch[GG_MAX_WORKERS];             /* per worker: a chunk's products */
    int64_t T, B, H, reverse, has_state;
} scan_task;

static void scan_rows(void *p, int64_t b0, int64_t b1, int worker, int64_t chunk) {
    const scan_task *k = (const scan_task *)p;
    const int64_t T = k->T, B = k->B, H = k->H, bh = B * H, units = (H + RL - 1) / RL, hp = units * RL;
    float *pre = k->scratch[worker];
    (void)chunk;
    const float *h_prev = k->has_state ? k->h0 : NULL, *c_prev = k->has_state ? k->c0 : NULL;
    for (int64_t s = 0; s < T; s++) {
        const int64_t t = k->reverse ? T - 1 - s : s;
        float *h = k->ws + t * bh, *c = k->ws + (T + 2 + t) * bh, *tc = k->ws + (2 * T + 2 + t) * bh;
        float *a = k->ws + (3 * T + 2 + t) * bh;       /* gate q at a + q T bh */
        if (h_prev)  /* panel u's gate q goes to column q * hp + 16 u */
            gg_small_product(h_prev + b0 * H, H, 1, b1 - b0, k->w, units * 4 * RL, H, units * 4 * RL, pre, 4 * hp,
                             RL, hp, 0);
        for (int64_t b = b0; b < b1; b++) {
            const int64_t at = b * H;
            lstm_units(k->gx + (t * B + b) * 4 * H, H, k->bias, pre + (b - b0) * 4 * hp, hp, c_prev ? c_prev + at : NULL,
                       h + at, c + at, tc + at, a + at, a + T * bh + at, a + 2 * T * bh + at, a + 3 * T * bh + at,
                       H, h_prev != NULL);
        }
        h_prev = h;
        c_prev = c;
    }
    if (T > 0) {                                        /* h_n, c_n */
        memcpy(k->ws + T * bh + b0 * H, h_prev + b0 * H, sizeof(float) * (size_t)((b1 - b0) * H));
        memcpy(k->ws + (T + 1) * bh + b0 * H, c_prev + b0 * H, sizeof(float) * (size_t)((b1 - b0) * H));
    }
}

/* Workers for a batch of B rows on `threads` threads, and the rows of each chunk they take: chunks of
 * SCAN_ROWS when split, else one chunk of all rows (a step's weights then stream through the cache
 * once). */
static int64_t scan_workers(int64_t threads, int64_t B) {
    const int64_t chunks = (B + SCAN_ROWS - 1) / SCAN_ROWS;
    const int64_t workers = threads < chunks ? threads : chunks;
    return workers < 1 ? 1 : workers > GG_MAX_WORKERS ? GG_MAX_WORKERS : workers;
}

static int64_t scan_chunk(int64_t workers, int64_t B) {
    return workers > 1 ? SCAN_ROWS : B;
}

/* Per-worker scratch of `count` floats each; 0 when memory ran out (free_scratch frees what was made). */
static int scan_scratch(float **scratch, int64_t workers, int64_t count) {
    int ok = 1;
    for (int64_t w = 0; w < workers; w++) ok = (scratch[w] = malloc(sizeof(float) * (size_t)count)) != NULL && ok;
    return ok;
}

static void free_scratch(float **scratch, int64_t workers) {
    for (int64_t w = 0; w < workers; w++) free(scratch[w]);
}

/* w (rows, H) with its rows zero-padded to `width` floats (a new array; NULL when memory ran out). */
static float *padded_rows(const float *w, int64_t rows, int64_t H, int64_t width) {
    float *out = calloc((size_t)(rows * width), sizeof(float));
    if (out)
        for (int64_t i = 0; i < rows; i++) memcpy(out + i * width, w + i * H, sizeof(float) * (size_t)H);
    return out;
}

/* The forward scan. gx (T, B, 4H) input projections; bias (4H) b_ih + b_hh; w_hh (4H, H); h0, c0 (B, H),
 * read when has_state (else zero states: the first step is c = i g); ws: the workspace (7T + 2 rows),
 * every row written (h_n and c_n included); threads: how many threads the batch rows may be split
 * over. ok[0] = 0 when memory ran out (nothing useful written: the caller takes its per-step path). */
GG_EXPORT void gg_lstm_scan_f32(const float *gx, const float *bias, const float *w_hh, const float *h0, const float *c0, float *ws, int64_t T, int64_t B, int64_t H, int64_t reverse, int64_t has_state, int64_t threads, int64_t *ok) {
    const int64_t units = (H + RL - 1) / RL, hp = units * RL, workers = scan_workers(threads, B);
    scan_task k = {gx, bias, h0, c0, NULL, ws, {0}, T, B, H, reverse, has_state};
    float *panels = calloc((size_t)(units * H * 4 * RL), sizeof(float));
    ok[0] = panels != NULL && scan_scratch(k.scratch, workers, scan_chunk(workers, B) * 4 * hp);  /* (gates i, f, g, o) */
    if (ok[0]) {
        for (int64_t i = 0; i < H; i++)               /* (H, units * 64): unit block u's gate q, unit j at */
            for (int64_t u = 0; u < units; u++)         /* column 64 u + 16 q + j; zero past unit H */
                for (int64_t q = 0; q < 4; q++)
                    for (int64_t j = 0; j < RL && u * RL + j < H; j++)
                        panels[i * units * 4 * RL + u * 4 * RL + q * RL + j] = w_hh[(q * H + u * RL + j) * H + i];
        k.w = panels;
        gg_parallel(scan_rows, &k, B, scan_chunk(workers, B), workers);
    }
    free(panels);
    free_scratch(k.scratch, workers);
}

/* The backward through time of either cell: per step, latest first, the cell's gate gradients for a
 * chunk of batch rows (lstm_step_grad_rows or gru_step_grad_rows, which share a signature), then the
 * gradient the step before receives through the recurrent product, next = d[recurrent + t] W_hh. */
typedef void (*step_grad_fn)(const float *ws, const float *g, const float *next, const float *state0, float *carry,
                             float *d, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H, int64_t b0, int64_t b1);

typedef struct {
    step_grad_fn step;
    const float *ws, *g, *state0, *w;           /* w: W_hh, rows padded to whole vectors */
    float *next, *carry, *d;                     /* next: (B, H); carry: the LSTM's dc, the GRU's dh z */
    float *scratch[GG_MAX_WORKERS];              /* per worker: a chunk's products */
    int64_t T, B, H, gates, recurrent, reverse, has_state;  /* recurrent: d's row of step 0's W_hh gradients */
} backward_task;

static void backward_rows(void *p, int64_t b0, int64_t b1, int worker, int64_t chunk) {
    const backward_task *k = (const backward_task *)p;
    const int64_t T = k->T, B = k->B, H = k->H, G = k->gates * H, width = (H + RL - 1) / RL * RL;
    float *out = k->scratch[worker];
    (void)chunk;
    for (int64_t s = T - 1; s >= 0; s--) {
        const int64_t t = k->reverse ? T - 1 - s : s;
        const int64_t prev = s == 0 ? (k->has_state ? -1 : -2) : (k->reverse ? t + 1 : t - 1);
        k->step(k->ws, k->g, k->next, k->state0, k->carry, k->d, t, prev, T, B, H, b0, b1);
        gg_small_product(k->d + ((k->recurrent + t) * B + b0) * G, G, 1, b1 - b0, k->w, width, G, width, out, width,
                         4 * RL, RL, 0);
        for (int64_t b = b0; b < b1; b++) memcpy(k->next + b * H, out + (b - b0) * width, sizeof(float) * (size_t)H);
    }
}

/* Run k over the whole sequence, batch rows split as the forward; ok[0] = 0 when memory ran out. */
static void run_backward(backward_task *k, const float *w_hh, int64_t threads, int64_t *ok) {
    const int64_t width = (k->H + RL - 1) / RL * RL, workers = scan_workers(threads, k->B);
    float *padded = padded_rows(w_hh, k->gates * k->H, k->H, width);
    ok[0] = padded != NULL && scan_scratch(k->scratch, workers, scan_chunk(workers, k->B) * width);
    if (ok[0]) {
        k->w = padded;
        gg_parallel(backward_rows, k, k->B, scan_chunk(workers, k->B), workers);
    }
    free(padded);
    free_scratch(k->scratch, workers);
}

/* Backpropagation through the whole sequence: for each step, latest first, the gate gradients (as
 * gg_lstm_step_grad_f32) into row t of d (T + 1, B, 4H), then dh_next = d[t] W_hh. g (T + 2, B, H) the
 * upstream gradient; dh_next, dc (B, H): the gradients reaching h_T and c_T (g's last two rows, copied
 * by the caller), left holding those of h_{-1} and c_{-1}; c0 as in the forward (has_state). threads
 * and ok[0] as in gg_lstm_scan_f32. */
GG_EXPORT void gg_lstm_scan_grad_f32(const float *ws, const float *g, const float *w_hh, const float *c0, float *dh_next, float *dc, float *d, int64_t T, int64_t B, int64_t H, int64_t reverse, int64_t has_state, int64_t threads, int64_t *ok) {
    backward_task k = {lstm_step_grad_rows, ws, g, c0, NULL, dh_next, dc, d, {0}, T, B, H, 4, 0, reverse, has_state};
    run_backward(&k, w_hh, threads, ok);
}

/* ---- GRU ---------------------------------------------------------------------------------------------- */
/* n units of a GRU step: x the input projections and bx b_ih, bh b_hh (gate k of unit j at [k xs + j]),
 * p the recurrent ones W_hh h_{t-1} (at p[k ps + j]; read only when has_prev, else zero), hp h_{t-1}. */
static inline void gru_units(const float *restrict x, int64_t xs, const float *restrict bx, const float *restrict p,
                             int64_t ps, const float *restrict bh, const float *restrict hp, float *restrict h,
                             float *restrict ar, float *restrict az, float *restrict an, float *restrict hn, int64_t n_units,
                             int has_prev) {
    if (has_prev) {
        for (int64_t j = 0; j < n_units; j++) {
            float r = rec_sigmoidf((x[j] + bx[j]) + (p[j] + bh[j]));
            float z = rec_sigmoidf((x[xs + j] + bx[xs + j]) + (p[ps + j] + bh[xs + j]));
            float m = p[2 * ps + j] + bh[2 * xs + j];
            float n = rec_tanhf((x[2 * xs + j] + bx[2 * xs + j]) + r * m);
            ar[j] = r; az[j] = z; an[j] = n; hn[j] = m;
            h[j] = (hp[j] - n) * z + n;
        }
    } else {
        for (int64_t j = 0; j < n_units; j++) {
            float r = rec_sigmoidf((x[j] + bx[j]) + bh[j]);
            float z = rec_sigmoidf((x[xs + j] + bx[xs + j]) + bh[xs + j]);
            float m = bh[2 * xs + j];
            float n = rec_tanhf((x[2 * xs + j] + bx[2 * xs + j]) + r * m);
            ar[j] = r; az[j] = z; an[j] = n; hn[j] = m;
            h[j] = n - z * n;
        }
    }
}

/* The previous output of a GRU step: row `prev` of ws (prev >= 0), h0 (prev == -1), or NULL (zero). */
static inline const float *gru_h_prev(const float *ws, const float *h0, int64_t prev, int64_t bh) {
    return prev >= 0 ? ws + prev * bh : prev == -1 ? h0 : NULL;
}

/* GRU forward of step t. gx: (T, B, 3H) input projections x_t W_ih^T; pre: (B, 3H) W_hh h_{t-1} (read
 * unless prev == -2: zero state); b_ih, b_hh: (3H,) (zeros without biases); prev, h0: where h_{t-1} is
 * (gru_h_prev). Writes h[t], the gate activations r, z, n and W_hn h_{t-1} + b_hn of step t into ws. */
GG_EXPORT void gg_gru_step_f32(const float *gx, const float *b_ih, const float *pre, const float *b_hh, const float *h0, float *ws, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H) {
    const int64_t bh = B * H;
    const float *h_prev = gru_h_prev(ws, h0, prev, bh);
    for (int64_t b = 0; b < B; b++) {
        const int64_t row = t * bh + b * H;
        float *a = ws + (T + 1) * bh + row;  /* gate k of this row at a + k T bh */
        gru_units(gx + (t * B + b) * 3 * H, H, b_ih, pre + b * 3 * H, H, b_hh, h_prev ? h_prev + b * H : NULL,
                  ws + row, a, a + T * bh, a + 2 * T * bh, ws + (4 * T + 1) * bh + row, H, h_prev != NULL);
    }
}

/* One row of a GRU step's backward: dx (3H) the gradients of the input projections, dr (3H) those of
 * the recurrent ones; carry is dh z of the step after, replaced by this step's. */
static inline void gru_grad_row(const float *restrict gt, const float *restrict mm, float *restrict carry,
                                const float *restrict hp, const float *restrict ar, const float *restrict az,
                                const float *restrict an, const float *restrict hn, float *restrict dx,
                                float *restrict dr, int64_t H, int has_prev) {
    if (has_prev) {  /* h_{t-1} - n, parked in dx's z block (zero state: -n) */
        for (int64_t j = 0; j < H; j++) dx[H + j] = hp[j] - an[j];
    } else {
        for (int64_t j = 0; j < H; j++) dx[H + j] = -an[j];
    }
    for (int64_t j = 0; j < H; j++) {
        float r = ar[j], z = az[j], n = an[j];
        float dh = gt[j] + (mm[j] + carry[j]);
        float dz = dh * (dx[H + j] * (z - z * z));
        float dn = dh * ((1.0f - n * n) * (1.0f - z));
        float d_r = dn * ((r - r * r) * hn[j]);
        dx[j] = d_r; dx[H + j] = dz; dx[2 * H + j] = dn;
        dr[j] = d_r; dr[H + j] = dz; dr[2 * H + j] = dn * r;
        carry[j] = dh * z;
    }
}

/* GRU backward of step t (steps in the reverse of the forward order). g: (T + 1, B, H) the upstream
 * gradient; mm: (B, H) the recurrent product of the step after (its recurrent-projection gradients
 * times W_hh); carry: (B, H) that step's dh z, replaced by this step's (the gradient reaching h_t is
 * g[t] + mm + carry); prev, h0: where h_{t-1} is. Writes rows [0, t] (input projections r, z, n) and
 * [1, t] (recurrent projections) of d (2, T + 1, B, 3H). */
static void gru_step_grad_rows(const float *ws, const float *g, const float *mm, const float *h0, float *carry,
                               float *d, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H, int64_t b0,
                               int64_t b1) {
    const int64_t bh = B * H;
    const float *h_prev = gru_h_prev(ws, h0, prev, bh);
    for (int64_t b = b0; b < b1; b++) {
        const int64_t row = t * bh + b * H;
        const float *a = ws + (T + 1) * bh + row;
        float *dx = d + (t * B + b) * 3 * H;
        gru_grad_row(g + row, mm + b * H, carry + b * H, h_prev ? h_prev + b * H : NULL, a, a + T * bh,
                     a + 2 * T * bh, ws + (4 * T + 1) * bh + row, dx, dx + (T + 1) * B * 3 * H, H,
                     h_prev != NULL);
    }
}

GG_EXPORT void gg_gru_step_grad_f32(const float *ws, const float *g, const float *mm, const float *h0, float *carry, float *d, int64_t t, int64_t prev, int64_t T, int64_t B, int64_t H) {
    gru_step_grad_rows(ws, g, mm, h0, carry, d, t, prev, T, B, H, 0, B);
}

/* ---- the whole GRU sequence in one call (as the LSTM's above: batch rows in chunks over threads) ---- */
typedef struct {
    const float *gx, *b_ih, *b_hh, *h0, *w;      /* w: the packed weights */
    float *ws;
    float *scratch[GG_MAX_WORKERS];
    int64_t T, B, H, reverse, has_state;
} gru_task;

static void gru_scan_rows(void *p, int64_t b0, int64_t b1, int worker, int64_t chunk) {
    const gru_task *k = (const gru_task *)p;
    const int64_t T = k->T, B = k->B, H = k->H, bh = B * H, hp = (H + RL - 1) / RL * RL;
    float *pre = k->scratch[worker];
    (void)chunk;
    const float *h_prev = k->has_state ? k->h0 : NULL;
    for (int64_t s = 0; s < T; s++) {
        const int64_t t = k->reverse ? T - 1 - s : s;
        float *a = k->ws + (T + 1 + t) * bh;           /* gate q at a + q T bh */
        if (h_prev)  /* gate q at column q * hp */
            gg_small_product(h_prev + b0 * H, H, 1, b1 - b0, k->w, 3 * hp, H, 3 * hp, pre, 3 * hp, 64, 16, 0);
        for (int64_t b = b0; b < b1; b++) {
            const int64_t at = b * H;
            gru_units(k->gx + (t * B + b) * 3 * H, H, k->b_ih, pre + (b - b0) * 3 * hp, hp, k->b_hh,
                      h_prev ? h_prev + at : NULL, k->ws + t * bh + at, a + at, a + T * bh + at, a + 2 * T * bh + at,
                      k->ws + (4 * T + 1 + t) * bh + at, H, h_prev != NULL);
        }
        h_prev = k->ws + t * bh;
    }
    if (T > 0)                                          /* h_n */
        memcpy(k->ws + T * bh + b0 * H, h_prev + b0 * H, sizeof(float) * (size_t)((b1 - b0) * H));
}

/* The GRU forward scan: gx (T, B, 3H); b_ih, b_hh (3H) (zeros without biases); w_hh (3H, H); h0 (B, H)
 * read when has_state; ws the workspace (5T + 1 rows), every row written. threads, ok as
 * gg_lstm_scan_f32. */
GG_EXPORT void gg_gru_scan_f32(const float *gx, const float *b_ih, const float *b_hh, const float *w_hh, const float *h0, float *ws, int64_t T, int64_t B, int64_t H, int64_t reverse, int64_t has_state, int64_t threads, int64_t *ok) {
    const int64_t hp = (H + RL - 1) / RL * RL, workers = scan_workers(threads, B);
    gru_task k = {gx, b_ih, b_hh, h0, NULL, ws, {0}, T, B, H, reverse, has_state};
    float *packed = calloc((size_t)(H * 3 * hp), sizeof(float));  /* W_hh^T (H, 3 hp), gate q at q hp */
    ok[0] = packed != NULL && scan_scratch(k.scratch, workers, scan_chunk(workers, B) * 3 * hp);
    if (ok[0]) {
        for (int64_t i = 0; i < H; i++)
            for (int64_t q = 0; q < 3; q++)
                for (int64_t j = 0; j < H; j++) packed[i * 3 * hp + q * hp + j] = w_hh[(q * H + j) * H + i];
        k.w = packed;
        gg_parallel(gru_scan_rows, &k, B, scan_chunk(workers, B), workers);
    }
    free(packed);
    free_scratch(k.scratch, workers);
}

/* Backpropagation through a whole GRU sequence: per step, latest first, the gate gradients (as
 * gg_gru_step_grad_f32) into d (2, T + 1, B, 3H), then mm = d[1, t] W_hh. mm (B, H): g's last row (copied
 * by the caller) on the way in; carry (B, H) zeros; both left as the step before the first's need
 * (dh_{-1} = mm + carry). threads, ok as gg_lstm_scan_f32. */
GG_EXPORT void gg_gru_scan_grad_f32(const float *ws, const float *g, const float *w_hh, const float *h0, float *mm, float *carry, float *d, int64_t T, int64_t B, int64_t H, int64_t reverse, int64_t has_state, int64_t threads, int64_t *ok) {
    backward_task k = {gru_step_grad_rows, ws, g, h0, NULL, mm, carry, d, {0}, T, B, H, 3, T + 1, reverse, has_state};
    run_backward(&k, w_hh, threads, ok);
}

/* ---- the embedding gradient (ops/nn.py EmbeddingBackward; W3's embedding feeds its LSTM) ---------- */
static inline void add_row(float *restrict out, const float *restrict row, int64_t d) {
    for (int64_t j = 0; j < d; j++) out[j] += row[j];
}

/* out (num, d) = zeros with row i of g (n, d) added into row idx[i], in the order of i (the order in
 * which the NumPy path's sorted add.reduceat sums each index's rows). An index outside [0, num) is
 * skipped and sets *bad = 1 (the caller then takes the NumPy path, which reports or wraps it). */
GG_EXPORT void gg_embedding_backward_f32(const int64_t *idx, const float *g, float *out, int64_t *bad, int64_t n, int64_t d, int64_t num) {
    memset(out, 0, (size_t)(num * d) * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        int64_t r = idx[i];
        if (r < 0 || r >= num) {
            *bad = 1;
            continue;
        }
        add_row(out + r * d, g + i * d, d);
    }
}
