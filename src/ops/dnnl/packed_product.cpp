// PackedProduct on oneDNN's matmul primitive.
//
// Note [Packed recurrent weight]
// An LSTM layer multiplies the same weight [4H, H] by a small state [N, H] at every step. Given a
// plain weight, oneDNN's matmul kernel (brgemm) copies it into its blocked layout on every call: for
// a 32 x 512 by 512 x 2048 step that copy of 4 MiB cost a quarter of the step (742 against 556 us
// on one Sapphire Rapids core, 388 against 327 us on two: the two primitives timed over 2000 calls
// each). Here the primitive is created with the weight's layout left to oneDNN
// (format_tag::any), the weight is reordered into that layout once per sequence, and every step runs
// on the packed copy, as oneDNN's own RNN primitive does. The thread count is fixed when the product
// is made (Note [oneDNN threads]): a sequence runs on the threads it started with.
#include "ops/cpu/packed_product.h"

#include <dnnl.hpp>

#include <algorithm>
#include <unordered_map>

#include "cohort/core/error.h"
#include "ops/dnnl/engine.h"
#include "ops/internal.h"
#include "ops/dnnl/threads.h"

namespace cohort::kernel {

using dnnl::memory;

namespace {

// Floating-point operations that pay for one more thread (as the matmul's, Note [oneDNN threads]).
constexpr double kGrainFlops = 5e5;

memory::desc plain(const Tensor& t) {
  return memory::desc({t.size(0), t.size(1)}, memory::data_type::f32, {t.stride(0), t.stride(1)});
}

}  // namespace

struct PackedProduct::State {
  int threads = 1;
  int64_t rows = 0, k = 0, n = 0;
  dnnl::matmul prim;
  Tensor packed;  // the packed weight's bytes, from the caching allocator (Note [Caching allocator])
  memory a, w, bias, c;
  // Made once, as matmul.cpp's Prepared: a step only points a and c at its tensors (the handles in
  // the map share the objects).
  std::unordered_map<int, memory> args;
};

bool PackedProduct::available(const Tensor& w) { return w.dtype() == kFloat32 && w.dim() == 2; }

PackedProduct::PackedProduct(const Tensor& w, const Tensor& bias, int64_t rows) : state_(std::make_unique<State>()) {
  COHORT_CHECK(available(w), "PackedProduct: expected a 2-d float32 weight, got ", w.dtype(), " ", w.sizes());
  State& s = *state_;
  s.rows = rows, s.k = w.size(0), s.n = w.size(1);
  s.threads = dnnl_threads_for(2.0 * static_cast<double>(rows * s.k * s.n), kGrainFlops);
  DnnlThreadsGuard guard(s.threads);
  const memory::desc ad({rows, s.k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc cd({rows, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc wd({s.k, s.n}, memory::data_type::f32, memory::format_tag::any);
  const bool with_bias = bias.defined();
  const memory::desc bd = with_bias ? memory::desc({1, s.n}, memory::data_type::f32, memory::format_tag::ab)
                                    : memory::desc();
  const dnnl::matmul::primitive_desc pd(
      with_bias ? dnnl::matmul::desc(ad, wd, bd, cd) : dnnl::matmul::desc(ad, wd, cd), dnnl_engine());
  s.prim = dnnl::matmul(pd);
  s.a = memory(ad, dnnl_engine(), DNNL_MEMORY_NONE);
  s.c = memory(cd, dnnl_engine(), DNNL_MEMORY_NONE);
  const int64_t floats = static_cast<int64_t>((pd.weights_desc().get_size() + sizeof(float) - 1) / sizeof(float));
  s.packed = detail::make_empty({floats}, kFloat32, w.device());
  s.w = memory(pd.weights_desc(), dnnl_engine(), s.packed.data_ptr());
  memory given(plain(w), dnnl_engine(), w.data_ptr());
  dnnl::reorder(given, s.w).execute(dnnl_stream(), given, s.w);
  if (with_bias) {
    const Tensor b = bias.contiguous();
    s.bias = memory(bd, dnnl_engine());
    std::copy_n(b.data_ptr<float>(), s.n, static_cast<float*>(s.bias.get_data_handle()));
  }
  s.args = {{DNNL_ARG_SRC, s.a}, {DNNL_ARG_WEIGHTS, s.w}, {DNNL_ARG_DST, s.c}};
  if (with_bias) s.args.insert({DNNL_ARG_BIAS, s.bias});
  dnnl_stream().wait();
}

PackedProduct::~PackedProduct() = default;

void PackedProduct::run(const Tensor& c, const Tensor& a) {
  State& s = *state_;
  COHORT_ASSERT(a.is_contiguous() && c.is_contiguous() && a.size(0) == s.rows && a.size(1) == s.k &&
                c.size(0) == s.rows && c.size(1) == s.n);
  DnnlThreadsGuard guard(s.threads);
  s.a.set_data_handle(a.data_ptr());
  s.c.set_data_handle(c.data_ptr());
  s.prim.execute(dnnl_stream(), s.args);
  dnnl_stream().wait();
}

}  // namespace cohort::kernel
