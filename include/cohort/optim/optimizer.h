// Optimizer: the base of SGD, Adam, AdamW, RMSprop and Adagrad, spelled as libtorch's.
//
//   optim::SGD opt(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
//   opt.zero_grad();
//   loss.backward();
//   opt.step();
//
// Parameters live in groups; each group holds its own copy of the options (lr, momentum, ...), so
// groups can be trained at different rates. Per-parameter state (momentum buffers, moment
// estimates, step counts) is created on a parameter's first update. A step updates the parameter
// tensors in place under NoGradGuard (modules holding them see the new values) and skips parameters
// whose grad is undefined.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::optim {

// The hyperparameters of one optimizer type. Each subclass (SGDOptions, AdamOptions, ...) has
// chained setters spelled as libtorch's; these virtuals are what the base class and the schedulers
// need without knowing the type.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // The momentum that OneCycleLR cycles: SGD's and RMSprop's momentum, Adam's beta1. Optimizers
  // without one return false from has_momentum() and throw from the other two.
  virtual bool has_momentum() const { return false; }
  virtual double get_momentum() const;
  virtual void set_momentum(double momentum);
  // Every hyperparameter as a number under PyTorch's name ("lr", "momentum", "betas.0"; bools 0 or
  // 1), for state dicts. from_scalars receives exactly the keys to_scalars returns.
  virtual std::map<std::string, double> to_scalars() const = 0;
  virtual void from_scalars(const std::map<std::string, double>& values) = 0;
  // Throws a cohort::Error naming `optimizer` when a value is out of range (a negative lr, ...).
  virtual void validate(const std::string& /*optimizer*/) const {}
};

// A list of parameters and, once added to an optimizer, its own options. A group built without
// options takes a copy of the optimizer's defaults when added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  // Throws if the group has no options yet.
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// The state of one parameter: named tensors ("exp_avg", "momentum_buffer") and numbers ("step").
struct OptimizerParamState {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
};

// An optimizer's whole state as tensors plus numbers, ready to be written as tensors + JSON.
// Parameters are numbered across groups in order (group 0's first parameter is 0):
//   tensors: "state.3.exp_avg", ...
//   scalars: "state.3.step", "param_groups.0.lr", "param_groups.0.num_params", ...
struct OptimizerState {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // Adds a group (taking a copy of the defaults if it has no options). Throws if a parameter is
  // already in a group, is not a leaf, or the group's options are invalid.
  void add_param_group(const OptimizerParamGroup& param_group);
  // Sets every parameter's grad to undefined (set_to_none) or to zeros.
  void zero_grad(bool set_to_none = true);
  // One update of every parameter that has a grad. With a closure, calls it first (grad mode on)
  // and returns its result, the loss; otherwise returns an undefined tensor.
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // All parameters, across groups in order; size() counts them.
  std::vector<Tensor> parameters() const;
  size_t size() const;

  // The lr of one group; set_lr(x) sets every group's, set_lr(group, x) one group's.
  double get_lr(size_t group = 0) const;
  void set_lr(double lr);
  void set_lr(size_t group, double lr);

  // Per-parameter state, by the parameter's TensorImpl.
  std::unordered_map<const TensorImpl*, OptimizerParamState>& state() { return state_; }
  const std::unordered_map<const TensorImpl*, OptimizerParamState>& state() const { return state_; }

  // Copies (never aliases) the options of every group and the state of every parameter.
  OptimizerState state_dict() const;
  // Restores options and state saved by an optimizer of the same type over parameters of the same
  // shapes. Checks everything first (group count, parameters per group, option names, state shapes)
  // and throws a cohort::Error listing the problems, leaving this optimizer unchanged.
  void load_state_dict(const OptimizerState& state);

  // "SGD", "Adam", ... for messages.
  const std::string& name() const { return name_; }

 protected:
  Optimizer(std::string name, std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);
  // The state of p, created empty on first use.
  OptimizerParamState& state_of(const Tensor& p) { return state_[p.unsafe_impl()]; }
  // Calls the closure (if any) with grad mode on.
  static Tensor call_closure(const LossClosure& closure);

 private:
  std::string name_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<const TensorImpl*, OptimizerParamState> state_;
};

}  // namespace cohort::optim
