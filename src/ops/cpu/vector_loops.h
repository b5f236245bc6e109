// Contiguous inner loops of the hot CPU kernels, for float and double, each compiled per ISA
// (Note [Kernel ISA dispatch] in isa.h). Callers (elementwise.cpp, batch_norm.cpp) pick these for
// stride-1 runs and keep their strided loops for everything else.
//
// The batch-norm loops walk one channel of an [N, C, S] tensor as N rows of S contiguous elements,
// row n starting at p + n * row_stride. Their sums are exact in double for double inputs; float
// inputs are added in float, in 32 fixed lanes flushed into double every few thousand elements, so
// the result depends only on the shape (not on the ISA or the thread count).
#pragma once

#include <cstdint>

namespace cohort::kernel::vec {

// out[i] = y[i] <= threshold ? 0 : g[i] (ReLU's backward, given its output y; NaN in y passes g).
void threshold_backward(float* out, const float* g, const float* y, float threshold, int64_t n);
void threshold_backward(double* out, const double* g, const double* y, double threshold, int64_t n);
// The same with one broadcast gradient value (the backward of x.relu().sum()).
void threshold_backward(float* out, float g, const float* y, float threshold, int64_t n);
void threshold_backward(double* out, double g, const double* y, double threshold, int64_t n);

// out[i] = c[i] ? a[i] : b[i], with either side possibly one broadcast value.
void where(float* out, const bool* c, const float* a, const float* b, int64_t n);
void where(double* out, const bool* c, const double* a, const double* b, int64_t n);
void where(float* out, const bool* c, float a, const float* b, int64_t n);
void where(double* out, const bool* c, double a, const double* b, int64_t n);
void where(float* out, const bool* c, const float* a, float b, int64_t n);
void where(double* out, const bool* c, const double* a, double b, int64_t n);

// out[i] = x[i] < 0 ? 0 : x[i] (NaN stays NaN, -0 stays -0: PyTorch's relu)
void relu(float* out, const float* x, int64_t n);
void relu(double* out, const double* x, int64_t n);

// --- max pooling -------------------------------------------------------------------------------

// A P x Q plane of a 2x2 / stride 2 max pool over the input plane x (rows `row_stride` apart, unit
// stride within a row, logical width W): y[p][q] is the maximum of rows 2p and 2p + 1 at columns 2q
// and 2q + 1, and idx[p][q] = 2p * W + 2q + the offset of the first of them that holds it (0, 1, W,
// W + 1). Returns false, with y and idx unspecified, when the plane holds a NaN: the caller then
// takes its NaN-aware loop.
bool max_pool_plane_2x2(float* y, int64_t* idx, const float* x, int64_t P, int64_t Q, int64_t row_stride, int64_t W);
bool max_pool_plane_2x2(double* y, int64_t* idx, const double* x, int64_t P, int64_t Q, int64_t row_stride,
                        int64_t W);

// --- batch norm, one channel: N rows of S ---------------------------------------------------------

// sum of x
double channel_sum(const float* x, int64_t row_stride, int64_t N, int64_t S);
double channel_sum(const double* x, int64_t row_stride, int64_t N, int64_t S);
// sum of (x - mu)^2
double channel_sum_sq_dev(const float* x, int64_t row_stride, int64_t N, int64_t S, float mu);
double channel_sum_sq_dev(const double* x, int64_t row_stride, int64_t N, int64_t S, double mu);
// sums[0] = sum of g, sums[1] = sum of g * (x - mu)
void channel_sum_g_dot(double sums[2], const float* g, int64_t g_row_stride, const float* x, int64_t x_row_stride,
                       int64_t N, int64_t S, float mu);
void channel_sum_g_dot(double sums[2], const double* g, int64_t g_row_stride, const double* x, int64_t x_row_stride,
                       int64_t N, int64_t S, double mu);
// y = (x - mu) * scale + shift
void channel_normalize(float* y, int64_t y_row_stride, const float* x, int64_t x_row_stride, int64_t N, int64_t S,
                       float mu, float scale, float shift);
void channel_normalize(double* y, int64_t y_row_stride, const double* x, int64_t x_row_stride, int64_t N, int64_t S,
                       double mu, double scale, double shift);
// dx = scale * g - k * (x - mu) - c
void channel_backward_dx(float* dx, int64_t dx_row_stride, const float* g, int64_t g_row_stride, const float* x,
                         int64_t x_row_stride, int64_t N, int64_t S, float mu, float scale, float k, float c);
void channel_backward_dx(double* dx, int64_t dx_row_stride, const double* g, int64_t g_row_stride, const double* x,
                         int64_t x_row_stride, int64_t N, int64_t S, double mu, double scale, double k, double c);

}  // namespace cohort::kernel::vec
