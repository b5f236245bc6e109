// ReduceLROnPlateauScheduler, libtorch's name for PyTorch's ReduceLROnPlateau: multiplies every group's
// lr by `factor` once a metric has not improved for more than `patience` steps, never below the
// group's min_lr, then waits `cooldown` steps before counting again. An improvement is
//   min, rel: metric < best * (1 - threshold)     max, rel: metric > best * (1 + threshold)
//   min, abs: metric < best - threshold           max, abs: metric > best + threshold
// A reduction smaller than eps is skipped. Unlike the other schedulers, step takes the metric and
// the constructor leaves the lrs as they are.
//
//   optim::ReduceLROnPlateauScheduler sched(opt, optim::ReduceLROnPlateauScheduler::min, 0.5, 3);
//   for (...) { train(opt); sched.step(validation_loss); }
// Throws on factor outside [0, 1), negative patience, threshold, cooldown or eps, or a min_lr list
// whose length is neither 1 nor the group count.
#pragma once

#include <cstdint>
#include <vector>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

// The scheduler's progress, for checkpoints: restore it into a scheduler built with the same
// arguments over the same optimizer (whose own state holds the current lrs).
struct ReduceLROnPlateauState {
  double best = 0;
  int num_bad_epochs = 0;
  int cooldown_counter = 0;
  int64_t last_epoch = 0;
};

class ReduceLROnPlateauScheduler {
 public:
  enum SchedulerMode { min, max };
  enum ThresholdMode { rel, abs };

  // min_lr: empty (0 for every group), one value for every group, or one per group.
  ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode = min, double factor = 0.1, int patience = 10,
                             double threshold = 1e-4, ThresholdMode threshold_mode = rel, int cooldown = 0,
                             const std::vector<double>& min_lr = {}, double eps = 1e-8, bool verbose = false);
  virtual ~ReduceLROnPlateauScheduler() = default;

  void step(double metric);

  // The best metric so far, the steps since it, and the epochs counted.
  double best() const { return best_; }
  int num_bad_epochs() const { return num_bad_epochs_; }
  int64_t last_epoch() const { return last_epoch_; }
  // Each group's current lr.
  std::vector<double> get_last_lr() const;

  ReduceLROnPlateauState state_dict() const;
  // Throws on a negative count in `state`.
  void load_state_dict(const ReduceLROnPlateauState& state);

 private:
  bool is_better(double metric) const;
  void reduce_lr();

  Optimizer& optimizer_;
  SchedulerMode mode_;
  double factor_;
  int patience_;
  double threshold_;
  ThresholdMode threshold_mode_;
  int cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  double best_;
  int num_bad_epochs_ = 0;
  int cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
};

}  // namespace cohort::optim
