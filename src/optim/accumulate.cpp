// GradientAccumulator: the window bookkeeping around Tensor::backward and Optimizer::step.
#include "cohort/optim/accumulate.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"

namespace cohort::optim {

namespace {
const char* plural(int64_t n) { return n == 1 ? "" : "es"; }
}  // namespace

GradientAccumulator::GradientAccumulator(Optimizer& optimizer, int64_t micro_batches)
    : optimizer_(optimizer), micro_batches_(micro_batches) {
  COHORT_CHECK(micro_batches >= 1, "GradientAccumulator: expected at least 1 micro-batch per step, got ",
               micro_batches);
}

void GradientAccumulator::check_can_backward(const Tensor& loss, Weighting weighting) const {
  COHORT_CHECK(done_ < micro_batches_, "GradientAccumulator::backward: the window of ", micro_batches_,
               " micro-batch", plural(micro_batches_), " is already complete; hint: call step() before the next "
               "micro-batch, or zero_grad() to drop the window");
  COHORT_CHECK(loss.defined() && loss.dim() == 0, "GradientAccumulator::backward: expected a 0-d loss, got ",
               loss.defined() ? detail::str(loss.sizes()) : std::string("an undefined tensor"),
               "; hint: reduce it first (mean() or sum())");
  COHORT_CHECK(weighting_ == Weighting::kNone || weighting_ == weighting,
               "GradientAccumulator::backward: this window mixes backward(loss) and backward(loss, samples) "
               "after ", done_, " of ", micro_batches_, " micro-batches; hint: use one form for every micro-batch of a window");
}

void GradientAccumulator::backward(const Tensor& loss) {
  check_can_backward(loss, Weighting::kMean);
  (loss * (1.0 / static_cast<double>(micro_batches_))).backward();
  weighting_ = Weighting::kMean;
  ++done_;
}

void GradientAccumulator::backward(const Tensor& loss, int64_t samples) {
  check_can_backward(loss, Weighting::kSamples);
  COHORT_CHECK(samples >= 1, "GradientAccumulator::backward: expected the micro-batch's sample count (at least 1), got ",
               samples);
  (loss * static_cast<double>(samples)).backward();
  weighting_ = Weighting::kSamples;
  samples_ += samples;
  ++done_;
}

void GradientAccumulator::step() {
  COHORT_CHECK(ready(), "GradientAccumulator::step: only ", done_, " of ", micro_batches_, " micro-batch",
               plural(micro_batches_), " of the window done; the optimizer steps once per complete window; hint: "
               "call backward() for the remaining ", micro_batches_ - done_, ", or zero_grad() to drop the window");
  if (weighting_ == Weighting::kSamples) {
    NoGradGuard no_grad;
    const double scale = 1.0 / static_cast<double>(samples_);
    for (const Tensor& p : optimizer_.parameters())
      if (p.grad().defined()) p.mutable_grad().mul_(scale);
  }
  optimizer_.step();
  zero_grad();
}

void GradientAccumulator::zero_grad(bool set_to_none) {
  optimizer_.zero_grad(set_to_none);
  done_ = 0;
  samples_ = 0;
  weighting_ = Weighting::kNone;
}

}  // namespace cohort::optim
