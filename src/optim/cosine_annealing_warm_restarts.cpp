// CosineAnnealingWarmRestarts: PyTorch's step without an epoch argument, T_cur counted in integers.
#include "cohort/optim/cosine_annealing_warm_restarts.h"

#include <cmath>
#include <numbers>

#include "cohort/core/error.h"

namespace cohort::optim {

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult,
                                                         double eta_min)
    : LRScheduler(optimizer), T_0_(T_0), T_mult_(T_mult), eta_min_(eta_min), T_i_(T_0) {
  COHORT_CHECK(T_0 > 0, "CosineAnnealingWarmRestarts: T_0 must be a positive integer, got ", T_0);
  COHORT_CHECK(T_mult >= 1, "CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got ", T_mult);
  initial_step();
}

std::vector<double> CosineAnnealingWarmRestarts::get_lrs() {
  // Walking the periods from epoch 0 gives the integers PyTorch's step-by-step count reaches, and
  // also the right values after load_state_dict jumps to a later epoch.
  T_i_ = T_0_;
  T_cur_ = last_epoch_;
  while (T_cur_ >= T_i_) {
    T_cur_ -= T_i_;
    T_i_ *= T_mult_;
  }
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs(base_lrs_.size());
  for (size_t i = 0; i < lrs.size(); ++i)
    lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) *
                            (1 + std::cos(pi * static_cast<double>(T_cur_) / static_cast<double>(T_i_))) / 2;
  return lrs;
}

}  // namespace cohort::optim
