// Batched float32 and bfloat16 matrix product on oneDNN, with primitives cached per dtype, shape,
// strides, scales and thread count (Note [oneDNN threads] in ops/dnnl/threads.h).
//
// Note [Fused addend]
// addmm, baddbmm and linear's bias add a tensor to the product. Written as a product and then an
// add, that is one more pass over the output and one more buffer; instead the op copies the
// (broadcast) addend into the output and bmm_accumulate runs the product with oneDNN's sum post-op
// (or sgemm's beta), c = alpha * a b + beta * c, and the output scale alpha, as PyTorch's addmm
// does with BLAS. Each element is then rounded as alpha * (a b) + beta * c in float32.
//
// Note [bfloat16 matmul]
// bfloat16 operands run as oneDNN's bfloat16 matmul: bfloat16 src and weights, float32
// accumulation, one rounding into the bfloat16 dst, which is what PyTorch's CPU bfloat16 mm does.
// oneDNN 2.6 has such kernels from AVX512_CORE up (AMX tdpbf16ps, AVX512_BF16 vdpbf16ps, or an
// emulation on plain AVX-512); on a CPU without them creating the primitive fails and the operands
// are widened to float32 instead. float16 is always widened: oneDNN 2.6's CPU matmul has no f16
// kernel (creating one fails, also on AVX512_FP16 CPUs).
#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/matmul_kernels.h"
#include "ops/cpu/reduced.h"
#include "ops/dnnl/bfloat16.h"
#include "ops/dnnl/engine.h"
#include "ops/dnnl/primitive_cache.h"
#include "ops/internal.h"
#include "ops/dnnl/threads.h"

namespace cohort::kernel {

namespace {

using dnnl::memory;

// Floating-point operations that pay for one more thread (Note [oneDNN threads]).
constexpr double kMatmulGrainFlops = 5e5;

// oneDNN takes a plain matrix when one of its two inner strides is 1, and only strides that it can
// order without overlap: each at least the extent (stride x size) of the next smaller one, so not a
// batch stride that falls inside a row (a slice of a permuted tensor) nor an expanded row or column.
// A batch stride of 0 is fine: describe() rewrites it.
bool dnnl_layout_ok(const Tensor& t) {
  if (!(t.stride(2) == 1 || t.stride(1) == 1 || t.size(1) == 1 || t.size(2) == 1)) return false;
  std::array<std::pair<int64_t, int64_t>, 3> dims;  // (stride, size) of the dims that matter
  size_t n = 0;
  for (int64_t d = 0; d < 3; ++d)
    if (t.size(d) > 1 && !(d == 0 && t.stride(0) == 0)) dims[n++] = {t.stride(d), t.size(d)};
  for (size_t i = 1; i < n; ++i)  // insertion sort: std::sort on 3 pairs draws a false -Warray-bounds from GCC 12
    for (size_t j = i; j > 0 && dims[j] < dims[j - 1]; --j) std::swap(dims[j], dims[j - 1]);
  if (n > 0 && dims[0].first < 1) return false;
  for (size_t i = 1; i < n; ++i)
    if (dims[i].first < dims[i - 1].first * dims[i - 1].second) return false;
  return true;
}

memory::data_type dnnl_type(DType t) { return t == kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32; }

memory::desc describe(const Tensor& t) {
  // The stride of a size-1 dim means nothing but steers oneDNN's choice of kernel (a [16, 1] column
  // with strides (1, 4) gets a gemm that fails to execute), so it is made canonical: unit for a
  // column's K, and for a row the value that keeps it plain.
  const int64_t s2 = t.size(2) == 1 ? 1 : t.stride(2);
  const int64_t s1 = t.size(1) == 1 ? (s2 == 1 ? t.size(2) : 1) : t.stride(1);
  // A batch stride of 0 (an expanded operand) becomes a broadcast batch dim of 1.
  const bool broadcast = t.stride(0) == 0;
  const int64_t s0 = broadcast || t.size(0) == 1 ? std::max(s1 * t.size(1), s2 * t.size(2)) : t.stride(0);
  return memory::desc({broadcast ? 1 : t.size(0), t.size(1), t.size(2)}, dnnl_type(t.dtype()), {s0, s1, s2});
}

// A primitive with its memory objects and argument map, made once: a call only points the memory
// objects at its tensors. (Creating three dnnl::memory objects and the map took half of the time
// of a small matmul.)
struct Prepared {
  dnnl::matmul prim;
  memory a, b, c, bias;
  std::unordered_map<int, memory> args;
};

// c = alpha * a b + beta * c (Note [Fused addend]); alpha 1 and beta 0 is the plain product. With_bias:
// c = a b + bias, a row [m] added by the kernel as it writes c (alpha 1, beta 0).
Prepared prepare(const Tensor& c, const Tensor& a, const Tensor& b, float alpha, float beta, bool with_bias) {
  const memory::desc ad = describe(a), bd = describe(b), cd = describe(c);
  const int64_t m = c.size(2);
  const memory::desc biasd = with_bias ? memory::desc({1, 1, m}, dnnl_type(c.dtype()), {m, m, 1}) : memory::desc();
  dnnl::primitive_attr attr;
  if (alpha != 1) attr.set_output_scales(0, {alpha});
  if (beta != 0) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::desc desc = with_bias ? dnnl::matmul::desc(ad, bd, biasd, cd) : dnnl::matmul::desc(ad, bd, cd);
  Prepared p{dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, dnnl_engine())),
             memory(ad, dnnl_engine(), DNNL_MEMORY_NONE), memory(bd, dnnl_engine(), DNNL_MEMORY_NONE),
             memory(cd, dnnl_engine(), DNNL_MEMORY_NONE), memory(), {}};
  p.args = {{DNNL_ARG_SRC, p.a}, {DNNL_ARG_WEIGHTS, p.b}, {DNNL_ARG_DST, p.c}};  // handles share the objects
  if (with_bias) {
    p.bias = memory(biasd, dnnl_engine(), DNNL_MEMORY_NONE);
    p.args.insert({DNNL_ARG_BIAS, p.bias});
  }
  return p;
}

// The dtype, the scales, the bias and the sizes and strides of c, a and b: what a matmul primitive is
// made for (with the thread count, which PrimitiveCache adds).
Prepared& cached(const Tensor& c, const Tensor& a, const Tensor& b, float alpha, float beta, bool with_bias) {
  thread_local PrimitiveCache<22, Prepared> cache(128);
  PrimitiveCache<22, Prepared>::Key key{};
  key[18] = static_cast<int64_t>(c.dtype());
  key[19] = std::bit_cast<int32_t>(alpha);
  key[20] = std::bit_cast<int32_t>(beta);
  key[21] = with_bias;
  size_t i = 0;
  for (const Tensor* t : {&c, &a, &b}) {
    IntArrayRef sizes = t->sizes(), strides = t->strides();
    for (size_t d = 0; d < 3; ++d) key[i++] = sizes[d], key[i++] = strides[d];
  }
  return cache.get(key, [&] { return prepare(c, a, b, alpha, beta, with_bias); });
}

// A large single product goes to oneDNN's BLAS-style sgemm, whose kernels ran 10-20% faster than the
// matmul primitive's from 1024^3 up on this machine (AVX-512; bench/compare's W5_sgemm rows) and
// slower below. Row-major operands with a unit stride on either side; false if the layout does not fit.
constexpr double kSgemmFlops = 2e9;

bool try_sgemm(const Tensor& c, const Tensor& a, const Tensor& b, float alpha, float beta) {
  if (c.size(0) != 1 || !c.is_contiguous()) return false;
  auto layout = [](const Tensor& t, char& trans, int64_t& ld) {
    if (t.stride(2) == 1 && t.stride(1) >= std::max<int64_t>(1, t.size(2))) return trans = 'N', ld = t.stride(1), true;
    if (t.stride(1) == 1 && t.stride(2) >= std::max<int64_t>(1, t.size(1))) return trans = 'T', ld = t.stride(2), true;
    return false;
  };
  char ta, tb;
  int64_t lda, ldb;
  if (!layout(a, ta, lda) || !layout(b, tb, ldb)) return false;
  const int64_t M = c.size(1), N = c.size(2), K = a.size(2);
  return dnnl_sgemm(ta, tb, M, N, K, alpha, a.data_ptr<float>(), lda, b.data_ptr<float>(), ldb, beta,
                    c.data_ptr<float>(), N) == dnnl_success;
}

// Whether oneDNN has bfloat16 matmul kernels for this CPU (Note [bfloat16 matmul]).
bool native_bfloat16() {
  static const bool available = [] {
    const memory::desc d({1, 16, 16}, memory::data_type::bf16, memory::format_tag::abc);
    try {
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(d, d, d), dnnl_engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

}  // namespace

const char* bfloat16_matmul_implementation() {
  if (!native_bfloat16()) return "float32 (widened)";
  static const std::string name = [] {
    const memory::desc d({1, 64, 64}, memory::data_type::bf16, memory::format_tag::abc);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(d, d, d), dnnl_engine()).impl_info_str();
  }();
  return name.c_str();
}

namespace {

// The product of float32 (or natively bfloat16) operands on oneDNN: c = alpha * a b + beta * c, or
// with a bias (contiguous [m], of c's dtype; alpha 1, beta 0) c = a b + bias, never on sgemm.
// False for dtypes oneDNN does not take here (the caller runs the reference or the widened product).
bool run_dnnl(const Tensor& c, const Tensor& a, const Tensor& b, float alpha, float beta,
              const Tensor* bias = nullptr) {
  const bool native = c.dtype() == kBFloat16 && a.dtype() == kBFloat16 && b.dtype() == kBFloat16 && native_bfloat16();
  if (c.dtype() != kFloat32 && !native) return false;
  Tensor ac = dnnl_layout_ok(a) ? a : a.contiguous();
  Tensor bc = dnnl_layout_ok(b) ? b : b.contiguous();
  // oneDNN broadcasts one operand's batch of 1 to the other's, never both to the output's: when
  // both are expanded over the batch (stride 0), one of them is materialised.
  if (ac.stride(0) == 0 && bc.stride(0) == 0 && c.size(0) > 1) ac = ac.contiguous();
  const double flops = 2.0 * static_cast<double>(c.numel()) * static_cast<double>(a.size(2));
  DnnlThreadsGuard guard(dnnl_threads_for(flops, kMatmulGrainFlops));  // sgemm runs on OpenMP too
  if (!native && !bias && flops >= kSgemmFlops && try_sgemm(c, ac, bc, alpha, beta)) return true;
  Prepared* prep = nullptr;
  try {
    prep = &cached(c, ac, bc, alpha, beta, bias != nullptr);
  } catch (const dnnl::error&) {
    if (!native) throw;
    return false;  // a bfloat16 layout no kernel takes (the float32 ones take more)
  }
  prep->a.set_data_handle(ac.data_ptr());
  prep->b.set_data_handle(bc.data_ptr());
  prep->c.set_data_handle(c.data_ptr());
  if (bias) prep->bias.set_data_handle(bias->data_ptr());
  prep->prim.execute(dnnl_stream(), prep->args);
  dnnl_stream().wait();
  return true;
}

// Note [Tall transposed products]
// A single float32 product c [m, n] = a^T b whose a is a transposed view ([m, k] with unit row
// stride: the weight gradient g^T x of a linear layer) and whose c is tall (m >= 4n) ran at 3/4 of
// the speed of its transpose c^T = b^T a on oneDNN 2.6 (sgemm and matmul primitive alike; m 2048,
// n 512, k 2048 on one AVX-512 core: 33 against 25 ms, the least of 20 runs). So it is computed as
// c^T into a per-thread scratch buffer (a fresh one cost more in page faults than the transpose)
// and transposed into c by a oneDNN reorder (0.5 ms for 2048 x 512).
constexpr int64_t kScratchLimit = int64_t{1} << 22;  // floats kept per thread at most (16 MiB)

bool is_tall_transposed(const Tensor& c, const Tensor& a, const Tensor& b) {
  const int64_t m = c.size(1), n = c.size(2), k = a.size(2);
  return c.dtype() == kFloat32 && a.dtype() == kFloat32 && b.dtype() == kFloat32 && c.size(0) == 1 && m >= 4 * n &&
         m * n <= kScratchLimit && a.stride(1) == 1 && a.stride(2) >= m && b.stride(2) == 1 &&
         2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >= 1e9;
}

// c [m, n] = t^T for contiguous t [n, m]: a oneDNN reorder between the two plain layouts (its JIT
// kernel took 0.51 ms for 2048 x 512 on one core where a loop over 32 x 32 tiles took 0.82).
void transpose_into(float* c, const float* t, int64_t m, int64_t n) {
  DnnlThreadsGuard threads(usable_threads());
  thread_local PrimitiveCache<2, dnnl::reorder> cache(16);
  const memory::desc from({m, n}, memory::data_type::f32, {1, m}), to({m, n}, memory::data_type::f32, {n, 1});
  dnnl::reorder& r = cache.get({m, n}, [&] {
    return dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), from, dnnl_engine(), to));
  });
  memory src(from, dnnl_engine(), const_cast<float*>(t)), dst(to, dnnl_engine(), c);
  r.execute(dnnl_stream(), src, dst);
  dnnl_stream().wait();
}

// Note [Tall transposed products]; false if oneDNN does not take the layout.
bool run_transposed(const Tensor& c, const Tensor& a, const Tensor& b) {
  thread_local Tensor scratch;
  const int64_t m = c.size(1), n = c.size(2);
  if (!scratch.defined() || scratch.numel() < m * n) scratch = detail::make_empty({m * n}, kFloat32, c.device());
  const Tensor ct = detail::make_view(scratch, {1, n, m}, {n * m, m, 1}, 0);
  if (!run_dnnl(ct, b.transpose(1, 2), a.transpose(1, 2), 1, 0)) return false;
  transpose_into(c.data_ptr<float>(), ct.data_ptr<float>(), m, n);
  return true;
}

}  // namespace

void bmm(const Tensor& c, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;  // contiguous() copies below are scratch
  if (c.numel() == 0) return;
  if (a.size(2) == 0) {
    fill(c, 0);
    return;
  }
  if (is_tall_transposed(c, a, b) && run_transposed(c, a, b)) return;
  if (run_dnnl(c, a, b, 1, 0)) return;
  if (is_reduced_floating_point(c.dtype())) {  // float32's product of the widened operands, rounded once
    const Tensor wa = widen(a), wb = widen(b);
    return into(c, [&](const Tensor& o) { bmm(o, wa, wb); });
  }
  bmm_reference(c, a, b);
}

// Note [Bias in the product]
// linear's bias is an addend of the product too (Note [Fused addend]), but a row broadcast over the
// rows: oneDNN's matmul adds it as it writes c, which saves copying it into c and reading c back.
// For W6's projections (2048 x 512 x 512 on one AVX-512 core) that took 5.7 against 6.1 ms (the copy
// and the sum post-op), and the 2048 x 512 x 2048 one 23.6 against 24.0 ms on sgemm; but the
// 2048 x 2048 x 512 one 24.3 against 23.5 ms, so products of the sgemm path's size whose output is
// at least as wide as it is tall keep sgemm and the copy.
bool bmm_bias(const Tensor& c, const Tensor& a, const Tensor& b, const Tensor& bias) {
  NoGradGuard no_grad;
  const bool fits = c.dtype() == kFloat32 && a.dtype() == kFloat32 && b.dtype() == kFloat32 &&
                    bias.dtype() == kFloat32 && c.is_contiguous() && bias.dim() == 1 && bias.is_contiguous() &&
                    bias.size(0) == c.size(2) && c.numel() > 0 && a.size(2) > 0;
  if (!fits) return false;
  const double flops = 2.0 * static_cast<double>(c.numel()) * static_cast<double>(a.size(2));
  const bool big_square = flops >= kSgemmFlops && c.size(2) >= c.size(1);
  if (big_square) return false;
  return run_dnnl(c, a, b, 1, 0, &bias);
}

void bmm_accumulate(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta) {
  NoGradGuard no_grad;
  if (c.numel() == 0) return;
  if (a.size(2) > 0 && run_dnnl(c, a, b, static_cast<float>(alpha), static_cast<float>(beta))) return;
  // Elsewhere the product, then c = beta * c + alpha * product (float64, the narrow dtypes without
  // oneDNN kernels, an empty inner dimension).
  const Tensor prod = detail::make_empty(c.sizes(), c.dtype(), c.device());
  bmm(prod, a, b);
  if (beta != 1) binary(BinaryOp::Mul, c, c, detail::scalar_to_tensor(beta, c.dtype(), c.device()));
  binary(BinaryOp::Add, c, c, prod, alpha);
}

}  // namespace cohort::kernel
