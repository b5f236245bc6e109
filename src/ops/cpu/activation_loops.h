// Contiguous loops around exp, sigmoid and tanh, and an LSTM cell's per-row loops, each compiled
// per ISA (Note [Kernel ISA dispatch] in isa.h) on the vectorisable float functions of
// vector_math.h (Note [Own float exp]).
#pragma once

#include <cstdint>

namespace cohort::kernel::vec {

void exp(float* out, const float* x, int64_t n);
void sigmoid(float* out, const float* x, int64_t n);
void tanh(float* out, const float* x, int64_t n);

// One row of an LSTM step over H hidden units (gate order i, f, g, o as PyTorch's).
// Forward: gates [4H] holds the hidden projection (with its bias) on entry and the activated gates
// on return, after adding the input projection xp [4H]; c = f c_prev + i g, tc = tanh(c), h = o tc.
void lstm_cell_forward(float* gates, const float* xp, const float* c_prev, float* c, float* tc, float* h, int64_t H);
void lstm_cell_forward(double* gates, const double* xp, const double* c_prev, double* c, double* tc, double* h,
                       int64_t H);
// Backward, from the forward's gates (activated), tc and c_prev: gout is the gradient of the step's
// output h (null: none), dh the gradient reaching h from the next step; dc holds the gradient of c
// from the next step and is overwritten with that of c_prev; dg [4H] gets the gates' gradient before
// their activations.
void lstm_cell_backward(const float* gates, const float* tc, const float* c_prev, const float* gout, const float* dh,
                        float* dc, float* dg, int64_t H);
void lstm_cell_backward(const double* gates, const double* tc, const double* c_prev, const double* gout,
                        const double* dh, double* dc, double* dg, int64_t H);

}  // namespace cohort::kernel::vec
