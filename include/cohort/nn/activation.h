// Activation layers: thin modules over nn::functional, printed as PyTorch prints them.
#pragma once

#include <string>

#include "cohort/nn/functional/activation.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  ReLUOptions& inplace(bool v) { inplace_ = v; return *this; }
  bool inplace() const { return inplace_; }

 private:
  bool inplace_;
};

struct LeakyReLUOptions {
  LeakyReLUOptions& negative_slope(double v) { negative_slope_ = v; return *this; }
  LeakyReLUOptions& inplace(bool v) { inplace_ = v; return *this; }
  double negative_slope() const { return negative_slope_; }
  bool inplace() const { return inplace_; }

 private:
  double negative_slope_ = 0.01;
  bool inplace_ = false;
};

struct GELUOptions {
  GELUOptions& approximate(std::string v) { approximate_ = std::move(v); return *this; }
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_ = "none";
};

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};
using LogSoftmaxOptions = SoftmaxOptions;

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::relu(x, options.inplace()); }
  void pretty_print(std::ostream& os) const override;
  ReLUOptions options;
};

class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::leaky_relu(x, options.negative_slope(), options.inplace()); }
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};

class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(const GELUOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::gelu(x, options.approximate()); }
  void pretty_print(std::ostream& os) const override;
  GELUOptions options;
};

// Modules without options.
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::silu(x); }
  void pretty_print(std::ostream& os) const override;
};

class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::sigmoid(x); }
  void pretty_print(std::ostream& os) const override;
};

class TanhImpl : public Cloneable<TanhImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::tanh(x); }
  void pretty_print(std::ostream& os) const override;
};

class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;
  SoftmaxOptions options;
};

class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::log_softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;
  LogSoftmaxOptions options;
};

using ReLU = ModuleHolder<ReLUImpl>;
using LeakyReLU = ModuleHolder<LeakyReLUImpl>;
using GELU = ModuleHolder<GELUImpl>;
using SiLU = ModuleHolder<SiLUImpl>;
using Sigmoid = ModuleHolder<SigmoidImpl>;
using Tanh = ModuleHolder<TanhImpl>;
using Softmax = ModuleHolder<SoftmaxImpl>;
using LogSoftmax = ModuleHolder<LogSoftmaxImpl>;

}  // namespace cohort::nn
