// 2-d float32 and bfloat16 convolution on oneDNN: forward, backward data, backward weights (+ bias).
// The user's tensors are plain nchw / oihw (goihw when grouped); oneDNN picks its own layouts
// (format `any`) and we reorder in and out, as PyTorch does. Primitives are cached per dtype and
// shape, per thread. N batch, C/O in/out channels, G groups, H W input, P Q output, kH kW kernel.
//
// Note [bfloat16 convolution]
// bfloat16 layers run on oneDNN's bfloat16 kernels (AMX or AVX512_BF16 here): bfloat16 src,
// weights, dst and bias, float32 accumulation, one rounding per output. The weight gradient (and
// the bias gradient) is accumulated over the whole batch, so oneDNN writes it in float32 and the
// reorder into the user's bfloat16 tensor rounds it once, rather than rounding partial sums. The
// direct algorithm only: Winograd (oneDNN's and ours) stays float32. float16, and bfloat16 where
// oneDNN has no kernel (no AVX512_CORE) or the layer takes the plain loops, run on float32 copies
// (`widen`, Note [Reduced floating dtypes] in src/ops/README.md): correct, not fast; oneDNN 2.6 has
// no float16 convolution on the CPU.
//
// The small-map layers that run as matmuls: Note [bfloat16 weight gradient as a matmul] and Note
// [bfloat16 small-map convolutions as matmuls] in conv_matmul.cpp.
#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/creation.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/dnnl/bfloat16.h"
#include "ops/cpu/conv_workspace.h"
#include "ops/dnnl/conv_matmul.h"
#include "ops/dnnl/engine.h"
#include "ops/dnnl/primitive_cache.h"
#include "ops/dnnl/threads.h"
#include "ops/dnnl/winograd.h"
#include "ops/internal.h"

namespace cohort::kernel {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

enum class Kind : int64_t { Forward, BackwardData, BackwardWeights };

std::atomic<ConvAlgorithm> g_algorithm{ConvAlgorithm::Auto};

// Note [Winograd convolution]
// Winograd F(4x4, 3x3) is faster than direct convolution on 3x3, stride-1 layers with enough 4x4
// output tiles. Two implementations: oneDNN's (AVX-512 only in 2.6, forward and both backwards,
// fused), and ours on oneDNN's sgemm (winograd.cpp) everywhere else. Measured against oneDNN's
// direct kernel (`bench/conv_algorithms.cpp`, forward + backward):
// - oneDNN's, on AVX-512: 1.7-1.9x faster on ResNet-18's 64- and 128-channel stages at batch 32,
//   1.5-1.7x on the 256-channel one, 1.2x on its 512-channel 4x4 maps (32 tiles), and slower only
//   with few tiles (batch 4 of those maps, 4 tiles: 3x slower). oneDNN's own `convolution_auto`
//   looks at the batch alone (it keeps batch 8 of 56x56 maps on the direct kernel, twice as slow
//   there), so the rule is ours: at least 32 tiles.
// - ours, on AVX2 (1 thread, same bench): 1.5-1.8x faster forward and 1.4-2x forward + backward on
//   ResNet-18's four stages at batch 32 (the 512-channel 4x4 maps included: 32 tiles) and on
//   bench/workloads.cpp's 8x64x56x56 layer (W5). Its transforms cost per tile what they cost whatever the channels, and
//   more per tile on short rows of tiles, so it loses with few channels and on sizes that are not a
//   multiple of 4 (the partial tiles are computed whole): forward + backward at batch 8, 14x14,
//   32 channels 1.5x slower (the 12 serial branches of examples/grouped_branches.cpp), 64 channels 1.15x slower; at batch 32,
//   7x7, 128 channels 1.4x slower; and with 4 tiles (batch 4 of 4x4 maps, 512 channels: 2x slower,
//   transforming the 512 x 512 kernels costs more than the products save). Rule: at least 32
//   tiles, 64 input and output channels, an output whose sides are multiples of 4, no groups (the
//   groups=12 bottleneck of examples/grouped_branches.cpp, 32 channels a group, ran 2x slower; ConvAlgorithm::Winograd still
//   runs grouped layers on it).
// Where oneDNN has no Winograd kernel for a layer (channel counts it cannot block), creating it
// fails and the layer stays direct.
bool onednn_winograd();

bool winograd_shape(const Tensor& in, const Tensor& weight, const Tensor& out, const Conv2dParams& p) {
  return in.dtype() == kFloat32 && winograd::fits(weight, p) && p.groups == 1 && in.size(0) > 0 && out.size(2) > 0;
}

dnnl::algorithm choose_algorithm(const Tensor& in, const Tensor& weight, const Tensor& out, const Conv2dParams& p) {
  const ConvAlgorithm want = g_algorithm.load(std::memory_order_relaxed);
  if (want == ConvAlgorithm::Direct || !winograd_shape(in, weight, out, p) || !onednn_winograd())
    return dnnl::algorithm::convolution_direct;
  const int64_t tiles = winograd::tile_count(in.size(0), out.size(2), out.size(3));
  if (want == ConvAlgorithm::Auto && tiles < 32) return dnnl::algorithm::convolution_direct;
  return dnnl::algorithm::convolution_winograd;
}

// Whether the layer (batch x out) runs on our Winograd rather than on a oneDNN primitive.
bool own_winograd(int64_t batch, const Tensor& weight, const Tensor& out, const Conv2dParams& p) {
  const ConvAlgorithm want = g_algorithm.load(std::memory_order_relaxed);
  if (want == ConvAlgorithm::Direct || weight.dtype() != kFloat32 || onednn_winograd() || !winograd::fits(weight, p))
    return false;
  if (want == ConvAlgorithm::Winograd) return true;
  const int64_t P = out.size(2), Q = out.size(3);
  return p.groups == 1 && std::min(weight.size(0), weight.size(1)) >= 64 && P % 4 == 0 && Q % 4 == 0 &&
         winograd::tile_count(batch, P, Q) >= 32;
}

// The convolution's geometry as oneDNN wants it (its dilation is PyTorch's minus one).
struct Geometry {
  memory::dims src, weights, bias, dst, strides, dilates, pad_l, pad_r;
  bool grouped;
  dnnl::algorithm algorithm;
  memory::data_type dt;  // of every argument but the weight and bias gradients, which are float32
  Geometry(const Tensor& in, const Tensor& weight, const Tensor& out, const Conv2dParams& p, dnnl::algorithm alg)
      : algorithm(alg), dt(in.dtype() == kBFloat16 ? memory::data_type::bf16 : kF32) {
    const int64_t G = p.groups, O = weight.size(0);
    src = {in.size(0), in.size(1), in.size(2), in.size(3)};
    dst = {out.size(0), out.size(1), out.size(2), out.size(3)};
    grouped = G > 1;
    weights = grouped ? memory::dims{G, O / G, weight.size(1), weight.size(2), weight.size(3)}
                      : memory::dims{O, weight.size(1), weight.size(2), weight.size(3)};
    bias = {O};
    strides = {p.stride[0], p.stride[1]};
    dilates = {p.dilation[0] - 1, p.dilation[1] - 1};
    pad_l = {p.pad_lo[0], p.pad_lo[1]};
    pad_r = {p.pad_hi[0], p.pad_hi[1]};
  }
  memory::desc plain_src() const { return {src, dt, Tag::nchw}; }
  memory::desc plain_dst() const { return {dst, dt, Tag::nchw}; }
  memory::desc plain_weights() const { return {weights, dt, grouped ? Tag::goihw : Tag::oihw}; }
  memory::desc plain_bias() const { return {bias, dt, Tag::x}; }
  memory::desc any(const memory::dims& d) const { return {d, dt, Tag::any}; }
  // The weight and bias gradients as oneDNN accumulates them (Note [bfloat16 convolution]).
  memory::desc any_diff_weights() const { return {weights, kF32, Tag::any}; }
  memory::desc diff_bias() const { return {bias, kF32, Tag::x}; }

  // Always forward_training, also without autograd: oneDNN's Winograd for inference is another
  // kernel (F(2x2, 3x3)) that measured up to 8x slower here.
  dnnl::convolution_forward::primitive_desc forward_pd(bool with_bias) const {
    const auto prop = dnnl::prop_kind::forward_training;
    auto d = with_bias ? dnnl::convolution_forward::desc(prop, algorithm, any(src), any(weights), plain_bias(),
                                                         any(dst), strides, dilates, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(prop, algorithm, any(src), any(weights), any(dst), strides,
                                                         dilates, pad_l, pad_r);
    return {d, dnnl_engine()};
  }
};

// Whether oneDNN has a Winograd kernel for this CPU.
bool onednn_winograd() {
  // Asks oneDNN for a Winograd forward of a layer all its Winograd kernels take (3x3, stride 1,
  // 16 channels); it refuses where it has none for this CPU.
  static const bool available = [] {
    Conv2dParams p;
    p.pad_lo = p.pad_hi = {1, 1};
    const Tensor in = empty({1, 16, 8, 8}), weight = empty({16, 16, 3, 3});
    try {
      Geometry(in, weight, in, p, dnnl::algorithm::convolution_winograd).forward_pd(false);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}


// One argument of a primitive: the user's plain layout, the primitive's layout, and the reorder
// between them when they differ (user -> primitive for inputs, primitive -> user for outputs).
struct Arg {
  int id;
  memory::desc user, internal;
  bool output;
  std::optional<dnnl::reorder> reorder;
};

struct Prepared {
  dnnl::primitive prim;
  std::vector<Arg> args;
};

Arg make_arg(int id, const memory::desc& user, const memory::desc& internal, bool output) {
  Arg a{id, user, internal, output, std::nullopt};
  if (user != internal)
    a.reorder = output ? dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), internal, dnnl_engine(), user))
                       : dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), user, dnnl_engine(), internal));
  return a;
}

Prepared prepare(Kind kind, const Geometry& g, bool with_bias) {
  auto fwd = g.forward_pd(with_bias || kind == Kind::BackwardWeights);
  switch (kind) {
    case Kind::Forward: {
      Prepared r{dnnl::convolution_forward(fwd),
                 {make_arg(DNNL_ARG_SRC, g.plain_src(), fwd.src_desc(), false),
                  make_arg(DNNL_ARG_WEIGHTS, g.plain_weights(), fwd.weights_desc(), false),
                  make_arg(DNNL_ARG_DST, g.plain_dst(), fwd.dst_desc(), true)}};
      if (with_bias) r.args.push_back(make_arg(DNNL_ARG_BIAS, g.plain_bias(), fwd.bias_desc(), false));
      return r;
    }
    case Kind::BackwardData: {
      dnnl::convolution_backward_data::desc d(g.algorithm, g.any(g.src), g.any(g.weights), g.any(g.dst), g.strides,
                                              g.dilates, g.pad_l, g.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(d, dnnl_engine(), fwd);
      return {dnnl::convolution_backward_data(pd),
              {make_arg(DNNL_ARG_DIFF_DST, g.plain_dst(), pd.diff_dst_desc(), false),
               make_arg(DNNL_ARG_WEIGHTS, g.plain_weights(), pd.weights_desc(), false),
               make_arg(DNNL_ARG_DIFF_SRC, g.plain_src(), pd.diff_src_desc(), true)}};
    }
    case Kind::BackwardWeights: {
      auto d = with_bias ? dnnl::convolution_backward_weights::desc(g.algorithm, g.any(g.src), g.any_diff_weights(),
                                                                    g.diff_bias(), g.any(g.dst), g.strides,
                                                                    g.dilates, g.pad_l, g.pad_r)
                         : dnnl::convolution_backward_weights::desc(g.algorithm, g.any(g.src), g.any_diff_weights(),
                                                                    g.any(g.dst), g.strides, g.dilates, g.pad_l,
                                                                    g.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(d, dnnl_engine(), fwd);
      Prepared r{dnnl::convolution_backward_weights(pd),
                 {make_arg(DNNL_ARG_SRC, g.plain_src(), pd.src_desc(), false),
                  make_arg(DNNL_ARG_DIFF_DST, g.plain_dst(), pd.diff_dst_desc(), false),
                  make_arg(DNNL_ARG_DIFF_WEIGHTS, g.plain_weights(), pd.diff_weights_desc(), true)}};
      if (with_bias) r.args.push_back(make_arg(DNNL_ARG_DIFF_BIAS, g.plain_bias(), pd.diff_bias_desc(), true));
      return r;
    }
  }
  COHORT_ASSERT(false);
}

// Falls back to the direct algorithm where oneDNN has no Winograd kernel for the layer.
Prepared prepare(Kind kind, const Tensor& in, const Tensor& weight, const Tensor& out, bool with_bias,
                 const Conv2dParams& p) {
  const dnnl::algorithm alg = choose_algorithm(in, weight, out, p);
  if (alg != dnnl::algorithm::convolution_direct) {
    try {
      return prepare(kind, Geometry(in, weight, out, p, alg), with_bias);
    } catch (const dnnl::error&) {
    }
  }
  return prepare(kind, Geometry(in, weight, out, p, dnnl::algorithm::convolution_direct), with_bias);
}

Prepared& cached(Kind kind, const Tensor& in, const Tensor& weight, const Tensor& out, bool with_bias,
                 const Conv2dParams& p) {
  thread_local PrimitiveCache<22, Prepared> cache(64);
  const PrimitiveCache<22, Prepared>::Key key{static_cast<int64_t>(kind), static_cast<int64_t>(in.dtype()), in.size(0), in.size(1), in.size(2),
                                              in.size(3), weight.size(0), weight.size(2), weight.size(3),
                                              out.size(2), out.size(3), p.stride[0], p.stride[1], p.pad_lo[0],
                                              p.pad_lo[1], p.pad_hi[0], p.pad_hi[1], p.dilation[0], p.dilation[1],
                                              p.groups, with_bias,
                                              static_cast<int64_t>(g_algorithm.load(std::memory_order_relaxed))};
  return cache.get(key, [&] { return prepare(kind, in, weight, out, with_bias, p); });
}

// Runs a prepared primitive on the user's buffers (by argument id, in the order of prep.args),
// reordering into scratch buffers where the primitive wants another layout. The scratch comes from
// cohort's caching allocator: oneDNN's own mmaps fresh pages for every call (megabytes each), whose
// page faults cost as much as the reorder (ResNet-18 at batch 32: 65 MB less peak RSS, 20% fewer
// page faults). `staged` carries inputs already in a primitive's layout from one run to the next:
// the two backward passes both read diff_dst, which is then reordered once.
struct StagedInput {
  memory::desc desc;
  memory mem;
  Tensor scratch;
};
using Staged = std::unordered_map<int, StagedInput>;  // by argument id

void run(Prepared& prep, const std::vector<void*>& buffers, Device device, Staged* staged = nullptr) {
  dnnl::stream& stream = dnnl_stream();
  std::unordered_map<int, memory> args;
  std::vector<std::pair<memory, memory>> write_back;  // (scratch, user)
  std::vector<Tensor> scratch_buffers;
  for (size_t i = 0; i < prep.args.size(); ++i) {
    Arg& a = prep.args[i];
    memory user(a.user, dnnl_engine(), buffers[i]);
    if (!a.reorder) {
      args.emplace(a.id, user);
      continue;
    }
    if (staged && !a.output) {
      auto it = staged->find(a.id);
      if (it != staged->end() && it->second.desc == a.internal) {
        args.emplace(a.id, it->second.mem);
        continue;
      }
    }
    const int64_t floats = static_cast<int64_t>((a.internal.get_size() + sizeof(float) - 1) / sizeof(float));
    scratch_buffers.push_back(detail::make_empty({floats}, kFloat32, device));
    memory scratch(a.internal, dnnl_engine(), scratch_buffers.back().data_ptr());
    if (a.output) {
      write_back.emplace_back(scratch, user);
    } else {
      a.reorder->execute(stream, user, scratch);
      if (staged) (*staged)[a.id] = {a.internal, scratch, scratch_buffers.back()};
    }
    args.emplace(a.id, scratch);
  }
  prep.prim.execute(stream, args);
  size_t k = 0;
  for (Arg& a : prep.args)
    if (a.output && a.reorder) {
      a.reorder->execute(stream, write_back[k].first, write_back[k].second);
      ++k;
    }
  stream.wait();
}

// Multiply-adds x 2 of the convolution (each of its three passes does as many): small layers, such
// as the blitz CNN's at batch 4, run on one thread (Note [oneDNN threads]), with matmul's grain.
int conv_threads(const Tensor& weight, const Tensor& out) {
  const double flops = 2.0 * static_cast<double>(out.numel()) * static_cast<double>(weight.numel() / weight.size(0));
  return dnnl_threads_for(flops, 5e5);
}

// oneDNN takes a negative right padding (a transposed convolution's output_padding, Note
// [Transposed convolution] in src/ops/convolution.cpp) only above -stride; past that (an
// output_padding that only dilation allows) the plain loops run.
bool outside_onednn(const Tensor& a, const Tensor& b, const Tensor& c, const Conv2dParams& p) {
  return a.numel() == 0 || b.numel() == 0 || c.numel() == 0 || p.pad_hi[0] + p.stride[0] <= 0 ||
         p.pad_hi[1] + p.stride[1] <= 0;
}

bool use_reference(const Tensor& a, const Tensor& b, const Tensor& c, const Conv2dParams& p) {
  return (a.dtype() != kFloat32 && a.dtype() != kBFloat16) || outside_onednn(a, b, c, p);
}

// Whether oneDNN has bfloat16 convolution kernels for this CPU.
bool native_bfloat16() {
  static const bool available = [] {
    const Tensor in = empty({1, 16, 8, 8}, TensorOptions(kBFloat16)), weight = empty({16, 16, 3, 3}, TensorOptions(kBFloat16));
    Conv2dParams p;
    p.pad_lo = p.pad_hi = {1, 1};
    try {
      Geometry(in, weight, in, p, dnnl::algorithm::convolution_direct).forward_pd(true);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

// Whether a bfloat16 layer runs as matmuls (conv_matmul.h) on this CPU.
bool weights_by_matmul(const Tensor& dweight, const Tensor& dbias, const Tensor& dy, const Tensor& in,
                       const Conv2dParams& p) {
  return small_map_matmul_fits(dweight, dbias, dy, in, p) && native_bfloat16();
}

// Whether a narrow layer runs on float32 copies (Note [bfloat16 convolution]).
bool widened(const Tensor& a, const Tensor& b, const Tensor& c, const Conv2dParams& p) {
  if (!is_reduced_floating_point(a.dtype())) return false;
  return a.dtype() != kBFloat16 || !native_bfloat16() || outside_onednn(a, b, c, p);
}

Tensor widen_defined(const Tensor& t) { return t.defined() ? widen(t) : Tensor(); }
Tensor float32_defined(const Tensor& t) { return t.defined() ? float32_like(t) : Tensor(); }

void forward_widened(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                     const Conv2dParams& p) {
  const Tensor x = widen(in), w = widen(weight), b = widen_defined(bias);
  into(out, [&](const Tensor& o) { conv2d_forward(o, x, w, b, p); });
}

void backward_widened(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                      const Tensor& in, const Tensor& weight, const Conv2dParams& p) {
  const Tensor wdin = float32_defined(din), wdw = float32_defined(dweight), wdb = float32_defined(dbias);
  conv2d_backward(wdin, wdw, wdb, widen(dout), widen_defined(in), widen_defined(weight), p);
  for (const auto& [narrow, wide] : {std::pair{din, wdin}, {dweight, wdw}, {dbias, wdb}})
    if (narrow.defined()) copy(narrow, wide);
}

}  // namespace

const char* bfloat16_conv_implementation() {
  if (!native_bfloat16()) return "float32 (widened)";
  static const std::string name = [] {
    const Tensor in = empty({32, 64, 56, 56}, TensorOptions(kBFloat16)), weight = empty({64, 64, 3, 3}, TensorOptions(kBFloat16));
    Conv2dParams p;
    p.pad_lo = p.pad_hi = {1, 1};
    return Geometry(in, weight, in, p, dnnl::algorithm::convolution_direct).forward_pd(true).impl_info_str();
  }();
  return name.c_str();
}

// Note [Kept convolution input]
// oneDNN's bfloat16 kernels read activations in nhwc (`acdb`), the user's tensors are nchw, so the
// forward reorders the input and the weight gradient, in the backward, reorders the same input
// again: one pass over each layer's input (ResNet-18 at batch 32: about 1 ms for a 32x64x32x32
// input on one thread, a few percent of a training step). conv2d_forward_keeping_input keeps the
// forward's reordered copy (a scratch buffer) and the backward's weight gradient reads it where its
// primitive wants the same layout. The copy lives from the forward to the layer's backward: it
// adds, at most, each kept layer's input once more in bfloat16 (ResNet-18 at batch 32: about 40 MB,
// less than what the float32 activations of the same network take over its bfloat16 ones). Only
// bfloat16 layers keep it: float32 ones mostly run on Winograd, which reorders nothing.
struct KeptConvInput {
  memory::desc desc;
  memory mem;
  Tensor scratch;
  Tensor cols;  // or the patch matrix of a layer that runs as matmuls (Note [bfloat16 small-map convolutions as matmuls])
};

namespace {

void forward_impl(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Conv2dParams& p,
                  std::shared_ptr<KeptConvInput>* keep) {
  NoGradGuard no_grad;  // contiguous() copies below are scratch
  if (widened(in, weight, out, p)) return forward_widened(out, in, weight, bias, p);
  if (use_reference(in, weight, out, p)) return conv2d_forward_reference(out, in, weight, bias, p);
  Tensor x = in.contiguous(), w = weight.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor();
  DnnlThreadsGuard threads(conv_threads(w, out));
  if (weights_by_matmul(w, b, out, x, p)) {  // Note [bfloat16 small-map convolutions as matmuls]
    Tensor cols;
    forward_matmul(out, x, w, p, keep ? &cols : nullptr);
    if (keep) *keep = std::make_shared<KeptConvInput>(KeptConvInput{{}, {}, {}, std::move(cols)});
    return;
  }
  if (own_winograd(x.size(0), w, out, p)) return winograd::forward(out, x, w, b, p);
  Prepared* prep = nullptr;
  try {
    prep = &cached(Kind::Forward, x, w, out, b.defined(), p);
  } catch (const dnnl::error&) {
    if (in.dtype() != kBFloat16) throw;
    return forward_widened(out, in, weight, bias, p);  // a bfloat16 layer no kernel takes
  }
  std::vector<void*> buffers{x.data_ptr(), w.data_ptr(), out.data_ptr()};
  if (b.defined()) buffers.push_back(b.data_ptr());
  Staged staged;
  run(*prep, buffers, out.device(), keep ? &staged : nullptr);
  if (!keep) return;
  auto it = staged.find(DNNL_ARG_SRC);
  if (it != staged.end())
    *keep = std::make_shared<KeptConvInput>(KeptConvInput{it->second.desc, it->second.mem, it->second.scratch, {}});
}

void backward_impl(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                   const Tensor& in, const Tensor& weight, const Conv2dParams& p, const KeptConvInput* kept) {
  const Tensor& some_input = din.defined() ? din : in;
  const Tensor& some_weight = din.defined() ? weight : dweight;  // weight is only given for din
  NoGradGuard no_grad;
  if (widened(dout, some_weight, some_input, p)) return backward_widened(din, dweight, dbias, dout, in, weight, p);
  if (use_reference(dout, some_weight, some_input, p)) {
    if (din.defined()) conv2d_backward_data_reference(din, dout, weight, p);
    if (dweight.defined()) conv2d_backward_weights_reference(dweight, dbias, in, dout, p);
    return;
  }
  Tensor dy = dout.contiguous();
  DnnlThreadsGuard threads(conv_threads(some_weight, dy));
  if (own_winograd(dy.size(0), some_weight, dy, p)) {
    if (din.defined()) winograd::backward_data(din, dy, weight.contiguous(), p);
    if (dweight.defined()) winograd::backward_weights(dweight, dbias, in.contiguous(), dy, p);
    return;
  }
  // A bfloat16 layer no kernel takes runs that half on float32 copies.
  auto prepared = [&](Kind kind, const Tensor& x, const Tensor& w, bool with_bias) -> Prepared* {
    try {
      return &cached(kind, x, w, dy, with_bias, p);
    } catch (const dnnl::error&) {
      if (dy.dtype() != kBFloat16) throw;
      return nullptr;
    }
  };
  Staged staged;  // diff_dst in the primitives' layout, reordered once for both
  // Note [bfloat16 small-map convolutions as matmuls]
  const bool data_by_matmul = din.defined() && weights_by_matmul(weight, Tensor(), dy, din, p);
  const bool weights_matmul = dweight.defined() && weights_by_matmul(dweight, dbias, dy, in, p);
  if (data_by_matmul) {
    data_backward_matmul(din, channels_last(dy), weight.contiguous(), dy.size(2), dy.size(3), p);
  } else if (din.defined()) {
    Tensor w = weight.contiguous();
    if (Prepared* prep = prepared(Kind::BackwardData, din, w, false))
      run(*prep, {dy.data_ptr(), w.data_ptr(), din.data_ptr()}, din.device(), &staged);
    else
      backward_widened(din, Tensor(), Tensor(), dout, Tensor(), weight, p);
  }
  if (weights_matmul) {  // Note [bfloat16 weight gradient as a matmul]
    weights_backward_matmul(dweight, channels_first(dy), in, dy.size(2), dy.size(3), p, kept ? kept->cols : Tensor());
  } else if (dweight.defined()) {
    Tensor x = in.contiguous();
    std::vector<void*> buffers{x.data_ptr(), dy.data_ptr(), dweight.data_ptr()};
    if (dbias.defined()) buffers.push_back(dbias.data_ptr());
    if (kept && kept->scratch.defined())  // used where the layout matches
      staged[DNNL_ARG_SRC] = {kept->desc, kept->mem, kept->scratch};
    if (Prepared* prep = prepared(Kind::BackwardWeights, x, dweight, dbias.defined()))
      run(*prep, buffers, dweight.device(), &staged);
    else
      backward_widened(Tensor(), dweight, dbias, dout, in, Tensor(), p);
  }
}

}  // namespace

void conv2d_forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                    const Conv2dParams& p) {
  forward_impl(out, in, weight, bias, p, nullptr);
}

std::shared_ptr<KeptConvInput> conv2d_forward_keeping_input(const Tensor& out, const Tensor& in, const Tensor& weight,
                                                            const Tensor& bias, const Conv2dParams& p) {
  std::shared_ptr<KeptConvInput> kept;
  forward_impl(out, in, weight, bias, p, in.dtype() == kBFloat16 ? &kept : nullptr);
  return kept;
}

void conv2d_backward(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                     const Tensor& in, const Tensor& weight, const Conv2dParams& p) {
  backward_impl(din, dweight, dbias, dout, in, weight, p, nullptr);
}

void conv2d_backward(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                     const Tensor& in, const Tensor& weight, const Conv2dParams& p,
                     const std::shared_ptr<KeptConvInput>& kept) {
  backward_impl(din, dweight, dbias, dout, in, weight, p, kept.get());
}

}  // namespace cohort::kernel

namespace cohort {

void set_conv_algorithm(ConvAlgorithm algorithm) { kernel::g_algorithm.store(algorithm, std::memory_order_relaxed); }
ConvAlgorithm conv_algorithm() { return kernel::g_algorithm.load(std::memory_order_relaxed); }

std::string winograd_implementation() { return kernel::onednn_winograd() ? "oneDNN" : "cohort"; }

}  // namespace cohort
