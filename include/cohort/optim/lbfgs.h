// L-BFGS, libtorch's torch::optim::LBFGS with PyTorch 2.x's algorithm: each step(closure) runs up
// to max_iter quasi-Newton iterations over all parameters as one flat vector, with the inverse
// Hessian approximated from the last history_size (step, gradient change) pairs. The step length is
// lr (the first iteration ever: lr * min(1, 1 / sum|g|)), or with line_search_fn("strong_wolfe")
// the length a bracketing, cubic-interpolating line search finds that meets the strong Wolfe
// conditions (c1 = 1e-4, c2 = 0.9). The closure is required: it zeroes the grads, computes the
// loss, calls backward and returns the loss; it runs max_eval times at most per step.
//
//   optim::LBFGS opt(net->parameters(), optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
//   opt.step([&] { opt.zero_grad(); auto loss = criterion(net->forward(x), y); loss.backward(); return loss; });
//
// Only one parameter group (as in PyTorch). The state (the direction "d", "prev_flat_grad", the
// history "old_dirs.<i>", "old_stps.<i>", "ro.<i>", and the numbers "t", "H_diag", "prev_loss",
// "n_iter", "func_evals") is kept with the first parameter; its tensors are flat over all
// parameters, so load_state_dict refuses it (a shape mismatch).
// Throws on a negative lr or tolerance, max_iter, max_eval or history_size below 1, a
// line_search_fn other than "strong_wolfe", more than one group, and step() without a closure.
#pragma once

#include <optional>
#include <string>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class LBFGSOptions : public OptimizerOptions {
 public:
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT

  LBFGSOptions& lr(double v) { lr_ = v; return *this; }
  LBFGSOptions& max_iter(int64_t v) { max_iter_ = v; return *this; }
  // Unset: max_iter * 5 / 4.
  LBFGSOptions& max_eval(std::optional<int64_t> v) { max_eval_ = v; return *this; }
  LBFGSOptions& tolerance_grad(double v) { tolerance_grad_ = v; return *this; }
  LBFGSOptions& tolerance_change(double v) { tolerance_change_ = v; return *this; }
  LBFGSOptions& history_size(int64_t v) { history_size_ = v; return *this; }
  // Unset: fixed steps of lr; "strong_wolfe": the line search.
  LBFGSOptions& line_search_fn(std::optional<std::string> v) { line_search_fn_ = std::move(v); return *this; }
  double lr() const { return lr_; }
  int64_t max_iter() const { return max_iter_; }
  std::optional<int64_t> max_eval() const { return max_eval_; }
  double tolerance_grad() const { return tolerance_grad_; }
  double tolerance_change() const { return tolerance_change_; }
  int64_t history_size() const { return history_size_; }
  const std::optional<std::string>& line_search_fn() const { return line_search_fn_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<LBFGSOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // max_eval as its resolved number; line_search_fn as 1 ("strong_wolfe") or 0 (none).
  std::map<std::string, double> to_scalars() const override;
  void from_scalars(const std::map<std::string, double>& values) override;
  void validate(const std::string& optimizer) const override;

 private:
  double lr_;
  int64_t max_iter_ = 20;
  std::optional<int64_t> max_eval_;
  double tolerance_grad_ = 1e-7;
  double tolerance_change_ = 1e-9;
  int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

class LBFGS : public Optimizer {
 public:
  LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {});
  LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults = {});
  // Returns the loss of the closure's first call (before this step's updates).
  Tensor step(LossClosure closure) override;
};

}  // namespace cohort::optim
