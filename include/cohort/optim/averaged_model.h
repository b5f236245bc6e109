// optim::AveragedModel: a running average of a module's weights, PyTorch's
// torch.optim.swa_utils.AveragedModel. By default the equal-weight mean of every update (stochastic
// weight averaging); with ema_decay, an exponential moving average (get_ema_multi_avg_fn). The average
// lives in a deep copy of the module (Module::clone), which evaluates, predicts and saves like it.
//
//   optim::AveragedModel ema(*net, optim::AveragedModelOptions().ema_decay(0.999).use_buffers(true));
//   for (...) { ...; optimizer.step(); ema.update_parameters(*net); }
//   evaluate(ema.module());
//
// The first update copies the module's values; each later one moves every averaged tensor a towards
// the module's w:
//   ema: a + (1 - decay) (w - a)        swa: a + (w - a) / (n + 1), n the updates so far
// use_buffers averages the floating-point buffers too (batch norm's running statistics: the averaged
// weights then come with statistics that match them) and copies the integer ones (num_batches_tracked,
// which PyTorch truncates to an integer after averaging). Without it every buffer is copied from the
// module at each update, as PyTorch's default does (batch norm statistics are then the module's, not the
// average's; PyTorch recomputes them with update_bn).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "cohort/nn/module.h"

namespace cohort::optim {

struct AveragedModelOptions {
  // An exponential moving average with this decay, in [0, 1). Unset: the equal-weight mean.
  AveragedModelOptions& ema_decay(double decay) { ema_decay_ = decay; return *this; }
  AveragedModelOptions& use_buffers(bool on) { use_buffers_ = on; return *this; }
  const std::optional<double>& ema_decay() const { return ema_decay_; }
  bool use_buffers() const { return use_buffers_; }

 private:
  std::optional<double> ema_decay_;
  bool use_buffers_ = false;
};

class AveragedModel {
 public:
  // Copies `model` (its clone() must work: built-in layers and nn::Cloneable modules). The copy's
  // parameters do not require grad. Throws cohort::Error for an ema_decay outside [0, 1).
  explicit AveragedModel(const nn::Module& model, AveragedModelOptions options = {});

  // Folds `model`'s current values into the average. Throws cohort::Error naming the first parameter
  // or buffer whose name or shape differs from the averaged copy's (another model), changing nothing.
  void update_parameters(const nn::Module& model);

  // The averaged copy, and its shared handle.
  nn::Module& module() const { return *module_; }
  const std::shared_ptr<nn::Module>& module_ptr() const { return module_; }
  // The updates folded in so far (PyTorch's n_averaged buffer); restored with the copy's state from a
  // checkpoint. Throws cohort::Error for a negative count.
  int64_t n_averaged() const { return n_averaged_; }
  void set_n_averaged(int64_t n);
  const AveragedModelOptions& options() const { return options_; }

 private:
  std::shared_ptr<nn::Module> module_;
  AveragedModelOptions options_;
  int64_t n_averaged_ = 0;
};

}  // namespace cohort::optim
