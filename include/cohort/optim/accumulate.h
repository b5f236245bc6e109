// optim::GradientAccumulator: one optimizer step over k micro-batches, as if they were one batch.
//
//   optim::GradientAccumulator acc(optimizer, 4);              // a window of 4 micro-batches
//   for (auto& [x, y] : micro_batches) {
//     acc.backward(F::cross_entropy((*dp)(x), y));             // any module, nn::DataParallel too
//     if (acc.ready()) acc.step();                              // steps, clears the grads, opens a new window
//   }
//
// The window is the unit: step() refuses to run before the k-th backward (a cohort::Error saying
// how many were done), backward() refuses a (k+1)-th, and zero_grad() drops a partial window.
// Two ways to weigh the micro-batches (one per window; mixing them is an error):
//  - backward(loss): loss / k. For a loss that is a mean over its micro-batch, the gradients are
//    those of the mean over the window when the micro-batches have equal sizes.
//  - backward(loss, samples): loss * samples now, and step() divides every gradient by the window's
//    total samples first. For mean losses this is the mean over the window's samples whatever the
//    micro-batch sizes (the last, short micro-batch of an epoch included). Until step(), .grad
//    holds the sample-weighted sum: to clip gradients before the step, use the first form.
// Either way one window equals one step on the concatenated batch, up to float rounding, for
// any optimizer (the optimizer sees one gradient per window). Gradients must be zero (or none)
// when a window starts: step() and zero_grad() leave them so; call zero_grad() before the first.
// Batch norm is the exception, as with any split: each micro-batch is normalised by its own
// statistics.
#pragma once

#include <cstdint>

#include "cohort/core/tensor.h"
#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class GradientAccumulator {
 public:
  // Throws cohort::Error unless micro_batches >= 1. Keeps a reference: the optimizer must outlive it.
  GradientAccumulator(Optimizer& optimizer, int64_t micro_batches);

  // Backpropagates loss / micro_batches (a 0-d tensor). Throws cohort::Error when the window is
  // already full, for a loss that is not 0-d, or after backward(loss, samples) in the same window.
  void backward(const Tensor& loss);
  // Backpropagates loss * samples; step() divides the gradients by the window's samples. samples >= 1.
  void backward(const Tensor& loss, int64_t samples);

  // After the k-th backward: (divides the gradients by the samples,) steps the optimizer, clears the
  // gradients and starts the next window. Throws cohort::Error "GradientAccumulator::step: only 2 of
  // 4 micro-batches ..." before that, changing nothing.
  void step();
  // Drops the window: clears the gradients (as Optimizer::zero_grad) and the count.
  void zero_grad(bool set_to_none = true);

  bool ready() const { return done_ == micro_batches_; }  // the window is complete: step() may run
  int64_t done() const { return done_; }                  // micro-batches backpropagated in this window
  int64_t micro_batches() const { return micro_batches_; }
  int64_t samples() const { return samples_; }            // this window's samples (form 2), else 0
  Optimizer& optimizer() const { return optimizer_; }

 private:
  enum class Weighting { kNone, kMean, kSamples };
  void check_can_backward(const Tensor& loss, Weighting weighting) const;

  Optimizer& optimizer_;
  int64_t micro_batches_;
  int64_t done_ = 0;
  int64_t samples_ = 0;
  Weighting weighting_ = Weighting::kNone;  // this window's
};

}  // namespace cohort::optim
