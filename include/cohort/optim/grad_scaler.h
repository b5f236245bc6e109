// optim::GradScaler (also amp::GradScaler): dynamic loss scaling for mixed-precision training, with
// PyTorch's torch.amp.GradScaler semantics.
//
//   amp::GradScaler scaler;                       // scale 2^16, x2 after 2000 clean steps, x0.5 on inf/NaN
//   for (...) {
//     opt.zero_grad();
//     Tensor loss = loss_fn(net->forward(x), y);  // under autocast: float16/bfloat16 activations
//     scaler.scale(loss).backward();              // gradients of loss * scale
//     scaler.unscale_(opt);                       // optional: gradients / scale, e.g. before clipping
//     bool stepped = scaler.step(opt);            // unscales (if not done), steps unless a gradient is inf/NaN
//     scaler.update();                            // backs off after an overflow, grows after growth_interval
//   }
//
// A float16 gradient underflows to zero below 2^-24; multiplying the loss by a large scale keeps small
// gradients representable, and the gradients are divided by it again before the optimizer sees them.
// When the scale is too large, some gradient overflows to inf (or becomes NaN): that step is skipped
// and the scale halves. After growth_interval consecutive clean steps it doubles. So the scale stays
// near the largest value that does not overflow.
//
// Per step and optimizer, as PyTorch: unscale_ at most once (a second call before update() throws),
// step at most once (a second throws), and update() once after every optimizer's step; update() with
// no unscale_/step since the last update throws. A disabled scaler (enabled(false)) is the identity:
// scale() returns its argument, unscale_ does nothing, step() just steps, update() does nothing.
// Gradients of nn::DataParallel models live on the master and those of DistributedDataParallel are
// already the mean over ranks (the same everywhere), so any optimizer's parameters work unchanged:
// every rank skips the same steps.
//
// Differences from PyTorch: step() returns whether the optimizer stepped (PyTorch returns the
// optimizer's own return value); float16/bfloat16 gradients are unscaled like float32 ones (PyTorch
// refuses float16 gradients in unscale_); scale() keeps the output's shape (PyTorch's 1-element
// scale tensor turns a 0-d loss into shape [1]) and computes in float32 for 16-bit outputs (as
// PyTorch's float32 scale does), in the output's dtype otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/optim/optimizer.h"

namespace cohort::optim {

struct GradScalerOptions {
  GradScalerOptions& init_scale(double v) { init_scale_ = v; return *this; }
  GradScalerOptions& growth_factor(double v) { growth_factor_ = v; return *this; }    // > 1
  GradScalerOptions& backoff_factor(double v) { backoff_factor_ = v; return *this; }  // in (0, 1)
  GradScalerOptions& growth_interval(int64_t v) { growth_interval_ = v; return *this; }  // >= 1
  GradScalerOptions& enabled(bool on) { enabled_ = on; return *this; }

  double init_scale() const { return init_scale_; }
  double growth_factor() const { return growth_factor_; }
  double backoff_factor() const { return backoff_factor_; }
  int64_t growth_interval() const { return growth_interval_; }
  bool enabled() const { return enabled_; }

 private:
  double init_scale_ = 65536.0;  // 2^16
  double growth_factor_ = 2.0;
  double backoff_factor_ = 0.5;
  int64_t growth_interval_ = 2000;
  bool enabled_ = true;
};

class GradScaler {
 public:
  // Throws a cohort::Error for growth_factor <= 1, backoff_factor outside (0, 1), growth_interval < 1
  // or init_scale not positive and finite.
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (see above for the dtype); a disabled scaler returns outputs.
  Tensor scale(const Tensor& outputs) const;
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs) const;

  // Divides the gradients of the optimizer's parameters by the scale in place and records whether any
  // is inf or NaN: one pass over each gradient. Throws a cohort::Error when called twice for this
  // optimizer since the last update(), or after step().
  void unscale_(Optimizer& optimizer);
  // Unscales (unless unscale_ already did) and calls optimizer.step() unless a gradient was inf/NaN.
  // Returns whether it stepped. Throws when called twice for this optimizer since the last update().
  bool step(Optimizer& optimizer);
  // Halves (backoff_factor) the scale if any optimizer's gradients held inf/NaN since the last update,
  // else counts a clean step and grows (growth_factor) the scale after growth_interval of them; then
  // forgets every optimizer's unscale/step. Throws when no unscale_/step ran since the last update.
  void update();
  // Sets the scale to new_scale (> 0) and forgets every optimizer's unscale/step; the growth tracker
  // is unchanged, as PyTorch.
  void update(double new_scale);

  // The current scale (a float32 value); 1 when disabled.
  double get_scale() const { return enabled_ ? static_cast<double>(scale_) : 1.0; }
  // Consecutive clean steps since the last growth or backoff.
  int64_t get_growth_tracker() const { return growth_tracker_; }
  bool is_enabled() const { return enabled_; }
  double get_growth_factor() const { return growth_factor_; }
  void set_growth_factor(double v);
  double get_backoff_factor() const { return backoff_factor_; }
  void set_backoff_factor(double v);
  int64_t get_growth_interval() const { return growth_interval_; }
  void set_growth_interval(int64_t v);
  // Whether the last unscale_ of this optimizer (this step) found inf/NaN; false if it did not run.
  bool found_inf(const Optimizer& optimizer) const;

  // PyTorch's keys: "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker";
  // empty when disabled. Every value is exact (the scale is a float32, the rest integers or doubles).
  std::map<std::string, double> state_dict() const;
  // Restores a state_dict(): an exact resume. Does nothing when disabled; throws a cohort::Error
  // for an empty state (saved by a disabled scaler) or a missing key, changing nothing.
  void load_state_dict(const std::map<std::string, double>& state);
  // The same state as strings under "<prefix><key>" (numbers printed so that they read back exactly),
  // for io::save_checkpoint's metadata; load_metadata reads them back (missing keys: an error).
  void save_metadata(std::map<std::string, std::string>& metadata, const std::string& prefix = "grad_scaler.") const;
  void load_metadata(const std::map<std::string, std::string>& metadata, const std::string& prefix = "grad_scaler.");

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  struct PerOptimizer {
    Stage stage = Stage::kReady;
    bool found_inf = false;
  };

  float scale_;
  int64_t growth_tracker_ = 0;
  double growth_factor_, backoff_factor_;
  int64_t growth_interval_;
  bool enabled_;
  std::unordered_map<const Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace cohort::optim

// torch.amp.GradScaler's spelling.
namespace cohort::amp {
using optim::GradScaler;
using optim::GradScalerOptions;
}  // namespace cohort::amp
