// Entry points of the CPU kernels. Arguments are already checked and outputs allocated by the ops
// in src/ops/; kernels handle any strides.
#pragma once

#include <optional>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// dst = src broadcast to dst's shape, converted to dst's dtype.
void copy(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, const Scalar& value);

enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
// a and b share one dtype; out has it too, or bool for comparisons and logic. Add/Sub scale b by alpha.
void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);

enum class UnaryOp { Neg, Exp, Log, Sqrt, Rsqrt, Abs, Sign, Relu, Sigmoid, Tanh, Square, Reciprocal, Sin, Cos, Erf, Log1p,
                     LogicalNot, IsNan, IsFinite };
// out has in's dtype, or bool for LogicalNot/IsNan/IsFinite.
void unary(UnaryOp op, const Tensor& out, const Tensor& in);
void clamp(const Tensor& out, const Tensor& in, std::optional<Scalar> lo, std::optional<Scalar> hi);
// out = cond ? a : b; cond bool, a and b of out's dtype.
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out = self > threshold ? grad : 0 (ReLU's backward in one pass); grad, self and out of one floating
// dtype, grad and self broadcast to out.
void threshold_backward(const Tensor& out, const Tensor& grad, const Tensor& self, const Scalar& threshold);

enum class ReduceOp { Sum, Mean, Prod, Max, Min, NormP, NormInf, Var, AbsSumPow };
// Reduces `in` over `dims` (sorted, unique) into `out`, whose sizes are in's with the reduced dims
// removed (keepdim is a view of it). param: p for NormP, the correction (0 or 1) for Var.
void reduce(ReduceOp op, const Tensor& out, const Tensor& in, IntArrayRef dims, double param = 0);
// Values and int64 indices of the max (or min) along one dim.
void reduce_with_index(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim);

// Softmax and log-softmax along dim (out contiguous like in).
void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log);

// C = A x B for [b, n, k] x [b, k, m] -> [b, n, m], any strides; C must be contiguous.
void bmm(const Tensor& c, const Tensor& a, const Tensor& b);
// Plain loops, the reference the fast path is tested against.
void bmm_reference(const Tensor& c, const Tensor& a, const Tensor& b);

// Gather/scatter along dim with int64 indices (shapes checked by the caller).
void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index);
void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index);

}  // namespace cohort::kernel
