// SequentialLR and ChainedScheduler: PyTorch 2.x's, driving the schedulers through their public
// state (state_dict/load_state_dict) to give them PyTorch's initial lr and to restart them.
#include "cohort/optim/sequential_lr.h"

#include <algorithm>

#include "cohort/core/error.h"
#include "cohort/optim/lambda_lr.h"

namespace cohort::optim {

namespace {

void check_schedulers(const char* name, const std::vector<std::shared_ptr<LRScheduler>>& schedulers) {
  COHORT_CHECK(!schedulers.empty(), name, ": expected at least one scheduler, got none");
  for (size_t i = 0; i < schedulers.size(); ++i)
    COHORT_CHECK(schedulers[i] != nullptr, name, ": scheduler ", i, " is null");
}

void set_lrs(Optimizer& optimizer, const std::vector<double>& lrs) {
  for (size_t i = 0; i < lrs.size(); ++i) optimizer.param_groups()[i].options().set_lr(lrs[i]);
}

std::vector<double> lrs_of(const Optimizer& optimizer) {
  std::vector<double> lrs;
  for (const auto& group : optimizer.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

// Gives s the initial lrs as its base and steps it back one epoch (PyTorch's "undo" of the step its
// constructor took).
void rebase_and_undo(LRScheduler& s, const std::vector<double>& initial_lrs) {
  LRSchedulerState st = s.state_dict();
  st.base_lrs = initial_lrs;
  st.last_epoch -= 1;
  s.load_state_dict(st);
}

// PyTorch's _initial_step: the step count restarts, then one step (to epoch 0 after an undo).
void initial_step(LRScheduler& s) {
  LRSchedulerState st = s.state_dict();
  st.step_count = 0;
  s.load_state_dict(st);
  s.step();
}

}  // namespace

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : optimizer_(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check_schedulers("SequentialLR", schedulers_);
  COHORT_CHECK(milestones_.size() + 1 == schedulers_.size(), "SequentialLR: expected ", schedulers_.size() - 1,
               " milestones (one fewer than the schedulers), got ", milestones_.size());
  const std::vector<double> initial_lrs = schedulers_[0]->base_lrs();
  set_lrs(optimizer_, initial_lrs);
  for (auto& s : schedulers_) rebase_and_undo(*s, initial_lrs);
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), 0) - milestones_.begin();
  initial_step(*schedulers_[idx]);
  last_lrs_ = schedulers_[idx]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  LRScheduler& s = *schedulers_[idx];
  const bool restart = idx > 0 && milestones_[idx - 1] == last_epoch_;
  auto* multiplicative = dynamic_cast<MultiplicativeLR*>(&s);
  if (restart) {
    // PyTorch restarts it at epoch 0 with its closed form, the lrs from its base; MultiplicativeLR,
    // which has none, multiplies the lrs it finds by lr_lambda(0) (below). The step count is kept.
    if (multiplicative == nullptr) set_lrs(optimizer_, s.base_lrs());
    LRSchedulerState st = s.state_dict();
    st.last_epoch = -1;
    st.step_count -= 1;
    s.load_state_dict(st);
  }
  s.step();
  if (restart && multiplicative != nullptr) {
    std::vector<double> lrs = lrs_of(optimizer_);
    for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = lrs[i] * multiplicative->lr_lambdas()[i](0);
    set_lrs(optimizer_, lrs);
    LRSchedulerState st = s.state_dict();
    st.last_lrs = lrs;
    s.load_state_dict(st);
  }
  last_lrs_ = s.get_last_lr();
}

SequentialLRState SequentialLR::state_dict() const {
  SequentialLRState state{last_epoch_, {}};
  for (const auto& s : schedulers_) state.schedulers.push_back(s->state_dict());
  return state;
}

void SequentialLR::load_state_dict(const SequentialLRState& state) {
  COHORT_CHECK(state.schedulers.size() == schedulers_.size(), "SequentialLR: load_state_dict: the state is for ",
               state.schedulers.size(), " schedulers, this one has ", schedulers_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(state.schedulers[i]);
  last_epoch_ = state.last_epoch;
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  last_lrs_ = schedulers_[idx]->get_last_lr();
}

ChainedScheduler::ChainedScheduler(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : optimizer_(optimizer), schedulers_(std::move(schedulers)) {
  check_schedulers("ChainedScheduler", schedulers_);
  // Replays the schedulers' constructors in order, each from PyTorch's initial lr.
  const std::vector<double> initial_lrs = schedulers_[0]->base_lrs();
  set_lrs(optimizer_, initial_lrs);
  for (auto& s : schedulers_) {
    rebase_and_undo(*s, initial_lrs);
    initial_step(*s);
  }
  last_lrs_ = lrs_of(optimizer_);
}

void ChainedScheduler::step() {
  for (auto& s : schedulers_) s->step();
  last_lrs_ = lrs_of(optimizer_);
}

std::vector<LRSchedulerState> ChainedScheduler::state_dict() const {
  std::vector<LRSchedulerState> state;
  for (const auto& s : schedulers_) state.push_back(s->state_dict());
  return state;
}

void ChainedScheduler::load_state_dict(const std::vector<LRSchedulerState>& state) {
  COHORT_CHECK(state.size() == schedulers_.size(), "ChainedScheduler: load_state_dict: the state is for ",
               state.size(), " schedulers, this one has ", schedulers_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(state[i]);
  last_lrs_ = lrs_of(optimizer_);
}

}  // namespace cohort::optim
