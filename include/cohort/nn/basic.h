// Small layers: Identity, Flatten, Unflatten, Dropout, Functional.
#pragma once

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/nn/functional/activation.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return x; }
  void pretty_print(std::ostream& os) const override;
};

struct FlattenOptions {
  FlattenOptions& start_dim(int64_t v) { start_dim_ = v; return *this; }
  FlattenOptions& end_dim(int64_t v) { end_dim_ = v; return *this; }
  int64_t start_dim() const { return start_dim_; }
  int64_t end_dim() const { return end_dim_; }

 private:
  int64_t start_dim_ = 1, end_dim_ = -1;
};

class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return x.flatten(options.start_dim(), options.end_dim()); }
  void pretty_print(std::ostream& os) const override;
  FlattenOptions options;
};

// Unflatten(UnflattenOptions(1, {32, 2, 2})): dim 1 of size 128 becomes [32, 2, 2] (one size may be -1).
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  UnflattenOptions& dim(int64_t v) { dim_ = v; return *this; }
  UnflattenOptions& sizes(std::vector<int64_t> v) { sizes_ = std::move(v); return *this; }
  int64_t dim() const { return dim_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  int64_t dim_;
  std::vector<int64_t> sizes_;
};

class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  explicit UnflattenImpl(const UnflattenOptions& options) : options(options) {}
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : options(dim, std::move(sizes)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return x.unflatten(options.dim(), options.sizes()); }
  void pretty_print(std::ostream& os) const override;
  UnflattenOptions options;
};

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  DropoutOptions& p(double v) { p_ = v; return *this; }
  DropoutOptions& inplace(bool v) { inplace_ = v; return *this; }
  double p() const { return p_; }
  bool inplace() const { return inplace_; }

 private:
  double p_;
  bool inplace_ = false;
};

// Active in training mode only; masks come from the default generator (manual_seed repeats them).
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  void reset() override;
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};

// A function as a layer, for Sequential, as libtorch spells it: nn::Functional(relu),
// nn::Functional(leaky_relu, 0.2), nn::Functional(log_softmax, 1, nullopt): the arguments after the
// function are passed after the input on every call. No parameters, no state.
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function);
  template <class F, class... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
  explicit FunctionalImpl(F function, Args&&... args)
      : FunctionalImpl(Function([function, bound = std::make_tuple(std::forward<Args>(args)...)](const Tensor& x) {
          return std::apply([&](const auto&... a) { return Tensor(function(x, a...)); }, bound);
        })) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

 private:
  Function function_;
};

using Identity = ModuleHolder<IdentityImpl>;
using Flatten = ModuleHolder<FlattenImpl>;
using Unflatten = ModuleHolder<UnflattenImpl>;
using Dropout = ModuleHolder<DropoutImpl>;
using Functional = ModuleHolder<FunctionalImpl>;

}  // namespace cohort::nn
