// The optimizer base: parameter groups, zero_grad, learning-rate helpers, and state dicts as
// tensors plus numbers keyed "state.<index>.<name>" and "param_groups.<group>.<option>".
#include "cohort/optim/optimizer.h"

#include <charconv>
#include <set>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"

namespace cohort::optim {

double OptimizerOptions::get_momentum() const {
  COHORT_CHECK(false, "get_momentum: this optimizer has no momentum; hint: check has_momentum() first");
  return 0;
}

void OptimizerOptions::set_momentum(double) {
  COHORT_CHECK(false, "set_momentum: this optimizer has no momentum; hint: check has_momentum() first");
}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  COHORT_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options yet; hint: add it to an optimizer");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  COHORT_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options yet; hint: add it to an optimizer");
  return *options_;
}

Optimizer::Optimizer(std::string name, std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {
  defaults_->validate(name_);
  for (const auto& group : param_groups) add_param_group(group);
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  OptimizerParamGroup group(param_group.params());
  group.set_options(param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  group.options().validate(name_);
  std::set<const TensorImpl*> seen;
  for (const auto& g : param_groups_)
    for (const Tensor& p : g.params()) seen.insert(p.unsafe_impl());
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    COHORT_CHECK(p.defined(), name_, ": parameter ", i, " of the new group is undefined");
    COHORT_CHECK(p.is_leaf(), name_, ": can't optimize a non-leaf tensor, got parameter ", i,
                 " of the new group; hint: pass .detach().requires_grad_() copies");
    COHORT_CHECK(seen.insert(p.unsafe_impl()).second, name_, ": parameter ", i,
                 " of the new group appears in more than one parameter group");
  }
  param_groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : param_groups_) {
    for (Tensor& p : group.params()) {
      Tensor& g = p.mutable_grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        g = Tensor();
      } else {
        NoGradGuard no_grad;
        g = g.detach();
        g.zero_();
      }
    }
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const auto& group : param_groups_) out.insert(out.end(), group.params().begin(), group.params().end());
  return out;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& group : param_groups_) n += group.params().size();
  return n;
}

double Optimizer::get_lr(size_t group) const {
  COHORT_CHECK_AS(IndexError, group < param_groups_.size(), name_, ": get_lr: group ", group,
                  " out of range, the optimizer has ", param_groups_.size(), " groups");
  return param_groups_[group].options().get_lr();
}

void Optimizer::set_lr(double lr) {
  for (auto& group : param_groups_) group.options().set_lr(lr);
}

void Optimizer::set_lr(size_t group, double lr) {
  COHORT_CHECK_AS(IndexError, group < param_groups_.size(), name_, ": set_lr: group ", group,
                  " out of range, the optimizer has ", param_groups_.size(), " groups");
  param_groups_[group].options().set_lr(lr);
}

Tensor Optimizer::call_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  EnableGradGuard grad_on;
  return closure();
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  size_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    for (const auto& [key, value] : param_groups_[g].options().to_scalars()) out.scalars[prefix + key] = value;
    out.scalars[prefix + "num_params"] = static_cast<double>(param_groups_[g].params().size());
    for (const Tensor& p : param_groups_[g].params()) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end()) {
        const std::string sp = "state." + std::to_string(index) + ".";
        for (const auto& [key, t] : it->second.tensors) out.tensors[sp + key] = t.detach().clone();
        for (const auto& [key, value] : it->second.scalars) out.scalars[sp + key] = value;
      }
      ++index;
    }
  }
  return out;
}

namespace {

// Splits "state.3.exp_avg" into (3, "exp_avg") after the given prefix; false if it does not parse.
bool split_key(const std::string& key, const std::string& prefix, size_t& index, std::string& rest) {
  if (key.rfind(prefix, 0) != 0) return false;
  const char* begin = key.data() + prefix.size();
  const char* end = key.data() + key.size();
  auto [ptr, ec] = std::from_chars(begin, end, index);
  if (ec != std::errc() || ptr == begin || ptr == end || *ptr != '.' || ptr + 1 == end) return false;
  rest.assign(ptr + 1, end);
  return true;
}

std::string shape_str(IntArrayRef sizes) { return detail::str(sizes); }

}  // namespace

void Optimizer::load_state_dict(const OptimizerState& state) {
  std::vector<std::string> problems;
  const std::vector<Tensor> params = parameters();
  // Options per group, and which groups the state mentions.
  std::vector<std::map<std::string, double>> options(param_groups_.size());
  std::set<size_t> groups_seen;
  std::map<size_t, OptimizerParamState> new_state;
  for (const auto& [key, value] : state.scalars) {
    size_t i;
    std::string rest;
    if (split_key(key, "param_groups.", i, rest)) {
      groups_seen.insert(i);
      if (i >= param_groups_.size()) continue;  // reported below
      if (rest == "num_params") {
        if (value != static_cast<double>(param_groups_[i].params().size()))
          problems.push_back("group " + std::to_string(i) + " has " + detail::str(value) +  // any double, from a file
                             " parameters in the state, " + std::to_string(param_groups_[i].params().size()) +
                             " in this optimizer");
      } else {
        options[i][rest] = value;
      }
    } else if (split_key(key, "state.", i, rest)) {
      if (i < params.size()) new_state[i].scalars[rest] = value;
      else problems.push_back("'" + key + "' names parameter " + std::to_string(i) + ", but the optimizer has " +
                              std::to_string(params.size()));
    } else {
      problems.push_back("unexpected key '" + key + "'");
    }
  }
  if (groups_seen.size() != param_groups_.size() || (!groups_seen.empty() && *groups_seen.rbegin() + 1 != groups_seen.size()))
    problems.push_back("the state has " + std::to_string(groups_seen.size()) + " parameter groups, this optimizer has " +
                       std::to_string(param_groups_.size()));
  for (size_t g = 0; g < param_groups_.size() && g < groups_seen.size(); ++g) {
    if (!state.scalars.count("param_groups." + std::to_string(g) + ".num_params"))
      problems.push_back("group " + std::to_string(g) + " has no num_params entry");
    std::map<std::string, double> expected = param_groups_[g].options().to_scalars();
    for (const auto& [key, value] : expected)
      if (!options[g].count(key)) problems.push_back("group " + std::to_string(g) + " lacks option '" + key + "'");
    for (const auto& [key, value] : options[g])
      if (!expected.count(key))
        problems.push_back("group " + std::to_string(g) + " has option '" + key + "', unknown to " + name_);
  }
  for (const auto& [key, t] : state.tensors) {
    size_t i;
    std::string rest;
    if (!split_key(key, "state.", i, rest)) {
      problems.push_back("unexpected tensor key '" + key + "'");
    } else if (i >= params.size()) {
      problems.push_back("'" + key + "' names parameter " + std::to_string(i) + ", but the optimizer has " +
                         std::to_string(params.size()));
    } else if (!t.defined() || t.sizes() != params[i].sizes()) {
      problems.push_back("'" + key + "' has shape " + (t.defined() ? shape_str(t.sizes()) : "<undefined>") +
                         ", parameter " + std::to_string(i) + " has shape " + shape_str(params[i].sizes()));
    } else {
      new_state[i].tensors[rest] = t;
    }
  }
  if (!problems.empty()) {
    std::string message = name_ + ": load_state_dict: the state does not fit this optimizer:";
    for (const auto& p : problems) message += "\n  " + escape_text(p);  // keys from a file, maybe crafted
    throw Error(message + "\nhint: load a state saved by the same optimizer type over the same parameters");
  }
  // Everything checked: apply.
  for (size_t g = 0; g < param_groups_.size(); ++g) param_groups_[g].options().from_scalars(options[g]);
  state_.clear();
  NoGradGuard no_grad;
  for (auto& [i, s] : new_state) {
    OptimizerParamState& dst = state_[params[i].unsafe_impl()];
    dst.scalars = std::move(s.scalars);
    for (auto& [key, t] : s.tensors) dst.tensors[key] = t.detach().to(params[i].options(), false, /*copy=*/true);
  }
}

}  // namespace cohort::optim
