// Batched float32 matrix product on oneDNN, with primitives cached per shape, strides and thread
// count (Note [oneDNN threads] in ops/dnnl/threads.h).
#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <list>
#include <mutex>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "ops/cpu/kernels.h"
#include "ops/dnnl/engine.h"
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
  std::sort(dims.begin(), dims.begin() + n);
  if (n > 0 && dims[0].first < 1) return false;
  for (size_t i = 1; i < n; ++i)
    if (dims[i].first < dims[i - 1].first * dims[i - 1].second) return false;
  return true;
}

memory::desc describe(const Tensor& t) {
  // The stride of a size-1 dim means nothing but steers oneDNN's choice of kernel (a [16, 1] column
  // with strides (1, 4) gets a gemm that fails to execute), so it is made canonical: unit for a
  // column's K, and for a row the value that keeps it plain.
  const int64_t s2 = t.size(2) == 1 ? 1 : t.stride(2);
  const int64_t s1 = t.size(1) == 1 ? (s2 == 1 ? t.size(2) : 1) : t.stride(1);
  // A batch stride of 0 (an expanded operand) becomes a broadcast batch dim of 1.
  const bool broadcast = t.stride(0) == 0;
  const int64_t s0 = broadcast || t.size(0) == 1 ? std::max(s1 * t.size(1), s2 * t.size(2)) : t.stride(0);
  return memory::desc({broadcast ? 1 : t.size(0), t.size(1), t.size(2)}, memory::data_type::f32, {s0, s1, s2});
}

struct Key {
  std::array<int64_t, 19> v;  // sizes and strides of c, a, b; the thread count
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 0;
    for (int64_t x : k.v) h = h * 1000003u ^ static_cast<size_t>(x);
    return h;
  }
};

Key key_of(const Tensor& c, const Tensor& a, const Tensor& b, int threads) {
  Key k{};
  int i = 0;
  for (const Tensor* t : {&c, &a, &b}) {
    IntArrayRef sizes = t->sizes(), strides = t->strides();
    for (size_t d = 0; d < 3; ++d) k.v[i++] = sizes[d], k.v[i++] = strides[d];
  }
  k.v[i] = threads;
  return k;
}

// A primitive with its memory objects and argument map, made once: a call only points the memory
// objects at its tensors. (Creating three dnnl::memory objects and the map took half of the time
// of a small matmul.)
struct Prepared {
  dnnl::matmul prim;
  memory a, b, c;
  std::unordered_map<int, memory> args;
};

Prepared prepare(const Tensor& c, const Tensor& a, const Tensor& b) {
  const memory::desc ad = describe(a), bd = describe(b), cd = describe(c);
  Prepared p{dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, bd, cd), dnnl_engine())),
             memory(ad, dnnl_engine(), DNNL_MEMORY_NONE), memory(bd, dnnl_engine(), DNNL_MEMORY_NONE),
             memory(cd, dnnl_engine(), DNNL_MEMORY_NONE), {}};
  p.args = {{DNNL_ARG_SRC, p.a}, {DNNL_ARG_WEIGHTS, p.b}, {DNNL_ARG_DST, p.c}};  // handles share the objects
  return p;
}

// A small per-thread LRU of matmul primitives (each thread has its own oneDNN stream anyway).
class MatmulCache {
 public:
  // Call with omp_get_max_threads() == threads: the primitive is made for it.
  Prepared& get(const Tensor& c, const Tensor& a, const Tensor& b, int threads) {
    Key k = key_of(c, a, b, threads);
    auto it = index_.find(k);
    if (it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    entries_.emplace_front(k, prepare(c, a, b));
    index_[k] = entries_.begin();
    if (entries_.size() > kCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }

 private:
  static constexpr size_t kCapacity = 128;
  std::list<std::pair<Key, Prepared>> entries_;
  std::unordered_map<Key, std::list<std::pair<Key, Prepared>>::iterator, KeyHash> index_;
};

}  // namespace

void bmm(const Tensor& c, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;  // contiguous() copies below are scratch
  if (c.numel() == 0) return;
  if (a.size(2) == 0) {
    fill(c, 0);
    return;
  }
  if (c.dtype() != kFloat32) return bmm_reference(c, a, b);
  Tensor ac = dnnl_layout_ok(a) ? a : a.contiguous();
  Tensor bc = dnnl_layout_ok(b) ? b : b.contiguous();
  // oneDNN broadcasts one operand's batch of 1 to the other's, never both to the output's: when
  // both are expanded over the batch (stride 0), one of them is materialised.
  if (ac.stride(0) == 0 && bc.stride(0) == 0 && c.size(0) > 1) ac = ac.contiguous();
  const double flops = 2.0 * static_cast<double>(c.numel()) * static_cast<double>(a.size(2));
  const int threads = dnnl_threads_for(flops, kMatmulGrainFlops);
  DnnlThreadsGuard guard(threads);
  thread_local MatmulCache cache;
  Prepared& prep = cache.get(c, ac, bc, threads);
  prep.a.set_data_handle(ac.data_ptr());
  prep.b.set_data_handle(bc.data_ptr());
  prep.c.set_data_handle(c.data_ptr());
  prep.prim.execute(dnnl_stream(), prep.args);
  dnnl_stream().wait();
}

}  // namespace cohort::kernel
