// LBFGS: PyTorch 2.x's LBFGS.step and its strong-Wolfe line search, operation for operation, over
// the parameters as one flat vector (gradients gathered by cat, updates scattered back by views).
#include "cohort/optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/shape.h"

namespace cohort::optim {

std::map<std::string, double> LBFGSOptions::to_scalars() const {
  return {{"lr", lr_},
          {"max_iter", static_cast<double>(max_iter_)},
          {"max_eval", static_cast<double>(max_eval_.value_or(max_iter_ * 5 / 4))},
          {"tolerance_grad", tolerance_grad_},
          {"tolerance_change", tolerance_change_},
          {"history_size", static_cast<double>(history_size_)},
          {"line_search_fn", line_search_fn_ ? 1.0 : 0.0}};
}

void LBFGSOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  max_iter_ = static_cast<int64_t>(v.at("max_iter"));
  max_eval_ = static_cast<int64_t>(v.at("max_eval"));
  tolerance_grad_ = v.at("tolerance_grad");
  tolerance_change_ = v.at("tolerance_change");
  history_size_ = static_cast<int64_t>(v.at("history_size"));
  line_search_fn_ = v.at("line_search_fn") != 0 ? std::optional<std::string>("strong_wolfe") : std::nullopt;
}

void LBFGSOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(max_iter_ >= 1, optimizer, ": max_iter must be at least 1, got ", max_iter_);
  COHORT_CHECK(!max_eval_ || *max_eval_ >= 1, optimizer, ": max_eval must be at least 1, got ", max_eval_.value_or(0));
  COHORT_CHECK(tolerance_grad_ >= 0, optimizer, ": tolerance_grad must be non-negative, got ", tolerance_grad_);
  COHORT_CHECK(tolerance_change_ >= 0, optimizer, ": tolerance_change must be non-negative, got ", tolerance_change_);
  COHORT_CHECK(history_size_ >= 1, optimizer, ": history_size must be at least 1, got ", history_size_);
  COHORT_CHECK(!line_search_fn_ || *line_search_fn_ == "strong_wolfe", optimizer,
               ": line_search_fn must be \"strong_wolfe\" or unset, got \"", line_search_fn_.value_or(""), "\"");
}

namespace {

double dot_of(const Tensor& a, const Tensor& b) { return dot(a, b).item<double>(); }
double abs_max(const Tensor& a) { return a.abs().max().item<double>(); }

// The parameters seen as one flat vector.
struct Flat {
  const std::vector<Tensor>& params;

  Tensor grad() const {
    std::vector<Tensor> parts;
    for (const Tensor& p : params)
      parts.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.options()));
    return cat(parts);
  }
  // params += step * update
  void add(double step, const Tensor& update) const {
    int64_t offset = 0;
    for (const Tensor& p : params) {
      p.add_(update.slice(0, offset, offset + p.numel()).view(p.sizes()), step);
      offset += p.numel();
    }
  }
  std::vector<Tensor> clone() const {
    std::vector<Tensor> out;
    for (const Tensor& p : params) out.push_back(p.clone());
    return out;
  }
  void set(const std::vector<Tensor>& values) const {
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
  }
};

// The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, within bounds
// (by default the interval); the bounds' midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  auto [lo, hi] = bounds ? *bounds : (x1 <= x2 ? std::pair{x1, x2} : std::pair{x2, x1});
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2.0;
  const double d2 = std::sqrt(d2_square);
  const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                  : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(min_pos, lo), hi);
}

struct Evaluation {
  double f;
  Tensor g;
  double gtd;
};

struct LineSearchResult {
  double f;
  Tensor g;
  double t;
  int64_t evals;
};

// Finds t along d meeting the strong Wolfe conditions: first widens until a bracket holds a point
// of sufficient decrease, then zooms into it by cubic interpolation, keeping away from its ends.
// evaluate(t) returns the loss, flat gradient and directional derivative at x + t d.
LineSearchResult strong_wolfe(const std::function<Evaluation(double)>& evaluate, double t, const Tensor& d, double f,
                              const Tensor& g, double gtd, double tolerance_change, int64_t max_ls) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  const double d_norm = abs_max(d);
  Evaluation now = evaluate(t);
  int64_t evals = 1;
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g.clone();
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (now.f > f + c1 * t * gtd || (ls_iter > 1 && now.f >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, now.f}, bracket_g = {g_prev, now.g.clone()};
      bracket_gtd = {gtd_prev, now.gtd};
      break;
    }
    if (std::abs(now.gtd) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {now.f}, bracket_g = {now.g};
      done = true;
      break;
    }
    if (now.gtd >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, now.f}, bracket_g = {g_prev, now.g.clone()};
      bracket_gtd = {gtd_prev, now.gtd};
      break;
    }
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10;
    const double previous = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, now.f, now.gtd, std::pair{min_step, max_step});
    t_prev = previous, f_prev = now.f, g_prev = now.g.clone(), gtd_prev = now.gtd;
    now = evaluate(t);
    ++evals, ++ls_iter;
  }
  if (ls_iter == max_ls) {  // no bracket found: between the start and the last point
    bracket = {0, t}, bracket_f = {f, now.f}, bracket_g = {g, now.g}, bracket_gtd = {gtd, now.gtd};
  }
  bool insufficient_progress = false;
  size_t low = bracket_f[0] <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    const double b_max = std::max(bracket[0], bracket[1]), b_min = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (b_max - b_min);
    if (std::min(b_max - t, t - b_min) < eps) {  // too close to an end of the bracket
      if (insufficient_progress || t >= b_max || t <= b_min) {
        t = std::abs(t - b_max) < std::abs(t - b_min) ? b_max - eps : b_min + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }
    now = evaluate(t);
    ++evals, ++ls_iter;
    if (now.f > f + c1 * t * gtd || now.f >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = now.f, bracket_g[high] = now.g.clone(), bracket_gtd[high] = now.gtd;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1, high = 1 - low;
    } else {
      if (std::abs(now.gtd) <= -c2 * gtd) {
        done = true;
      } else if (now.gtd * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low], bracket_g[high] = bracket_g[low];
        bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = now.f, bracket_g[low] = now.g.clone(), bracket_gtd[low] = now.gtd;
    }
  }
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

}  // namespace

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults)
    : Optimizer("LBFGS", std::move(param_groups), std::make_unique<LBFGSOptions>(defaults)) {
  COHORT_CHECK(this->param_groups().size() == 1, "LBFGS: expected exactly one parameter group, got ",
               this->param_groups().size());
}

Tensor LBFGS::step(LossClosure closure) {
  COHORT_CHECK(closure != nullptr, "LBFGS: step needs a closure that recomputes the loss (and its grads), got none");
  COHORT_CHECK(param_groups().size() == 1, "LBFGS: expected exactly one parameter group, got ", param_groups().size());
  const auto& o = static_cast<const LBFGSOptions&>(param_groups()[0].options());
  const Flat flat{param_groups()[0].params()};
  if (flat.params.empty()) return call_closure(closure);
  const int64_t max_eval = o.max_eval().value_or(o.max_iter() * 5 / 4);
  const int64_t history_size = o.history_size();
  const double lr = o.lr(), tolerance_change = o.tolerance_change();

  OptimizerParamState& state = state_of(flat.params[0]);
  double& func_evals = state.scalars["func_evals"];
  double& state_n_iter = state.scalars["n_iter"];
  Tensor orig_loss = call_closure(closure);
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  func_evals += 1;
  NoGradGuard no_grad;
  Tensor flat_grad = flat.grad();
  if (abs_max(flat_grad) <= o.tolerance_grad()) return orig_loss;

  // The history, as lists, from the state.
  std::vector<Tensor> old_dirs, old_stps;
  std::vector<double> ro;
  for (size_t i = 0; state.tensors.count("old_dirs." + std::to_string(i)); ++i) {
    old_dirs.push_back(state.tensors["old_dirs." + std::to_string(i)]);
    old_stps.push_back(state.tensors["old_stps." + std::to_string(i)]);
    ro.push_back(state.scalars["ro." + std::to_string(i)]);
  }
  Tensor d = state.tensors.count("d") ? state.tensors["d"] : Tensor();
  Tensor prev_flat_grad = state.tensors.count("prev_flat_grad") ? state.tensors["prev_flat_grad"] : Tensor();
  double t = state.scalars.count("t") ? state.scalars["t"] : 0;
  double H_diag = state.scalars.count("H_diag") ? state.scalars["H_diag"] : 1;
  double prev_loss = state.scalars.count("prev_loss") ? state.scalars["prev_loss"] : 0;

  for (int64_t n_iter = 1; n_iter <= o.max_iter(); ++n_iter) {
    state_n_iter += 1;
    if (state_n_iter == 1) {
      d = flat_grad.neg();
      old_dirs.clear(), old_stps.clear(), ro.clear();
      H_diag = 1;
    } else {
      // Update the history with the last step s and gradient change y, if curvature is positive.
      Tensor y = flat_grad - prev_flat_grad;
      Tensor s = d * t;
      const double ys = dot_of(y, s);
      if (ys > 1e-10) {
        if (static_cast<int64_t>(old_dirs.size()) == history_size) {
          old_dirs.erase(old_dirs.begin()), old_stps.erase(old_stps.begin()), ro.erase(ro.begin());
        }
        old_dirs.push_back(y), old_stps.push_back(s), ro.push_back(1.0 / ys);
        H_diag = ys / dot_of(y, y);
      }
      // The two-loop recursion: d = -H g.
      const size_t num_old = old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = dot_of(old_stps[i], q) * ro[i];
        q.add_(old_dirs[i], -al[i]);
      }
      d = q * H_diag;
      for (size_t i = 0; i < num_old; ++i) {
        const double be_i = dot_of(old_dirs[i], d) * ro[i];
        d.add_(old_stps[i], al[i] - be_i);
      }
    }
    if (prev_flat_grad.defined()) prev_flat_grad.copy_(flat_grad);
    else prev_flat_grad = flat_grad.clone();
    prev_loss = loss;
    // The first step ever is scaled down by the gradient's size: the history has no curvature yet.
    t = state_n_iter == 1 ? std::min(1.0, 1.0 / flat_grad.abs().sum().item<double>()) * lr : lr;
    const double gtd = dot_of(flat_grad, d);
    if (gtd > -tolerance_change) break;  // not a descent direction

    int64_t ls_func_evals = 0;
    bool opt_cond = false;
    if (o.line_search_fn()) {
      const std::vector<Tensor> x_init = flat.clone();
      auto evaluate = [&](double step) {
        flat.add(step, d);
        double f = call_closure(closure).item<double>();
        Tensor g = flat.grad();
        flat.set(x_init);
        return Evaluation{f, g, dot_of(g, d)};
      };
      LineSearchResult r = strong_wolfe(evaluate, t, d, loss, flat_grad, gtd, tolerance_change, max_eval - current_evals);
      loss = r.f, flat_grad = r.g, t = r.t, ls_func_evals = r.evals;
      flat.add(t, d);
      opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
    } else {
      flat.add(t, d);
      if (n_iter != o.max_iter()) {
        loss = call_closure(closure).item<double>();
        flat_grad = flat.grad();
        opt_cond = abs_max(flat_grad) <= o.tolerance_grad();
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    func_evals += static_cast<double>(ls_func_evals);
    if (n_iter == o.max_iter() || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d * t) <= tolerance_change) break;  // the step is negligible
    if (std::abs(loss - prev_loss) < tolerance_change) break;  // so is the change of loss
  }

  for (size_t i = 0; state.tensors.erase("old_dirs." + std::to_string(i)); ++i) {
    state.tensors.erase("old_stps." + std::to_string(i));
    state.scalars.erase("ro." + std::to_string(i));
  }
  for (size_t i = 0; i < old_dirs.size(); ++i) {
    state.tensors["old_dirs." + std::to_string(i)] = old_dirs[i];
    state.tensors["old_stps." + std::to_string(i)] = old_stps[i];
    state.scalars["ro." + std::to_string(i)] = ro[i];
  }
  state.tensors["d"] = d;
  state.tensors["prev_flat_grad"] = prev_flat_grad;
  state.scalars["t"] = t, state.scalars["H_diag"] = H_diag, state.scalars["prev_loss"] = prev_loss;
  return orig_loss;
}

}  // namespace cohort::optim
