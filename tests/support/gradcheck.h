// gradcheck: compares the analytical Jacobian of a function of tensors (the one autograd computes)
// with central finite differences, perturbing every element of every float64 input in turn.
//
//   EXPECT_TRUE(testing::gradcheck([](const std::vector<Tensor>& x) { return std::vector{x[0] * x[1]}; },
//                                  {a, b}));
//
// Inputs that are not float64 (int64 indices, bool masks) are passed through and not differentiated;
// outputs that are not floating point, or do not require grad, are skipped. A failure names the op,
// the input and output, the element (as a multi-index), the finite-difference value ("expected")
// and the autograd value ("got").
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::testing {

using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Each float64 input is checked as given (its strides are kept: the perturbation is written through
// them); the inputs are not modified when gradcheck returns.
::testing::AssertionResult gradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, double eps = 1e-6,
                                     double atol = 1e-5, double rtol = 1e-3, const std::string& name = "fn");

// The same check on non-contiguous copies of the inputs (same values, laid out as sliced and
// transposed views of larger buffers; 0-d inputs get a storage offset).
::testing::AssertionResult gradcheck_noncontiguous(const TensorFn& fn, const std::vector<Tensor>& inputs,
                                                   double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3,
                                                   const std::string& name = "fn");

// gradgradcheck (PyTorch's torch.autograd.gradgradcheck): checks the second derivatives by running
// gradcheck on the vector-Jacobian product (inputs, grad_outputs) -> d(outputs . grad_outputs)/d(inputs),
// computed with create_graph=true, with respect to the float64 inputs and the grad_outputs.
// grad_outputs (one per floating output that requires grad) are random float64 values, fixed by `seed`.
// A backward that is not differentiable, or whose own derivative is wrong, fails here even when
// gradcheck passes. The finite differences evaluate the same product with create_graph=false (the
// kernels' fast path), so a backward whose two paths disagree fails too.
::testing::AssertionResult gradgradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, double eps = 1e-6,
                                         double atol = 1e-5, double rtol = 1e-3, const std::string& name = "fn",
                                         uint64_t seed = 0);

// A non-contiguous tensor with x's values and dtype: a step-2 slice of a larger buffer, with the dims
// reversed and permuted back, so no two neighbouring elements are adjacent in memory. Does not use
// copy_ or contiguous() (the values are written with plain strided loops).
Tensor make_noncontiguous(const Tensor& x);

// Element `flat` (row-major order) of a tensor of any dtype and strides, as a double.
double element_at(const Tensor& t, int64_t flat);
// Writes v (converted to t's dtype) to element `flat` of t, through its strides; no autograd.
void set_element(const Tensor& t, int64_t flat, double v);
// Multi-index of flat (row-major) element `flat` of a tensor of these sizes, printed as "[1, 0, 2]".
std::string index_string(IntArrayRef sizes, int64_t flat);
// Storage-element offset (relative to data_ptr) of flat element `flat` of a strided tensor.
int64_t strided_offset(IntArrayRef sizes, IntArrayRef strides, int64_t flat);

}  // namespace cohort::testing
