// The BatchNorm1d/BatchNorm2d layers: parameters and buffers as PyTorch names them, the momentum
// rule (num_batches_tracked), and PyTorch's repr.
#include "cohort/nn/batchnorm.h"

#include <ostream>
#include <sstream>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/normalization.h"

namespace cohort::nn {

namespace {

// A double as Python's repr prints it in the common cases: 1e-05, 0.1, 1.0.
std::string python_float(double v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset() {
  const int64_t C = options.num_features();
  COHORT_CHECK(C > 0, D == 1 ? "BatchNorm1d" : "BatchNorm2d", ": num_features must be positive, got ", C);
  weight = this->register_parameter("weight", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  bias = this->register_parameter("bias", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", zeros({C}));
    running_var = this->register_buffer("running_var", ones({C}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", zeros({}, kInt64));
  } else {
    running_mean = running_var = num_batches_tracked = Tensor();
  }
  reset_parameters();
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::check_input(const Tensor& input) const {
  if (D == 1) {
    COHORT_CHECK(input.dim() == 2 || input.dim() == 3, "BatchNorm1d: expected a 2-d [N, C] or 3-d [N, C, L] input, "
                                                       "got input of shape ", input.sizes());
  } else {
    COHORT_CHECK(input.dim() == 4, "BatchNorm2d: expected a 4-d input [N, C, H, W], got input of shape ", input.sizes());
  }
}

template <size_t D, class Derived>
Tensor BatchNormImplBase<D, Derived>::forward(const Tensor& input) {
  check_input(input);
  if (this->is_training() && training_forward) return training_forward(input);
  return std::get<0>(forward_with_stats(input));
}

template <size_t D, class Derived>
std::tuple<Tensor, Tensor, Tensor> BatchNormImplBase<D, Derived>::forward_with_stats(const Tensor& input) {
  check_input(input);
  const bool training = this->is_training();
  double factor = 0;
  if (training && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    factor = running_stats_weight(options, num_batches_tracked.template item<int64_t>());
  }
  // Batch statistics in training, and always without running ones; the running ones are updated
  // in training only.
  const bool use_running = !training && options.track_running_stats();
  const bool update_running = training && options.track_running_stats();
  return batch_norm_with_stats(input, weight, bias, use_running || update_running ? running_mean : Tensor(),
                               use_running || update_running ? running_var : Tensor(), !use_running, factor,
                               options.eps());
}

template <size_t D, class Derived>
void BatchNormImplBase<D, Derived>::pretty_print(std::ostream& os) const {
  os << (D == 1 ? "BatchNorm1d(" : "BatchNorm2d(") << options.num_features() << ", eps=" << python_float(options.eps())
     << ", momentum=" << (options.momentum() ? python_float(*options.momentum()) : "None")
     << ", affine=" << (options.affine() ? "True" : "False")
     << ", track_running_stats=" << (options.track_running_stats() ? "True" : "False") << ")";
}

template class BatchNormImplBase<1, BatchNorm1dImpl>;
template class BatchNormImplBase<2, BatchNorm2dImpl>;

}  // namespace cohort::nn
