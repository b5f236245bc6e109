// SGDR (Loshchilov & Hutter): cosine annealing from base_lr to eta_min over T_i epochs, then a restart
// at base_lr; the first period is T_0 epochs and each next one T_mult times longer.
//   lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2
// T_cur (epochs since the last restart) and T_i follow from the epoch, so a restored state needs nothing more.
//
//   optim::CosineAnnealingWarmRestarts sched(opt, /*T_0=*/10, /*T_mult=*/2, /*eta_min=*/1e-5);
// Throws if T_0 <= 0 or T_mult < 1.
#pragma once

#include "cohort/optim/lr_scheduler.h"

namespace cohort::optim {

class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0);

  // Epochs since the last restart, and the length of the current period.
  int64_t T_cur() const { return T_cur_; }
  int64_t T_i() const { return T_i_; }

 private:
  std::vector<double> get_lrs() override;
  int64_t T_0_, T_mult_;
  double eta_min_;
  int64_t T_cur_ = 0, T_i_;
};

}  // namespace cohort::optim
