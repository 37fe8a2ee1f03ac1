/* gg_native.h's building blocks (sigmoid, tanh; exp through both) as exported kernels, so that their
 * accuracy is tested on their own (tests/backend/test_native.py); the ops use them inline. */
#include "gg_native.h"

GG_EXPORT void gg_sigmoid_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_sigmoidf(x[i]);
}

GG_EXPORT void gg_tanh_f32(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = gg_tanhf(x[i]);
}
