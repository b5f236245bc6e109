// Batched float32 matrix product on oneDNN, with primitives cached per shape and strides.
#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <list>
#include <mutex>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "ops/cpu/kernels.h"
#include "ops/dnnl/engine.h"

namespace cohort::kernel {

namespace {

using dnnl::memory;

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
  std::array<int64_t, 18> v;
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 0;
    for (int64_t x : k.v) h = h * 1000003u ^ static_cast<size_t>(x);
    return h;
  }
};

Key key_of(const Tensor& c, const Tensor& a, const Tensor& b) {
  Key k{};
  int i = 0;
  for (const Tensor* t : {&c, &a, &b})
    for (int64_t d = 0; d < 3; ++d) k.v[i++] = t->size(d), k.v[i++] = t->stride(d);
  return k;
}

// A small per-thread LRU of matmul primitives (each thread has its own oneDNN stream anyway).
class MatmulCache {
 public:
  dnnl::matmul& get(const Tensor& c, const Tensor& a, const Tensor& b) {
    Key k = key_of(c, a, b);
    auto it = index_.find(k);
    if (it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(describe(a), describe(b), describe(c)), dnnl_engine());
    entries_.emplace_front(k, dnnl::matmul(pd));
    index_[k] = entries_.begin();
    if (entries_.size() > kCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }

 private:
  static constexpr size_t kCapacity = 128;
  std::list<std::pair<Key, dnnl::matmul>> entries_;
  std::unordered_map<Key, std::list<std::pair<Key, dnnl::matmul>>::iterator, KeyHash> index_;
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
  thread_local MatmulCache cache;
  dnnl::matmul& prim = cache.get(c, ac, bc);
  memory am(describe(ac), dnnl_engine(), ac.data_ptr());
  memory bm(describe(bc), dnnl_engine(), bc.data_ptr());
  memory cm(describe(c), dnnl_engine(), c.data_ptr());
  prim.execute(dnnl_stream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  dnnl_stream().wait();
}

}  // namespace cohort::kernel
