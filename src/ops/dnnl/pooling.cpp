// 2-d float32 average pooling on oneDNN, forward and backward, on the user's plain nchw buffers
// (max pooling is plain loops: Note [Max pooling loops] in ops/cpu/max_pool.cpp). Primitives are
// cached per shape, per thread and thread count (Note [oneDNN threads] in ops/dnnl/threads.h).
// N batch, C channels, H W input, P Q output, kH kW window.
#include <dnnl.hpp>

#include <array>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/dnnl/engine.h"
#include "ops/dnnl/primitive_cache.h"
#include "ops/dnnl/threads.h"

namespace cohort::kernel {

namespace {

using dnnl::memory;
constexpr auto kF32 = memory::data_type::f32;

// Window elements visited (input plus output elements for the backward's scatter) that pay for
// one more thread (Note [oneDNN threads]).
constexpr double kPoolGrain = 1 << 16;

// The thread count for pooling `in` to `out` (either direction).
int pool_threads(const Tensor& in, const Tensor& out, const Pool2dParams& p) {
  const double work = static_cast<double>(out.numel()) * static_cast<double>(p.kernel[0] * p.kernel[1]) +
                      static_cast<double>(in.numel());
  return dnnl_threads_for(work, kPoolGrain);
}

enum class Kind : int64_t { Forward, Backward };

// Right/bottom padding that makes oneDNN's floor formula give PyTorch's output size (ceil_mode
// adds windows that read past the padding).
int64_t pad_hi(int64_t in, int64_t out, int64_t span, int64_t stride, int64_t pad) {
  int64_t hi = pad;
  while ((in - span + pad + hi) / stride + 1 < out) ++hi;
  return hi;
}

// A primitive with its memory objects and argument map, made once: a call only points the memory
// objects at its tensors (creating them per call cost as much as a small pooling). The input side
// `in` is the source (forward) or the source's gradient (backward), `out` likewise.
struct Prepared {
  dnnl::primitive prim;
  memory in, out;
  std::unordered_map<int, memory> args;
};

Prepared with_memory(Kind kind, const dnnl::pooling_v2_forward::primitive_desc& fwd, dnnl::primitive prim) {
  Prepared p{std::move(prim), memory(fwd.src_desc(), dnnl_engine(), DNNL_MEMORY_NONE),
             memory(fwd.dst_desc(), dnnl_engine(), DNNL_MEMORY_NONE), {}};
  p.args = kind == Kind::Forward
               ? std::unordered_map<int, memory>{{DNNL_ARG_SRC, p.in}, {DNNL_ARG_DST, p.out}}
               : std::unordered_map<int, memory>{{DNNL_ARG_DIFF_SRC, p.in}, {DNNL_ARG_DIFF_DST, p.out}};
  return p;
}

// Points the memory objects at this call's tensors and runs the primitive.
void run(Prepared& prep, const Tensor& in, const Tensor& out) {
  prep.in.set_data_handle(in.data_ptr());
  prep.out.set_data_handle(out.data_ptr());
  prep.prim.execute(dnnl_stream(), prep.args);
  dnnl_stream().wait();
}

Prepared prepare(Kind kind, const Tensor& in, const Tensor& out, const Pool2dParams& p) {
  const auto algo = p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                        : dnnl::algorithm::pooling_avg_exclude_padding;
  memory::desc src({in.size(0), in.size(1), in.size(2), in.size(3)}, kF32, memory::format_tag::nchw);
  memory::desc dst({out.size(0), out.size(1), out.size(2), out.size(3)}, kF32, memory::format_tag::nchw);
  memory::dims strides{p.stride[0], p.stride[1]}, kernel{p.kernel[0], p.kernel[1]}, dilation{0, 0};
  memory::dims lo{p.padding[0], p.padding[1]}, hi(2);
  for (int d = 0; d < 2; ++d) hi[d] = pad_hi(in.size(2 + d), out.size(2 + d), kernel[d], strides[d], lo[d]);
  dnnl::pooling_v2_forward::primitive_desc fwd(
      dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, algo, src, dst, strides, kernel, dilation,
                                     lo, hi),
      dnnl_engine());
  if (kind == Kind::Forward) return with_memory(kind, fwd, dnnl::pooling_v2_forward(fwd));
  dnnl::pooling_v2_backward::primitive_desc bwd(
      dnnl::pooling_v2_backward::desc(algo, src, dst, strides, kernel, dilation, lo, hi), dnnl_engine(), fwd);
  return with_memory(kind, fwd, dnnl::pooling_v2_backward(bwd));
}

// What a pooling primitive is made for (with the thread count, which PrimitiveCache adds). Call with
// omp_get_max_threads() at the count the primitive should run on.
Prepared& cached(Kind kind, const Tensor& in, const Tensor& out, const Pool2dParams& p) {
  thread_local PrimitiveCache<14, Prepared> cache(64);
  const PrimitiveCache<14, Prepared>::Key key{static_cast<int64_t>(kind), in.size(0), in.size(1), in.size(2),
                                              in.size(3), out.size(2), out.size(3), p.kernel[0], p.kernel[1],
                                              p.stride[0], p.stride[1], p.padding[0], p.padding[1],
                                              p.count_include_pad};
  return cache.get(key, [&] { return prepare(kind, in, out, p); });
}

// oneDNN divides by the whole window when it includes padding; PyTorch clips the window at the padded
// input first, which differs once ceil_mode adds a window reaching past the padding.
bool avg_matches_pytorch(const Tensor& in, const Tensor& out, const Pool2dParams& p) {
  if (!p.count_include_pad) return true;
  for (int d = 0; d < 2; ++d)
    if ((out.size(2 + d) - 1) * p.stride[d] + p.kernel[d] > in.size(2 + d) + 2 * p.padding[d]) return false;
  return true;
}

bool use_reference(const Tensor& in, const Tensor& out) {
  return in.dtype() != kFloat32 || in.numel() == 0 || out.numel() == 0;
}

}  // namespace

void avg_pool2d_forward(const Tensor& out, const Tensor& in, const Pool2dParams& p) {
  if (use_reference(in, out) || !avg_matches_pytorch(in, out, p)) return avg_pool2d_forward_reference(out, in, p);
  NoGradGuard no_grad;
  Tensor x = in.contiguous();
  DnnlThreadsGuard guard(pool_threads(x, out, p));
  Prepared& prep = cached(Kind::Forward, x, out, p);
  run(prep, x, out);
}

void avg_pool2d_backward(const Tensor& din, const Tensor& dout, const Pool2dParams& p) {
  if (use_reference(din, dout) || !avg_matches_pytorch(din, dout, p)) return avg_pool2d_backward_reference(din, dout, p);
  NoGradGuard no_grad;
  Tensor dy = dout.contiguous();
  DnnlThreadsGuard guard(pool_threads(din, dy, p));
  Prepared& prep = cached(Kind::Backward, din, dy, p);
  run(prep, din, dy);
}

}  // namespace cohort::kernel
