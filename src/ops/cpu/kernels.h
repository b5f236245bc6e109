// Entry points of the CPU kernels. Arguments are already checked and outputs allocated by the ops
// in src/ops/; kernels handle any strides.
#pragma once

#include <cstddef>
#include <optional>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// dst = src broadcast to dst's shape, converted to dst's dtype.
void copy(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, const Scalar& value);

// Note [Op tables]
// The op enums below end in kCount, the number of ops. Each family's ops are one table indexed by
// its enum (kUnary in unary.cpp, kBinary in binary.cpp, kReduce in reduction.cpp): a row holds the
// op's name, its backward node, what the backward saves, the derivative and the result dtype, and
// the table static_asserts is_op_table (one row per op, in enum order). The kernels switch over
// the same enums with every op listed and no default, and the library builds with -Werror=switch, so an op
// without its kernel or without its row does not compile. Adding an op: its enumerator (before
// kCount), its kernel case, its row, its public function.
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Remainder, kCount };
// a and b share one dtype; out has it too, or bool for comparisons and logic. Add/Sub scale b by alpha.
void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);

enum class UnaryOp { Neg, Exp, Log, Sqrt, Rsqrt, Abs, Sign, Relu, Sigmoid, Tanh, Square, Reciprocal, Sin, Cos, Erf, Log1p,
                     LogicalNot, IsNan, IsFinite, kCount };
// out has in's dtype, or bool for LogicalNot/IsNan/IsFinite.
void unary(UnaryOp op, const Tensor& out, const Tensor& in);
void clamp(const Tensor& out, const Tensor& in, std::optional<Scalar> lo, std::optional<Scalar> hi);
// out = cond ? a : b; cond bool, a and b of out's dtype.
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out = self > threshold ? grad : 0 (ReLU's backward in one pass); grad, self and out of one floating
// dtype, grad and self broadcast to out.
void threshold_backward(const Tensor& out, const Tensor& grad, const Tensor& self, const Scalar& threshold);

enum class ReduceOp { Sum, Mean, Prod, Max, Min, NormP, NormInf, Var, kCount };
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

// Whether `rows` (each with a member `op`) is an op table of Op: one row per op, row i for op i.
template <class Op, class Row, size_t N>
constexpr bool is_op_table(const Row (&rows)[N]) {
  if (N != static_cast<size_t>(Op::kCount)) return false;
  for (size_t i = 0; i < N; ++i)
    if (rows[i].op != static_cast<Op>(i)) return false;
  return true;
}

}  // namespace cohort::kernel
