// optim::AveragedModel (averaged_model.h).
#include "cohort/optim/averaged_model.h"

#include <cmath>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"

namespace cohort::optim {

namespace {

// The averaged copy's tensors paired with the module's by position, after checking that both hold
// the same names and shapes (so a mismatch changes nothing).
struct Pairs {
  std::vector<Tensor> averaged, current;
};

void pair_up(const nn::StateDict& mine, const nn::StateDict& theirs, const char* what, Pairs& out) {
  COHORT_CHECK(mine.size() == theirs.size(), "AveragedModel::update_parameters: the averaged model has ", mine.size(),
               " ", what, ", the model given ", theirs.size(), "; hint: update with the model it was built from");
  auto a = mine.begin();
  for (const auto& item : theirs) {
    COHORT_CHECK(a->key() == item.key() && a->value().sizes() == item.value().sizes(),
                 "AveragedModel::update_parameters: the model's ", what, " '", item.key(), "' ",
                 item.value().sizes(), " does not match the averaged model's '", a->key(), "' ", a->value().sizes(),
                 "; hint: update with the model it was built from");
    out.averaged.push_back(a->value());
    out.current.push_back(item.value());
    ++a;
  }
}

}  // namespace

AveragedModel::AveragedModel(const nn::Module& model, AveragedModelOptions options)
    : module_(model.clone()), options_(std::move(options)) {
  if (const auto& decay = options_.ema_decay())
    COHORT_CHECK(std::isfinite(*decay) && *decay >= 0 && *decay < 1,
                 "AveragedModel: ema_decay must be in [0, 1) (the weight of the old average), got ", *decay);
  for (const Tensor& p : module_->parameters()) p.requires_grad_(false);
}

void AveragedModel::set_n_averaged(int64_t n) {
  COHORT_CHECK(n >= 0, "AveragedModel::set_n_averaged: expected a count of updates (at least 0), got ", n);
  n_averaged_ = n;
}

void AveragedModel::update_parameters(const nn::Module& model) {
  Pairs averaged, copied;
  pair_up(module_->named_parameters(), model.named_parameters(), "parameters", averaged);
  Pairs buffers;
  pair_up(module_->named_buffers(), model.named_buffers(), "buffers", buffers);
  for (size_t i = 0; i < buffers.averaged.size(); ++i) {
    const bool average = options_.use_buffers() && is_floating_point(buffers.averaged[i].dtype());
    Pairs& to = average ? averaged : copied;
    to.averaged.push_back(buffers.averaged[i]);
    to.current.push_back(buffers.current[i]);
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < copied.averaged.size(); ++i) copied.averaged[i].copy_(copied.current[i]);
  for (size_t i = 0; i < averaged.averaged.size(); ++i) {
    const Tensor& a = averaged.averaged[i];
    const Tensor w = averaged.current[i].to(a.device());
    if (n_averaged_ == 0) {
      a.copy_(w);
    } else if (const auto& decay = options_.ema_decay()) {
      a.add_(w - a, 1 - *decay);
    } else {
      a.add_((w - a) / static_cast<double>(n_averaged_ + 1));
    }
  }
  ++n_averaged_;
}

}  // namespace cohort::optim
