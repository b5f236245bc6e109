// Tensor: a cheap handle (one shared pointer) to a TensorImpl. Copying a Tensor shares the data,
// as in libtorch; clone() copies it. Methods forward to the free functions in <cohort/ops/...>,
// where each op's contract is documented.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/memory_format.h"
#include "cohort/core/scalar.h"
#include "cohort/core/tensor_impl.h"
#include "cohort/core/tensor_options.h"

namespace cohort {

namespace autograd {
class Node;
}
namespace indexing {
class TensorIndex;
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;
  // Assigning to a named tensor rebinds the handle; assigning to a temporary writes its elements, as
  // in libtorch: `x[1] = y` copies y (broadcast) into row 1 of x, `x.index({Slice(), 0}) = 0` fills a
  // column.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  const Tensor& operator=(const Tensor& src) && { return copy_(src); }
  const Tensor& operator=(const Scalar& value) && { return fill_(value); }

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // --- Geometry ---------------------------------------------------------------------------------
  IntArrayRef sizes() const { return checked().sizes(); }
  IntArrayRef strides() const { return checked().strides(); }
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return checked().dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked().numel(); }
  int64_t storage_offset() const { return checked().offset(); }
  bool is_contiguous() const { return checked().is_contiguous(); }
  // Dense in `format` (cohort/core/memory_format.h): is_contiguous(MemoryFormat::ChannelsLast).
  bool is_contiguous(MemoryFormat format) const;
  // ChannelsLast(3d) when the strides order the channels innermost, else Contiguous.
  MemoryFormat suggest_memory_format(bool channels_last_strides_exact_match = false) const;
  DType scalar_type() const { return checked().dtype(); }
  DType dtype() const { return checked().dtype(); }
  Device device() const { return checked().device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  bool is_floating_point() const { return cohort::is_floating_point(dtype()); }
  size_t element_size() const { return cohort::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  std::string toString() const;  // the type as libtorch names it: "CPUFloatType"
  std::string describe() const;  // for messages: "float32 [2, 3] on cpu:0"

  // --- Data access ------------------------------------------------------------------------------
  // Pointer to the first element; T must match the dtype exactly.
  template <class T>
  T* data_ptr() const;
  void* data_ptr() const { return checked().data(); }
  // libtorch's deprecated spellings, kept so that old programs compile: data<T>() is data_ptr<T>(),
  // data() is detach() (the values, sharing storage, outside autograd).
  template <class T>
  T* data() const { return data_ptr<T>(); }
  Tensor data() const { return detach(); }
  // The value of a one-element tensor.
  template <class T>
  T item() const;
  Scalar item() const;

  // --- Autograd ---------------------------------------------------------------------------------
  bool requires_grad() const;
  const Tensor& requires_grad_(bool requires_grad = true) const;
  const Tensor& set_requires_grad(bool requires_grad) const { return requires_grad_(requires_grad); }
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  // Computes gradients of this tensor w.r.t. the graph leaves. `gradient` is required unless this
  // tensor has one element.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  Tensor detach() const;
  const Tensor& detach_() const;
  void retain_grad() const;
  bool retains_grad() const;
  // Hooks see the gradient w.r.t. this tensor; one returning a Tensor replaces it.
  using Hook = std::function<Tensor(const Tensor&)>;
  unsigned register_hook(Hook hook) const;
  template <class F, std::enable_if_t<std::is_void_v<std::invoke_result_t<F, const Tensor&>>, int> = 0>
  unsigned register_hook(F f) const {
    return register_hook(Hook([f = std::move(f)](const Tensor& g) { f(g); return Tensor(); }));
  }
  // Leaves only: `hook(tensor)` runs right after a backward pass has accumulated into tensor.grad()
  // (PyTorch's register_post_accumulate_grad_hook; DDP uses it to start reducing ready gradients).
  // remove_hook(handle) removes it.
  using PostAccumulateGradHook = std::function<void(const Tensor&)>;
  unsigned register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;
  void remove_hook(unsigned handle) const;
  // Bumped by every in-place write to this tensor's storage.
  uint32_t _version() const { return checked().storage()->version(); }

  // --- Views (share storage) --------------------------------------------------------------------
  Tensor view(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape(IntArrayRef sizes) const;
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor expand(IntArrayRef sizes, bool implicit = false) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) const;
  const Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) const;
  const Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset = std::nullopt) const;
  Tensor contiguous() const;
  // This tensor if it is dense in `format`, else a copy laid out so (differentiable).
  Tensor contiguous(MemoryFormat format) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  // In place: this tensor takes the geometry of unsqueeze/squeeze/transpose/t and, when it carries a
  // graph, that view's history (shape_inplace.cpp). Refused on a leaf that requires grad.
  const Tensor& unsqueeze_(int64_t dim) const;
  const Tensor& squeeze_() const;
  const Tensor& squeeze_(int64_t dim) const;
  const Tensor& transpose_(int64_t dim0, int64_t dim1) const;
  const Tensor& t_() const;

  // --- Copies and conversions -------------------------------------------------------------------
  // A copy; by default (Preserve) a channels-last tensor's copy is channels-last, any other is
  // contiguous.
  Tensor clone(std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  const Tensor& fill_(const Scalar& value) const;
  // Fills with values drawn from the default generator: uniform on [from, to), or normal.
  const Tensor& uniform_(double from = 0, double to = 1) const;
  const Tensor& normal_(double mean = 0, double std = 1) const;
  const Tensor& zero_() const;
  // A converted copy keeps a channels-last layout unless `memory_format` asks for another.
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor to(const Tensor& other) const { return to(other.options()); }
  Tensor to(DeviceType type, bool non_blocking = false, bool copy = false) const {
    return to(Device(type), non_blocking, copy);
  }
  Tensor cpu() const { return to(Device(kCPU, 0)); }
  Tensor toType(DType dtype) const { return to(dtype); }
  // PyTorch's dtype shorthands: to(kBFloat16), to(kHalf), to(kFloat), to(kDouble).
  Tensor bfloat16() const { return to(kBFloat16); }
  Tensor half() const { return to(kHalf); }
  Tensor new_empty(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_zeros(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_ones(IntArrayRef sizes, const TensorOptions& options = {}) const;
  Tensor new_full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {}) const;

  // --- Pointwise math ---------------------------------------------------------------------------
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(const Scalar& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(const Scalar& other) const;
  const Tensor& pow_(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const Scalar& other) const;
  const Tensor& remainder_(const Tensor& other) const;
  const Tensor& remainder_(const Scalar& other) const;
  Tensor minimum(const Tensor& other) const;

  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor clamp_min(const Tensor& min) const;
  Tensor clamp_max(const Tensor& max) const;
  const Tensor& neg_() const;
  const Tensor& exp_() const;
  const Tensor& log_() const;
  const Tensor& sqrt_() const;
  const Tensor& abs_() const;
  const Tensor& relu_() const;
  const Tensor& sigmoid_() const;
  const Tensor& tanh_() const;
  const Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;

  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Scalar& other) const;
  // In place: self becomes (self op other), 1 or 0 in self's dtype.
  const Tensor& eq_(const Tensor& other) const;
  const Tensor& ne_(const Tensor& other) const;
  const Tensor& lt_(const Tensor& other) const;
  const Tensor& le_(const Tensor& other) const;
  const Tensor& gt_(const Tensor& other) const;
  const Tensor& ge_(const Tensor& other) const;
  const Tensor& eq_(const Scalar& other) const;
  const Tensor& ne_(const Scalar& other) const;
  const Tensor& lt_(const Scalar& other) const;
  const Tensor& le_(const Scalar& other) const;
  const Tensor& gt_(const Scalar& other) const;
  const Tensor& ge_(const Scalar& other) const;
  Tensor logical_not() const;
  Tensor isnan() const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  const Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;

  // --- Reductions -------------------------------------------------------------------------------
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod() const;
  // Whether every (all) or some (any) element is non-zero: bool (uint8 for a uint8 input, as PyTorch).
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const { return maximum(other); }
  Tensor min(const Tensor& other) const { return minimum(other); }
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const Scalar& p, IntArrayRef dims, bool keepdim = false) const;
  // Over all elements. The bool forms are templates so that a braced dim list, var({1}), picks the
  // dims overload instead of converting to bool.
  Tensor var() const { return var(IntArrayRef{}, true, false); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor var(B unbiased) const { return var(IntArrayRef{}, unbiased, false); }
  Tensor var(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std() const { return std(IntArrayRef{}, true, false); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor std(B unbiased) const { return std(IntArrayRef{}, unbiased, false); }
  Tensor std(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool equal(const Tensor& other) const;

  // --- Linear algebra and indexing --------------------------------------------------------------
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  const Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  const Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  const Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  const Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor nonzero() const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;

  // --- Operators (elementwise, broadcasting) ----------------------------------------------------
  Tensor operator-() const { return neg(); }
  Tensor& operator+=(const Tensor& o) { add_(o); return *this; }
  Tensor& operator+=(const Scalar& o) { add_(o); return *this; }
  Tensor& operator-=(const Tensor& o) { sub_(o); return *this; }
  Tensor& operator-=(const Scalar& o) { sub_(o); return *this; }
  Tensor& operator*=(const Tensor& o) { mul_(o); return *this; }
  Tensor& operator*=(const Scalar& o) { mul_(o); return *this; }
  Tensor& operator/=(const Tensor& o) { div_(o); return *this; }
  Tensor& operator/=(const Scalar& o) { div_(o); return *this; }

 private:
  const TensorImpl& checked() const;
  std::shared_ptr<TensorImpl> impl_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);  // remainder (cohort/ops/pointwise.h)
Tensor operator%(const Tensor& a, const Scalar& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator!(const Tensor& a);
Tensor operator&&(const Tensor& a, const Tensor& b) = delete;  // use logical_and

// Prints as libtorch does (what a libtorch program prints, src/core/print.cpp):
//    1  0
//    0  1
//   [ CPUFloatType{2,2} ]
std::ostream& operator<<(std::ostream& os, const Tensor& t);
// The same, with lines at most `line_width` characters wide, to `os` or to std::cout.
void print(std::ostream& os, const Tensor& t, int64_t line_width = 80);
void print(const Tensor& t, int64_t line_width = 80);
// What Python's repr(tensor) gives for the same tensor in PyTorch 1.13, character for character:
// tensor([[1.0000, 2.0000]], requires_grad=True). The blitz examples print with it.
std::string repr(const Tensor& t);

template <class T>
T* Tensor::data_ptr() const {
  COHORT_CHECK_AS(TypeError, dtype() == dtype_v<T>, "data_ptr: the tensor holds ", dtype(),
                  ", got a request for ", dtype_v<T>);
  return static_cast<T*>(checked().data());
}

template <class T>
T Tensor::item() const {
  return item().to<T>();
}

}  // namespace cohort
