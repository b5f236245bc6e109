// Activation layers: thin modules over nn::functional (whose options are in
// nn/activation_options.h), printed as PyTorch prints them. PReLU is the one with a parameter:
//   nn::PReLU prelu(nn::PReLUOptions().num_parameters(16));   // weight [16], 0.25 each, along dim 1
//   nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(2));  // throws unless max_val > min_val
#pragma once

#include <string>

#include "cohort/nn/activation_options.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::relu(x, options); }
  void pretty_print(std::ostream& os) const override;
  ReLUOptions options;
};

class ReLU6Impl : public Cloneable<ReLU6Impl> {
 public:
  explicit ReLU6Impl(const ReLU6Options& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::relu6(x, options); }
  void pretty_print(std::ostream& os) const override;
  ReLU6Options options;
};

class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::leaky_relu(x, options); }
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};

class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(const GELUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::gelu(x, options); }
  void pretty_print(std::ostream& os) const override;
  GELUOptions options;
};

class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::elu(x, options); }
  void pretty_print(std::ostream& os) const override;
  ELUOptions options;
};

class SELUImpl : public Cloneable<SELUImpl> {
 public:
  explicit SELUImpl(const SELUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::selu(x, options); }
  void pretty_print(std::ostream& os) const override;
  SELUOptions options;
};

class CELUImpl : public Cloneable<CELUImpl> {
 public:
  explicit CELUImpl(const CELUOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;  // checks the options
  Tensor forward(const Tensor& x) { return functional::celu(x, options); }
  void pretty_print(std::ostream& os) const override;
  CELUOptions options;
};

class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;  // checks the options
  Tensor forward(const Tensor& x) { return functional::hardtanh(x, options); }
  void pretty_print(std::ostream& os) const override;
  HardtanhOptions options;
};

class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::softplus(x, options); }
  void pretty_print(std::ostream& os) const override;
  SoftplusOptions options;
};

class SoftshrinkImpl : public Cloneable<SoftshrinkImpl> {
 public:
  explicit SoftshrinkImpl(const SoftshrinkOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;  // checks the options
  Tensor forward(const Tensor& x) { return functional::softshrink(x, options); }
  void pretty_print(std::ostream& os) const override;
  SoftshrinkOptions options;
};

class HardshrinkImpl : public Cloneable<HardshrinkImpl> {
 public:
  explicit HardshrinkImpl(const HardshrinkOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::hardshrink(x, options); }
  void pretty_print(std::ostream& os) const override;
  HardshrinkOptions options;
};

class ThresholdImpl : public Cloneable<ThresholdImpl> {
 public:
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::threshold(x, options); }
  void pretty_print(std::ostream& os) const override;
  ThresholdOptions options;
};

class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;
  SoftmaxOptions options;
};

class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::log_softmax(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;
  LogSoftmaxOptions options;
};

class SoftminImpl : public Cloneable<SoftminImpl> {
 public:
  explicit SoftminImpl(const SoftminOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::softmin(x, options.dim()); }
  void pretty_print(std::ostream& os) const override;
  SoftminOptions options;
};

class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::silu(x); }
  void pretty_print(std::ostream& os) const override;
};

class MishImpl : public Cloneable<MishImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::mish(x); }
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

class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::logsigmoid(x); }
  void pretty_print(std::ostream& os) const override;
};

class SoftsignImpl : public Cloneable<SoftsignImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::softsign(x); }
  void pretty_print(std::ostream& os) const override;
};

class TanhshrinkImpl : public Cloneable<TanhshrinkImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::tanhshrink(x); }
  void pretty_print(std::ostream& os) const override;
};

class GLUImpl : public Cloneable<GLUImpl> {
 public:
  explicit GLUImpl(const GLUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) { return functional::glu(x, options); }
  void pretty_print(std::ostream& os) const override;
  GLUOptions options;
};

// Random negative slopes in training mode, their mean in evaluation mode.
class RReLUImpl : public Cloneable<RReLUImpl> {
 public:
  explicit RReLUImpl(const RReLUOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;  // checks the options
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  RReLUOptions options;
};

// Softmax over the channels of each position: x [C, H, W] or [N, C, H, W] (dim -3); throws for
// other ranks.
class Softmax2dImpl : public Cloneable<Softmax2dImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
};

// x where x > 0, else weight x; weight [num_parameters] (a parameter, filled with init) along dim 1
// of x, or one value for all.
class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& x) { return functional::prelu(x, weight); }
  void pretty_print(std::ostream& os) const override;
  PReLUOptions options;
  Tensor weight;
};

using ReLU = ModuleHolder<ReLUImpl>;
using ReLU6 = ModuleHolder<ReLU6Impl>;
using LeakyReLU = ModuleHolder<LeakyReLUImpl>;
using GELU = ModuleHolder<GELUImpl>;
using ELU = ModuleHolder<ELUImpl>;
using SELU = ModuleHolder<SELUImpl>;
using CELU = ModuleHolder<CELUImpl>;
using Hardtanh = ModuleHolder<HardtanhImpl>;
using Softplus = ModuleHolder<SoftplusImpl>;
using Softshrink = ModuleHolder<SoftshrinkImpl>;
using Hardshrink = ModuleHolder<HardshrinkImpl>;
using Threshold = ModuleHolder<ThresholdImpl>;
using Softmax = ModuleHolder<SoftmaxImpl>;
using LogSoftmax = ModuleHolder<LogSoftmaxImpl>;
using Softmin = ModuleHolder<SoftminImpl>;
using SiLU = ModuleHolder<SiLUImpl>;
using Mish = ModuleHolder<MishImpl>;
using Sigmoid = ModuleHolder<SigmoidImpl>;
using Tanh = ModuleHolder<TanhImpl>;
using LogSigmoid = ModuleHolder<LogSigmoidImpl>;
using Softsign = ModuleHolder<SoftsignImpl>;
using Tanhshrink = ModuleHolder<TanhshrinkImpl>;
using Softmax2d = ModuleHolder<Softmax2dImpl>;
using PReLU = ModuleHolder<PReLUImpl>;
using GLU = ModuleHolder<GLUImpl>;
using RReLU = ModuleHolder<RReLUImpl>;

}  // namespace cohort::nn
