// The op table (STYLE.md section 5): one row per op with its sample shapes, the cohort op, a naive
// float64 reference written with plain loops, the input domain, tolerances and whether it is
// differentiable. Rows live in tests/ops/op_table_<area>_test.cpp and register themselves with
// COHORT_OP_ROWS; tests/ops/op_table_test.cpp runs every row through the generic checks:
// reference, non-contiguous inputs, gradcheck and gradgradcheck (float64) and float32-vs-float64
// agreement; rows that opt in (.specials) also run with NaN and +-inf among their inputs.
//
// Adding an op adds a row:
//   {.name = "exp", .samples = {{{2, 3}}, {{}}},
//    .op = [](const In& x) { return Out{exp(x[0])}; },
//    .ref = [](const Refs& x) { return Refs{map(x[0], [](double v) { return std::exp(v); })}; }},
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"
#include "support/gradcheck.h"

namespace cohort::testing {

// A reference value: row-major doubles with a shape, and the dtype the op's result must have.
struct Nd {
  Shape shape;
  std::vector<double> v;
  DType dtype = kFloat64;

  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  int64_t size(int64_t d) const { return shape[d < 0 ? d + dim() : d]; }
  int64_t flat(const std::vector<int64_t>& idx) const;  // row-major offset of a multi-index
  double at(const std::vector<int64_t>& idx) const { return v[flat(idx)]; }
  double& at(const std::vector<int64_t>& idx) { return v[flat(idx)]; }
};
using Refs = std::vector<Nd>;
using In = std::vector<Tensor>;
using Out = std::vector<Tensor>;
using RefFn = std::function<Refs(const Refs&)>;

Nd zeros_nd(Shape shape, DType dtype = kFloat64);
Nd to_nd(const Tensor& t);  // reads through strides; no cohort op involved
std::vector<int64_t> unravel(IntArrayRef shape, int64_t flat);

// --- Plain-loop building blocks for references ------------------------------------------------
// f on every element.
Nd map(const Nd& x, const std::function<double(double)>& f, DType dtype = kFloat64);
// f on broadcast pairs (numpy rules).
Nd map2(const Nd& a, const Nd& b, const std::function<double(double, double)>& f, DType dtype = kFloat64);
// c ? a : b with all three broadcast.
Nd where_nd(const Nd& c, const Nd& a, const Nd& b);
// f over the values of each reduced group (dims empty: all dims), in row-major order.
Nd reduce(const Nd& x, std::vector<int64_t> dims, bool keepdim,
          const std::function<double(const std::vector<double>&)>& f, DType dtype = kFloat64);
// f maps each 1-d lane along dim to a lane of the same length (softmax).
Nd along(const Nd& x, int64_t dim, const std::function<std::vector<double>(const std::vector<double>&)>& f);
// out[idx] = f(idx) for every multi-index of `shape` (views, gathers, joins).
Nd build(Shape shape, const std::function<double(const std::vector<int64_t>&)>& f, DType dtype = kFloat64);

// --- Input domains ------------------------------------------------------------------------------
// Real: distinct values in [lo, hi] on a jittered grid, shared by all Real inputs with the same
// range, so that no two values tie and none sits within 0.1 grid cells of a cell centre or edge
// (0 and the range ends are such points: kinks of relu/abs/sign and ties of max are avoided).
// Integer: float values that are whole numbers in [lo, hi] (ties on purpose, for eq/ne).
// Bool: random true/false. Index: int64 in [0, hi).
enum class Kind { Real, Integer, Bool, Index };
struct Domain {
  Kind kind = Kind::Real;
  double lo = -2, hi = 2;
};
inline Domain real(double lo, double hi) { return {Kind::Real, lo, hi}; }
inline Domain positive() { return {Kind::Real, 0.5, 2.0}; }
inline Domain integers(double lo, double hi) { return {Kind::Integer, lo, hi}; }
inline Domain boolean() { return {Kind::Bool, 0, 1}; }
inline Domain index_below(int64_t high) { return {Kind::Index, 0, static_cast<double>(high)}; }

struct OpRow {
  std::string name;                       // unique; letters, digits and _ (a gtest name)
  std::vector<std::vector<Shape>> samples;  // input shapes, one list per sample
  TensorFn op;                            // the cohort op; may return several outputs
  RefFn ref;                              // float64 reference with plain loops
  std::vector<Domain> domains = {Domain{}};  // per input; the last one repeats
  double atol = 1e-12, rtol = 1e-10;      // float64 op against the reference
  bool differentiable = true;
  bool contiguous_only = false;  // view(): PyTorch requires compatible strides, so no strided run
  bool fixed_dtype = false;      // to(dtype): the result dtype does not follow the input's
  double f32_atol = 1e-5, f32_rtol = 1e-4;  // float32 run against the float64 run
  double grad_eps = 1e-6, grad_atol = 1e-5, grad_rtol = 1e-3;
  // Why PyTorch itself has no double backward for this op (one line); empty: gradgradcheck runs.
  std::string no_gradgrad;
  // Special values: each sample runs again with NaN, +inf and -inf dealt among the elements of its
  // Real and Integer inputs (about half of them, see special_inputs), float64 and float32, and the
  // op's values (not its gradients) must match the reference, which for such a row is written with
  // PyTorch's semantics for them (NaN propagation, which NaN an argmax picks, inf - inf).
  bool specials = false;
  // Input shapes used by that check only, after the row's samples: long runs that reach the
  // vectorised loops, whose handling of NaN is where kernels go wrong.
  std::vector<std::vector<Shape>> special_samples;
};

// Inputs for one sample: Real and Integer inputs in `float_dtype`, deterministic per (row, sample).
std::vector<Tensor> make_inputs(const OpRow& row, size_t sample, DType float_dtype);
// The inputs of the special-values check: sample s < samples.size() is the row's sample s, the
// rest index special_samples; the usual values with about a sixth of the Real and Integer elements
// each turned into NaN, +inf and -inf (deterministic per (row, sample)).
std::vector<Tensor> special_inputs(const OpRow& row, size_t sample, DType float_dtype);
size_t special_sample_count(const OpRow& row);

// The generic checks; each names the op, the input shapes, the output element, expected and got.
::testing::AssertionResult check_reference(const OpRow& row, size_t sample, bool noncontiguous);
::testing::AssertionResult check_gradients(const OpRow& row, size_t sample, bool noncontiguous);
// gradgradcheck (float64) of a differentiable row without a no_gradgrad reason.
::testing::AssertionResult check_gradgrad(const OpRow& row, size_t sample, bool noncontiguous);
::testing::AssertionResult check_float32(const OpRow& row, size_t sample);
// The special-values check of one sample: values against the reference, in float_dtype (float32:
// with the row's float32 tolerances), on contiguous or non-contiguous inputs.
::testing::AssertionResult check_specials(const OpRow& row, size_t sample, DType float_dtype, bool noncontiguous);

// The registry: every area file adds its rows once, at static-initialisation time.
std::vector<OpRow>& op_table();
struct RowRegistrar {
  RowRegistrar(const char* area, std::vector<OpRow> (*make)());
};
std::vector<std::pair<std::string, size_t>>& op_table_areas();  // (area, row count)
#define COHORT_OP_ROWS(area, fn) static const ::cohort::testing::RowRegistrar kRegistrar_##fn(area, fn)

}  // namespace cohort::testing
