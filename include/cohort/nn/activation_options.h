// The options of the activation layers, spelled as libtorch's (torch/nn/options/activation.h): the
// modules take XxxOptions, nn::functional takes XxxFuncOptions, which are the same structs where
// libtorch makes them the same. Defaults are PyTorch's.
//   nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true));  F::hardtanh(x, F::HardtanhFuncOptions().min_val(-2));
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cohort/core/dtype.h"

namespace cohort::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  ReLUOptions& inplace(bool v) { inplace_ = v; return *this; }
  bool inplace() const { return inplace_; }

 private:
  bool inplace_;
};

struct ReLU6Options {
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  ReLU6Options& inplace(bool v) { inplace_ = v; return *this; }
  bool inplace() const { return inplace_; }

 private:
  bool inplace_;
};

struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  SELUOptions& inplace(bool v) { inplace_ = v; return *this; }
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

// ELU and CELU: alpha and inplace.
struct ELUOptions {
  ELUOptions& alpha(double v) { alpha_ = v; return *this; }
  ELUOptions& inplace(bool v) { inplace_ = v; return *this; }
  double alpha() const { return alpha_; }
  bool inplace() const { return inplace_; }

 private:
  double alpha_ = 1.0;
  bool inplace_ = false;
};

struct CELUOptions {
  CELUOptions& alpha(double v) { alpha_ = v; return *this; }
  CELUOptions& inplace(bool v) { inplace_ = v; return *this; }
  double alpha() const { return alpha_; }
  bool inplace() const { return inplace_; }

 private:
  double alpha_ = 1.0;
  bool inplace_ = false;
};

struct HardtanhOptions {
  HardtanhOptions& min_val(double v) { min_val_ = v; return *this; }
  HardtanhOptions& max_val(double v) { max_val_ = v; return *this; }
  HardtanhOptions& inplace(bool v) { inplace_ = v; return *this; }
  double min_val() const { return min_val_; }
  double max_val() const { return max_val_; }
  bool inplace() const { return inplace_; }

 private:
  double min_val_ = -1.0, max_val_ = 1.0;
  bool inplace_ = false;
};

struct SoftplusOptions {
  SoftplusOptions& beta(double v) { beta_ = v; return *this; }
  SoftplusOptions& threshold(double v) { threshold_ = v; return *this; }
  double beta() const { return beta_; }
  double threshold() const { return threshold_; }

 private:
  double beta_ = 1.0, threshold_ = 20.0;
};

// Softshrink and Hardshrink: lambda (libtorch's spelling; PyTorch's lambd).
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  SoftshrinkOptions& lambda(double v) { lambda_ = v; return *this; }
  double lambda() const { return lambda_; }

 private:
  double lambda_;
};

struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  HardshrinkOptions& lambda(double v) { lambda_ = v; return *this; }
  double lambda() const { return lambda_; }

 private:
  double lambda_;
};

// x where x > threshold, else value.
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  ThresholdOptions& threshold(double v) { threshold_ = v; return *this; }
  ThresholdOptions& value(double v) { value_ = v; return *this; }
  ThresholdOptions& inplace(bool v) { inplace_ = v; return *this; }
  double threshold() const { return threshold_; }
  double value() const { return value_; }
  bool inplace() const { return inplace_; }

 private:
  double threshold_, value_;
  bool inplace_ = false;
};

// PReLU: num_parameters weights (1, or the input's channel count), each initialised to init.
struct PReLUOptions {
  PReLUOptions& num_parameters(int64_t v) { num_parameters_ = v; return *this; }
  PReLUOptions& init(double v) { init_ = v; return *this; }
  int64_t num_parameters() const { return num_parameters_; }
  double init() const { return init_; }

 private:
  int64_t num_parameters_ = 1;
  double init_ = 0.25;
};

// GLU: the dim that is halved.
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  GLUOptions& dim(int64_t v) { dim_ = v; return *this; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

// RReLU: negative slopes drawn from [lower, upper] in training, their mean in evaluation.
struct RReLUOptions {
  RReLUOptions& lower(double v) { lower_ = v; return *this; }
  RReLUOptions& upper(double v) { upper_ = v; return *this; }
  RReLUOptions& inplace(bool v) { inplace_ = v; return *this; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  bool inplace() const { return inplace_; }

 private:
  double lower_ = 1.0 / 8.0, upper_ = 1.0 / 3.0;
  bool inplace_ = false;
};

struct GELUOptions {
  GELUOptions& approximate(std::string v) { approximate_ = std::move(v); return *this; }
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_ = "none";
};

// The softmax modules' dim.
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  SoftmaxOptions& dim(int64_t v) { dim_ = v; return *this; }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;

namespace functional {

using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using CELUFuncOptions = CELUOptions;
using HardtanhFuncOptions = HardtanhOptions;
using SoftplusFuncOptions = SoftplusOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using ThresholdFuncOptions = ThresholdOptions;
using GELUFuncOptions = GELUOptions;
using GLUFuncOptions = GLUOptions;

// The functional form says whether it is training (the module takes it from its mode).
struct RReLUFuncOptions {
  RReLUFuncOptions& lower(double v) { lower_ = v; return *this; }
  RReLUFuncOptions& upper(double v) { upper_ = v; return *this; }
  RReLUFuncOptions& training(bool v) { training_ = v; return *this; }
  RReLUFuncOptions& inplace(bool v) { inplace_ = v; return *this; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  bool training() const { return training_; }
  bool inplace() const { return inplace_; }

 private:
  double lower_ = 1.0 / 8.0, upper_ = 1.0 / 3.0;
  bool training_ = false, inplace_ = false;
};

// The functional softmaxes also take the dtype to compute in (the input is cast to it first).
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  SoftmaxFuncOptions& dim(int64_t v) { dim_ = v; return *this; }
  SoftmaxFuncOptions& dtype(std::optional<DType> v) { dtype_ = v; return *this; }
  int64_t dim() const { return dim_; }
  std::optional<DType> dtype() const { return dtype_; }

 private:
  int64_t dim_;
  std::optional<DType> dtype_;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
using SoftminFuncOptions = SoftmaxFuncOptions;

}  // namespace functional
}  // namespace cohort::nn
