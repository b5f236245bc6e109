// Schedulers driven by a user's function of the epoch, PyTorch's LambdaLR and MultiplicativeLR:
//   LambdaLR:          lr = base_lr * lr_lambda(epoch)
//   MultiplicativeLR:  lr = lr * lr_lambda(epoch) for epoch > 0 (the lr at epoch 0 is left as it is)
// Either takes one function for every group or one per group.
//
//   optim::LambdaLR warmup(opt, [](int64_t epoch) { return std::min(1.0, (epoch + 1) / 10.0); });
// Throws if a list of functions does not have one per parameter group, or a function is empty.
#pragma once

#include <functional>

#include "cohort/optim/lr_scheduler.h"

namespace cohort::optim {

using LRLambda = std::function<double(int64_t epoch)>;

class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, LRLambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas);

 private:
  std::vector<double> get_lrs() override;
  std::vector<LRLambda> lr_lambdas_;
};

class MultiplicativeLR : public LRScheduler {
 public:
  MultiplicativeLR(Optimizer& optimizer, LRLambda lr_lambda);
  MultiplicativeLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas);

  // One per group (SequentialLR applies lr_lambdas[i](0) when it starts this scheduler at a milestone).
  const std::vector<LRLambda>& lr_lambdas() const { return lr_lambdas_; }

 private:
  std::vector<double> get_lrs() override;
  std::vector<LRLambda> lr_lambdas_;
};

}  // namespace cohort::optim
