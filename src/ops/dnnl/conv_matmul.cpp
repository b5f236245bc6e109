// bfloat16 convolutions of small maps as oneDNN matmuls on a patch matrix: the forward and both
// backward passes of the layers conv.cpp hands over (conv_matmul.h).
//
// Note [bfloat16 weight gradient as a matmul]
// oneDNN 2.6's AMX weight-gradient kernel (jit:avx512_core_amx_bf16) is slow on small maps with
// many channels: on the Xeon with AMX, 1 thread, batch 32, 3x3 layers, it took 16.2 ms for
// 512 channels on 4x4 maps (the forward: 1.7 ms), 5.1 ms for 256 on 8x8, 2.8 ms for 128 on 16x16,
// 2.5 ms for 64 on 32x32, where a bfloat16 matmul of the same products,
// dW [O, C kH kW] = dY [O, N P Q] x cols [N P Q, C kH kW], took 1.6, 2.2, 1.5 and 1.9 ms. So a
// bfloat16 layer without groups or bias whose output maps have at most kMatmulWeightsMaxMap
// elements takes its weight gradient that way: the input's patches are copied out (im2col, one row
// of C kH kW per output position), dY is copied into [O, N, P Q], and oneDNN's matmul accumulates in float32 over the whole
// batch, whose result is rounded once into the bfloat16 gradient, as the convolution kernel's is.
// The copies (the patches are kH kW times the input) cost more than the matmul: the whole weight
// gradient (conv2d's backward for the weight alone, same machine) took 7.3 ms against the kernel's
// 20.0 on the 4x4 maps, but 8.1 against 7.1 on 8x8 and 10.1 against 4.5 on 16x16, hence 4x4.
// Those layers run their forward and input gradient as matmuls as well, and the forward's patches
// serve the weight gradient (Note [bfloat16 small-map convolutions as matmuls]).
#include "ops/dnnl/conv_matmul.h"

#include <dnnl.hpp>

#include <algorithm>
#include <vector>

#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/dnnl/engine.h"
#include "ops/dnnl/primitive_cache.h"
#include "ops/internal.h"

namespace cohort::kernel {

namespace {
using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr int64_t kMatmulWeightsMaxMap = 4 * 4;
constexpr int64_t kMatmulWeightsMaxCols = int64_t{32} << 20;  // elements of the patch matrix (64 MB)
}  // namespace

bool small_map_matmul_fits(const Tensor& dweight, const Tensor& dbias, const Tensor& dy, const Tensor& in,
                           const Conv2dParams& p) {
  if (dweight.dtype() != kBFloat16 || dbias.defined() || p.groups != 1) return false;
  const int64_t map = dy.size(2) * dy.size(3);
  const int64_t cols = dy.size(0) * map * in.size(1) * dweight.size(2) * dweight.size(3);
  return map <= kMatmulWeightsMaxMap && cols <= kMatmulWeightsMaxCols;
}

namespace {

// offs[kh kW + kw]: where tap (kh, kw) of the kernel placed at output position (oh, q) lands in an
// H x W plane (h W + w), or -1 in the padding.
void tap_offsets(int64_t* offs, int64_t oh, int64_t q, int64_t H, int64_t W, int64_t kH, int64_t kW,
                 const Conv2dParams& p) {
  for (int64_t kh = 0; kh < kH; ++kh) {
    const int64_t h = oh * p.stride[0] - p.pad_lo[0] + kh * p.dilation[0];
    for (int64_t kw = 0; kw < kW; ++kw) {
      const int64_t w = q * p.stride[1] - p.pad_lo[1] + kw * p.dilation[1];
      offs[kh * kW + kw] = h >= 0 && h < H && w >= 0 && w < W ? h * W + w : -1;
    }
  }
}

// cols [N P Q, C kH kW]: row (n, p, q) holds the input elements under the kernel placed at output
// position (p, q) of image n, tap by tap ((c, kh, kw) order), 0 in the padding. x is a contiguous
// bfloat16 [N, C, H, W]; one image (at most 512 channels of 4x4 here) stays in cache while its rows
// are written.
Tensor patches(const Tensor& x, int64_t kH, int64_t kW, int64_t P, int64_t Q, const Conv2dParams& p) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = C * kH * kW;
  Tensor cols = detail::make_empty({N * P * Q, K}, kBFloat16, x.device());
  const auto* px = static_cast<const uint16_t*>(x.data_ptr());
  auto* pc = static_cast<uint16_t*>(cols.data_ptr());
  parallel_for(N * P, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, Q * K)), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> taps(static_cast<size_t>(kH * kW));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / P, oh = row % P;
      for (int64_t q = 0; q < Q; ++q) {
        tap_offsets(taps.data(), oh, q, H, W, kH, kW, p);
        uint16_t* out = pc + (row * Q + q) * K;
        for (int64_t c = 0; c < C; ++c, out += kH * kW) {
          const uint16_t* plane = px + (n * C + c) * H * W;
          for (int64_t t = 0; t < kH * kW; ++t) out[t] = taps[t] >= 0 ? plane[taps[t]] : uint16_t{0};
        }
      }
    }
  });
  return cols;
}

// A cached oneDNN matmul c [M, N] = a [M, K] x b [K, N] of bfloat16 operands in the given layouts
// (ab: row-major, ba: the transpose of a row-major [N, K] or [K, M] matrix) and a c of type ct.
dnnl::matmul& cached_matmul(int64_t M, int64_t K, int64_t N, Tag a_tag, Tag b_tag, memory::data_type ct) {
  thread_local PrimitiveCache<6, dnnl::matmul> cache(64);
  return cache.get({M, K, N, static_cast<int64_t>(a_tag), static_cast<int64_t>(b_tag), static_cast<int64_t>(ct)}, [&] {
    const memory::desc a({M, K}, memory::data_type::bf16, a_tag), b({K, N}, memory::data_type::bf16, b_tag),
        c({M, N}, ct, Tag::ab);
    return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), dnnl_engine()));
  });
}

void run_matmul(int64_t M, int64_t K, int64_t N, Tag a_tag, const void* a, Tag b_tag, const void* b,
                memory::data_type ct, void* c) {
  dnnl::matmul& mm = cached_matmul(M, K, N, a_tag, b_tag, ct);
  const memory ma({{M, K}, memory::data_type::bf16, a_tag}, dnnl_engine(), const_cast<void*>(a));
  const memory mb({{K, N}, memory::data_type::bf16, b_tag}, dnnl_engine(), const_cast<void*>(b));
  const memory mc({{M, N}, ct, Tag::ab}, dnnl_engine(), c);
  dnnl::stream& stream = dnnl_stream();
  mm.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  stream.wait();
}

}  // namespace

// Note [bfloat16 small-map convolutions as matmuls]
// The layers whose weight gradient is a matmul (Note [bfloat16 weight gradient as a matmul]) run
// their forward and input gradient as matmuls too, on the patch matrix cols [N P Q, C kH kW]:
//   forward:  Y^T [N P Q, O] = cols x W^T (W read transposed where it lies, oihw = [O, C kH kW]),
//             rounded once into bfloat16 and transposed into the nchw output (maps of at most 16);
//   weights:  dW [O, C kH kW] = dY [O, N P Q] x cols, in float32, rounded once;
//   input:    dcols [N P Q, C kH kW] = dY^T [N P Q, O] x W in float32, each tap's value added into
//             its input element (col2im, in a fixed order whatever the threads), rounded once.
// dY is laid out both ways ([O, N P Q] and [N P Q, O], small copies) so that every product's left
// operand is row-major: oneDNN's AMX matmul copies a transposed left operand first (5-6% of a
// ResNet-18 step when the patches were stored transposed). Against oneDNN 2.6's AMX convolution
// kernels on ResNet-18's 512-channel 3x3 layers on 4x4 maps at batch 32, one thread, inside a
// training step: the forward (brgconv) took 5.4-6.4 ms plus 1.3 ms reordering the weights, the
// input gradient 8.5 ms plus 1.1 ms of weight reorder; their matmuls about 5 ms each. The patch
// matrix is made once, by the forward, and kept for the weight gradient in training (Note [Kept
// convolution input]).
void forward_matmul(const Tensor& out, const Tensor& x, const Tensor& w, const Conv2dParams& p, Tensor* keep_cols) {
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), kH = w.size(2), kW = w.size(3);
  const int64_t P = out.size(2), Q = out.size(3), PQ = P * Q, NPQ = N * PQ, K = C * kH * kW;
  Tensor cols = patches(x, kH, kW, P, Q, p);
  Tensor yt = detail::make_empty({NPQ, O}, kBFloat16, x.device());
  run_matmul(NPQ, K, O, Tag::ab, cols.data_ptr(), Tag::ba, w.data_ptr(), memory::data_type::bf16, yt.data_ptr());
  // Y^T [N, P Q, O] -> out [N, O, P Q]
  const auto* src = static_cast<const uint16_t*>(yt.data_ptr());
  auto* dst = static_cast<uint16_t*>(out.data_ptr());
  parallel_for(N * O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, PQ)), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / O, o = row % O;
      const uint16_t* s = src + n * PQ * O + o;
      uint16_t* d = dst + row * PQ;
      for (int64_t k = 0; k < PQ; ++k) d[k] = s[k * O];
    }
  });
  if (keep_cols) *keep_cols = std::move(cols);
}

// dY [N, O, P Q] (contiguous bfloat16) as [O, N P Q].
Tensor channels_first(const Tensor& g) {
  const int64_t N = g.size(0), O = g.size(1), PQ = g.size(2) * g.size(3);
  Tensor gt = detail::make_empty({O, N * PQ}, kBFloat16, g.device());
  const auto* gp = static_cast<const uint16_t*>(g.data_ptr());
  auto* tp = static_cast<uint16_t*>(gt.data_ptr());
  parallel_for(O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, N * PQ)), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      for (int64_t n = 0; n < N; ++n) std::copy(gp + (n * O + o) * PQ, gp + (n * O + o + 1) * PQ, tp + (o * N + n) * PQ);
  });
  return gt;
}

// dY [N, O, P Q] (contiguous bfloat16) as [N P Q, O].
Tensor channels_last(const Tensor& g) {
  const int64_t N = g.size(0), O = g.size(1), PQ = g.size(2) * g.size(3);
  Tensor gl = detail::make_empty({N * PQ, O}, kBFloat16, g.device());
  const auto* gp = static_cast<const uint16_t*>(g.data_ptr());
  auto* lp = static_cast<uint16_t*>(gl.data_ptr());
  parallel_for(N, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, O * PQ)), [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t k = 0; k < PQ; ++k) lp[(n * PQ + k) * O + o] = gp[(n * O + o) * PQ + k];
  });
  return gl;
}

// gt: dY as channels_first gives it. cols: the layer's patch matrix kept from the forward, or
// undefined (made here).
void weights_backward_matmul(const Tensor& dweight, const Tensor& gt, const Tensor& in, int64_t P, int64_t Q,
                             const Conv2dParams& p, const Tensor& kept_cols) {
  const Tensor x = in.contiguous();
  const int64_t N = x.size(0), C = x.size(1);
  const int64_t O = dweight.size(0), kH = dweight.size(2), kW = dweight.size(3);
  const int64_t NPQ = N * P * Q, K = C * kH * kW;
  const Tensor cols = kept_cols.defined() ? kept_cols : patches(x, kH, kW, P, Q, p);
  Tensor dw = detail::make_empty({O, K}, kFloat32, in.device());
  run_matmul(O, NPQ, K, Tag::ab, gt.data_ptr(), Tag::ab, cols.data_ptr(), kF32, dw.data_ptr());
  convert_contiguous(dweight.data_ptr(), kBFloat16, dw.data_ptr(), kFloat32, dweight.numel());
}

// gl: dY as channels_last gives it.
void data_backward_matmul(const Tensor& din, const Tensor& gl, const Tensor& w, int64_t P, int64_t Q,
                          const Conv2dParams& p) {
  const int64_t N = din.size(0), C = din.size(1), H = din.size(2), W = din.size(3);
  const int64_t O = w.size(0), kH = w.size(2), kW = w.size(3), PQ = P * Q, K = C * kH * kW;
  Tensor dcols = detail::make_empty({N * PQ, K}, kFloat32, din.device());
  run_matmul(N * PQ, O, K, Tag::ab, gl.data_ptr(), Tag::ab, w.data_ptr(), kF32, dcols.data_ptr());
  const float* dc = dcols.data_ptr<float>();
  auto* dx = static_cast<uint16_t*>(din.data_ptr());
  const DType dt = din.dtype();
  parallel_for(N, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(static_cast<size_t>(C * H * W));
    std::vector<int64_t> taps(static_cast<size_t>(kH * kW));
    for (int64_t n = begin; n < end; ++n) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t oh = 0; oh < P; ++oh)
        for (int64_t q = 0; q < Q; ++q) {
          tap_offsets(taps.data(), oh, q, H, W, kH, kW, p);
          const float* row = dc + ((n * P + oh) * Q + q) * K;
          for (int64_t c = 0; c < C; ++c, row += kH * kW) {
            float* plane = acc.data() + c * H * W;
            for (int64_t t = 0; t < kH * kW; ++t)
              if (taps[t] >= 0) plane[taps[t]] += row[t];
          }
        }
      vec::float_to_narrow(dx + n * C * H * W, acc.data(), dt, C * H * W);
    }
  });
}

}  // namespace cohort::kernel
