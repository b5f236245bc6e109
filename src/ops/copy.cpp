// Copies and conversions: clone, contiguous, to(dtype/device), copy_, fill_, zero_, broadcast_link_.
#include "cohort/ops/copy.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/trace.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// The layout of a copy of x: what was asked, where Preserve keeps a channels-last layout and
// makes any other contiguous.
MemoryFormat copy_format(const Tensor& x, std::optional<MemoryFormat> requested) {
  const MemoryFormat format = requested.value_or(MemoryFormat::Preserve);
  return format == MemoryFormat::Preserve ? x.suggest_memory_format() : format;
}

}  // namespace

Tensor clone(const Tensor& x, std::optional<MemoryFormat> memory_format) {
  detail::check_defined("clone", x);
  // Traced, as contiguous() copies through clone between a transpose and a layer that wants rows.
  trace::OpScope trace("clone");
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device(), copy_format(x, memory_format));
  kernel::copy(out, x);
  out = autograd::record("CloneBackward0", out, {x}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
  if (trace) trace.record({x}, out);
  return out;
}

Tensor contiguous(const Tensor& x) {
  detail::check_defined("contiguous", x);
  return x.is_contiguous() ? x : clone(x, MemoryFormat::Contiguous);
}

Tensor contiguous(const Tensor& x, MemoryFormat format) {
  detail::check_defined("contiguous", x);
  COHORT_CHECK(format != MemoryFormat::Preserve, "contiguous: Preserve is no layout to make ", x.describe(),
               " dense in; hint: give Contiguous, ChannelsLast or ChannelsLast3d");
  if (format != MemoryFormat::Contiguous) memory_format_strides(x.sizes(), format, "contiguous");  // checks the rank
  return x.is_contiguous(format) ? x : clone(x, format);
}

Tensor to(const Tensor& x, const TensorOptions& options, bool copy) {
  detail::check_defined("to", x);
  DType dtype = options.has_dtype() ? options.dtype() : x.dtype();
  Device device = options.has_device() ? options.device() : x.device();
  check_device(device, "to");
  const MemoryFormat format = copy_format(x, options.memory_format_opt());
  if (format != MemoryFormat::Contiguous) memory_format_strides(x.sizes(), format, "to");  // checks the rank
  const bool relayout = options.has_memory_format() && options.memory_format_opt() != MemoryFormat::Preserve &&
                        !x.is_contiguous(format);
  if (!copy && !relayout && dtype == x.dtype() && device == x.device()) return x;
  // Note: CPU devices share one address space, so a device move is a copy into memory counted
  // against the target device; keeping it a real copy keeps devices independent.
  Tensor out = detail::make_empty(x.sizes(), dtype, device, format);
  kernel::copy(out, x);
  if (!is_floating_point(dtype)) return out;
  DType in_dtype = x.dtype();
  Device in_device = x.device();
  return autograd::record("ToCopyBackward0", out, {x}, [in_dtype, in_device](const Tensor& g) {
    return std::vector<Tensor>{g.to(TensorOptions(in_dtype).device(in_device))};
  });
}

const Tensor& Tensor::copy_(const Tensor& src, bool /*non_blocking*/) const {
  detail::check_defined("copy_", *this, "destination");
  detail::check_defined("copy_", src, "source");
  Shape shape = broadcast_shapes(sizes(), src.sizes(), "copy_");
  COHORT_CHECK(shape == sizes().vec(), "copy_: the source of shape ", src.sizes(),
               " cannot be broadcast to the destination's shape ", sizes());
  bool graph = autograd::needs_grad({*this, src});
  detail::check_inplace("copy_", *this, graph);
  if (graph) {
    // The new values are src's, so the gradient flows to src only.
    Tensor result = src.to(TensorOptions(dtype()).device(device())).expand(sizes());
    {
      NoGradGuard g;
      kernel::copy(*this, result);
    }
    Shape src_sizes = src.sizes().vec();
    DType src_dtype = src.dtype();
    Tensor self = *this;
    Tensor tracked = autograd::record("CopyBackwards", detail::make_view(*this, sizes().vec(), strides().vec(), storage_offset()),
                                      {*this, src}, [src_sizes, src_dtype](const Tensor& g) {
                                        return std::vector<Tensor>{Tensor(), detail::reduce_grad(g, src_sizes, src_dtype)};
                                      });
    detail::rebase_history(*this, tracked);
  } else {
    kernel::copy(*this, src);
  }
  unsafe_impl()->storage()->bump_version();
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  detail::check_defined("fill_", *this);
  detail::check_inplace("fill_", *this, false);
  kernel::fill(*this, value);
  if (requires_grad() && GradMode::is_enabled()) {
    // The values no longer depend on anything.
    Shape s = sizes().vec();
    Tensor tracked = autograd::record("FillBackward0", detail::make_view(*this, s, strides().vec(), storage_offset()),
                                      {*this}, [](const Tensor&) { return std::vector<Tensor>{Tensor()}; });
    detail::rebase_history(*this, tracked);
  }
  unsafe_impl()->storage()->bump_version();
  return *this;
}

const Tensor& Tensor::zero_() const { return fill_(0); }

void broadcast_link_(const Tensor& replica, const Tensor& master) {
  detail::check_defined("broadcast_link_", replica, "replica");
  detail::check_defined("broadcast_link_", master, "master");
  COHORT_CHECK(replica.sizes() == master.sizes(), "broadcast_link_: expected a replica of master's shape ",
               master.sizes(), ", got ", replica.sizes());
  if (!GradMode::is_enabled() || !master.requires_grad()) return;
  COHORT_CHECK_AS(AutogradError, !(replica.is_leaf() && replica.requires_grad()),
                  "broadcast_link_: the replica is a leaf that requires grad; hint: detach_() it first");
  Tensor alias = detail::make_view(replica, replica.sizes().vec(), replica.strides().vec(), replica.storage_offset());
  const Device device = master.device();
  const DType dtype = master.dtype();
  // The gradient reaches the master's device as an alias: the engine's sum of the replicas'
  // gradients (or the master's AccumulateGrad) reads it where the replica's backward wrote it.
  Tensor linked = autograd::record("BroadcastBackward", alias, {master}, [device, dtype](const Tensor& g) {
    return std::vector<Tensor>{alias_on(g.to(dtype), device)};
  });
  detail::rebase_history(replica, linked);
}

Tensor alias_on(const Tensor& x, Device device) {
  detail::check_defined("alias_on", x);
  check_device(device, "alias_on");
  if (x.device() == device) return x;
  const Storage& storage = x.unsafe_impl()->storage();
  // An alias of an alias points at the owner: no chains, and the owner's own device gets it back.
  Storage base = storage->alias_base() ? storage->alias_base() : storage;
  Storage seen = base->device() == device ? base : std::make_shared<StorageImpl>(base, device);
  return Tensor(std::make_shared<TensorImpl>(std::move(seen), x.dtype(), x.sizes().vec(), x.strides().vec(),
                                             x.storage_offset()));
}

}  // namespace cohort
