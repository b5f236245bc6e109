// LambdaLR and MultiplicativeLR: PyTorch's get_lr formulas, each group's lr from its own function.
#include "cohort/optim/lambda_lr.h"

#include "cohort/core/error.h"

namespace cohort::optim {

namespace {

// One function per group: a single function is shared by every group.
std::vector<LRLambda> per_group(const char* scheduler, const Optimizer& optimizer, std::vector<LRLambda> lambdas,
                                bool single) {
  const size_t groups = optimizer.param_groups().size();
  if (single) lambdas.resize(groups, lambdas.front());
  COHORT_CHECK(lambdas.size() == groups, scheduler, ": expected one lr_lambda per parameter group (", groups,
               "), got ", lambdas.size());
  for (size_t i = 0; i < lambdas.size(); ++i)
    COHORT_CHECK(lambdas[i] != nullptr, scheduler, ": lr_lambda ", i, " is empty");
  return lambdas;
}

}  // namespace

LambdaLR::LambdaLR(Optimizer& optimizer, LRLambda lr_lambda)
    : LRScheduler(optimizer), lr_lambdas_(per_group("LambdaLR", optimizer, {std::move(lr_lambda)}, true)) {
  initial_step();
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(per_group("LambdaLR", optimizer, std::move(lr_lambdas), false)) {
  initial_step();
}

std::vector<double> LambdaLR::get_lrs() {
  std::vector<double> lrs(base_lrs_.size());
  for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = base_lrs_[i] * lr_lambdas_[i](last_epoch_);
  return lrs;
}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda)
    : LRScheduler(optimizer), lr_lambdas_(per_group("MultiplicativeLR", optimizer, {std::move(lr_lambda)}, true)) {
  initial_step();
}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(per_group("MultiplicativeLR", optimizer, std::move(lr_lambdas), false)) {
  initial_step();
}

std::vector<double> MultiplicativeLR::get_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = lrs[i] * lr_lambdas_[i](last_epoch_);
  return lrs;
}

}  // namespace cohort::optim
