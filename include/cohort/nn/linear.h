// Linear: y = x W^T + b. x: [*, in_features] -> [*, out_features].
// Initialised as PyTorch does: W and b uniform in +-1/sqrt(in_features).
#pragma once

#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool b) { bias_ = b; return *this; }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  explicit LinearImpl(const LinearOptions& options);
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined without bias
};

using Linear = ModuleHolder<LinearImpl>;

namespace functional {
// y = input W^T + b; bias may be undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
}  // namespace functional

}  // namespace cohort::nn
