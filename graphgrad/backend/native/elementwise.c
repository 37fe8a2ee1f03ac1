/* gg_native.h's building blocks (sigmoid, tanh; exp through both) as exported kernels, so that their
 * accuracy is tested on their own (tests/backend/test_native.py); the ops use them inline. */
#include "gg_native.h"

GG_EXPORT void gg_sigmoid_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_sigmoidf(x[i]);
}

GG_EXPORT void gg_tanh_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_tanhf(x[i]);
}

/* dst (cols, rows) = src (rows, cols) transposed (gg_native.h's gg_transpose). (NumPy's strided copy
 * of a transposed view takes about 14 us for 512 x 32, the size of one recurrent time step's product;
 * this about 3.5 us.) */
GG_EXPORT void gg_transpose_f32(const float *src, float *dst, int64_t rows, int64_t cols) {
    gg_transpose(src, rows, cols, cols, dst, rows);
}

/* ReLU's backward g * (y > 0) in one pass (ops/unary.py ReluGrad): g times 1 or 0 as NumPy's multiply
 * by the bool mask (NaN and infinite g give NaN where the mask is 0, as there). */
GG_EXPORT void gg_relu_grad_f32(const float *y, const float *g, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = g[i] * (float)(y[i] > 0.0f);
}
