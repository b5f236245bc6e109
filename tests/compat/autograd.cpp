// The libtorch-port promise for autograd: backward, gradient accumulation, grad_fn names, grad modes,
// hooks and autograd::grad, written against libtorch's C++ API (compat.h has the rules).
#include "compat.h"

using namespace compat;
using torch::indexing::Slice;

namespace {

// ---------------------------------------------------------------------------------------------------
void autograd_basics() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto x = torch::tensor({1.0, 2.0, 3.0}, opts);
  check(x.is_leaf() && x.grad_fn() == nullptr && !x.grad().defined(), "a fresh leaf");
  auto y = (x * x).sum();
  check(y.requires_grad() && !y.is_leaf() && y.grad_fn() != nullptr, "y = (x * x).sum() has a grad_fn");
  y.backward();
  check(close(x.grad(), torch::tensor({2.0, 4.0, 6.0})), "d sum(x*x)/dx = 2x");
  (x * 3).sum().backward();
  check(close(x.grad(), torch::tensor({5.0, 7.0, 9.0})), "gradients accumulate");
  x.grad().zero_();
  check(x.grad().sum().item<double>() == 0.0, "x.grad().zero_()");
  x.mutable_grad() = torch::Tensor();
  check(!x.grad().defined(), "mutable_grad() = Tensor() resets");

  // backward(gradient) on a non-scalar output.
  auto a = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, opts);
  auto out = a * a + 1;
  out.backward(torch::tensor({{1.0, 0.0}, {0.5, 2.0}}, torch::kFloat64));
  check(close(a.grad(), torch::tensor({{2.0, 0.0}, {3.0, 16.0}})), "backward(gradient)");

  // retain_graph: a second backward through the same graph.
  auto r = torch::tensor({2.0}, opts);
  auto ry = r * r * r;
  ry.backward({}, /*retain_graph=*/true);
  ry.backward();
  check(near(r.grad().item<double>(), 24.0), "backward(retain_graph=true) twice");

  // Broadcast and reduction gradients.
  auto wv = torch::ones({2, 3}, opts);
  auto bias = torch::zeros({3}, opts);
  (wv * 2 + bias).sum().backward();
  check(close(bias.grad(), torch::full({3}, 2.0)) && close(wv.grad(), torch::full({2, 3}, 2.0)),
        "gradient through broadcasting");
  auto mv = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, opts);
  mv.mean().backward();
  check(close(mv.grad(), torch::full({2, 2}, 0.25)), "mean() gradient");

  // mm gradient: d sum(A B)/dA = 1 B^T, d/dB = A^T 1.
  auto A = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, opts);
  auto B = torch::tensor({{5.0, 6.0}, {7.0, 8.0}}, opts);
  A.mm(B).sum().backward();
  check(close(A.grad(), torch::tensor({{11.0, 15.0}, {11.0, 15.0}})), "mm gradient wrt A");
  check(close(B.grad(), torch::tensor({{4.0, 4.0}, {6.0, 6.0}})), "mm gradient wrt B");

  // Gradients through views.
  auto v = torch::arange(6, opts).view({2, 3});
  auto v_leaf = v.detach().requires_grad_(true);
  (v_leaf.t().narrow(0, 1, 2) * torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, torch::kFloat64)).sum().backward();
  check(close(v_leaf.grad(), torch::tensor({{0.0, 1.0, 3.0}, {0.0, 2.0, 4.0}})), "gradient through t().narrow()");
  auto s = torch::zeros({2, 3}, opts);
  (s.index({Slice(), 1}) * 5).sum().backward();
  check(close(s.grad(), torch::tensor({{0.0, 5.0, 0.0}, {0.0, 5.0, 0.0}})), "gradient through index({Slice(), 1})");
  auto c1 = torch::tensor({1.0, 2.0}, opts);
  auto c2 = torch::tensor({3.0}, opts);
  (torch::cat({c1, c2}) * torch::tensor({1.0, 2.0, 3.0}, torch::kFloat64)).sum().backward();
  check(close(c1.grad(), torch::tensor({1.0, 2.0})) && close(c2.grad(), torch::tensor({3.0})), "cat gradient");
  auto st = torch::tensor({1.0, 2.0}, opts);
  torch::stack({st, st * 2}).pow(2).sum().backward();  // sum(st^2 + 4 st^2) -> 10 st
  check(close(st.grad(), torch::tensor({10.0, 20.0})), "stack gradient");
  auto pm = torch::arange(6, opts).view({1, 2, 3}).detach().requires_grad_(true);
  (pm.permute({2, 0, 1}).reshape({3, 2}) * torch::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, torch::kFloat64))
      .sum()
      .backward();
  check(close(pm.grad(), torch::tensor({{{1.0, 3.0, 5.0}, {2.0, 4.0, 6.0}}})), "permute/reshape gradient");

  // Reduction gradients.
  auto mx = torch::tensor({{1.0, 5.0, 3.0}, {4.0, 2.0, 6.0}}, opts);
  std::get<0>(mx.max(1)).sum().backward();
  check(close(mx.grad(), torch::tensor({{0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}})), "max(1) gradient");
  auto vr = torch::tensor({1.0, 2.0, 3.0, 4.0}, opts);
  vr.var().backward();
  check(close(vr.grad(), torch::tensor({-1.0, -1.0 / 3, 1.0 / 3, 1.0})), "var() gradient");
  auto nr = torch::tensor({3.0, 4.0}, opts);
  nr.norm().backward();
  check(close(nr.grad(), torch::tensor({0.6, 0.8})), "norm() gradient");

  // softmax / log_softmax: d(-log_softmax(z)[t])/dz = softmax(z) - onehot(t).
  auto z = torch::tensor({{0.0, std::log(2.0), std::log(5.0)}}, opts);
  (-torch::log_softmax(z, 1).select(1, 2)).sum().backward();
  check(close(z.grad(), torch::tensor({{0.125, 0.25, -0.375}})), "log_softmax gradient");
  auto z2 = torch::tensor({{0.0, std::log(2.0), std::log(5.0)}}, opts);
  torch::softmax(z2, 1).select(1, 0).sum().backward();  // ds0/dz = s0 (onehot(0) - s)
  check(close(z2.grad(), torch::tensor({{0.125 * 0.875, -0.125 * 0.25, -0.125 * 0.625}})), "softmax gradient");

  // einsum gradient agrees with the same contraction written with bmm.
  auto ea = (torch::arange(24, torch::kFloat64).view({2, 3, 4}) / 10).requires_grad_(true);
  auto ew = (torch::arange(60, torch::kFloat64).view({3, 4, 5}) / 7).requires_grad_(true);
  auto up = torch::arange(30, torch::kFloat64).view({2, 3, 5});
  (torch::einsum("bgi,gio->bgo", {ea, ew}) * up).sum().backward();
  auto ea2 = ea.detach().clone().requires_grad_(true);
  auto ew2 = ew.detach().clone().requires_grad_(true);
  (ea2.transpose(0, 1).bmm(ew2).transpose(0, 1) * up).sum().backward();
  check(close(ea.grad(), ea2.grad()) && close(ew.grad(), ew2.grad()), "einsum gradient == bmm gradient");

  // An in-place op on a non-leaf inside the graph.
  auto ip = torch::tensor({1.0, 2.0}, opts);
  auto ipy = ip * 1;
  ipy.mul_(3);
  ipy.add_(1);
  ipy.sum().backward();
  check(close(ip.grad(), torch::tensor({3.0, 3.0})), "gradient through in-place mul_/add_ on a non-leaf");

  // requires_grad_ on an existing tensor.
  auto q = torch::ones({2}, torch::kFloat64);
  check(!q.requires_grad(), "ones() does not require grad");
  q.requires_grad_();
  (q * 4).sum().backward();
  check(close(q.grad(), torch::full({2}, 4.0)), "requires_grad_() then backward");

  // retain_grad on a non-leaf; autograd::backward; Scalar from item().
  auto rl = torch::tensor({1.0, 2.0}, opts);
  auto mid = rl * 2;
  mid.retain_grad();
  torch::autograd::backward({(mid * mid).sum()});
  check(close(mid.grad(), torch::tensor({4.0, 8.0})) && close(rl.grad(), torch::tensor({8.0, 16.0})),
        "retain_grad() and autograd::backward");
  auto loss = (rl * rl).sum();
  check(loss.item().toDouble() == 5.0 && loss.item().toFloat() == 5.0f, "item().toDouble(), item().toFloat()");
  check(torch::tensor({7}).item().toLong() == 7, "item().toLong()");
}

void autograd_names() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto a = torch::ones({2, 3}, opts);
  auto b = torch::ones({3, 2}, opts);
  check((a * a).grad_fn()->name() == "MulBackward0", "grad_fn name of a * b");
  check((a + a).grad_fn()->name() == "AddBackward0", "grad_fn name of a + b");
  check((a - 1).grad_fn()->name() == "SubBackward1", "grad_fn name of a - scalar");
  check((a / a).grad_fn()->name() == "DivBackward0", "grad_fn name of a / b");
  check(a.sum().grad_fn()->name() == "SumBackward0", "grad_fn name of sum()");
  check(a.sum(1).grad_fn()->name() == "SumBackward1", "grad_fn name of sum(dim)");
  check(a.mean().grad_fn()->name() == "MeanBackward0", "grad_fn name of mean()");
  check(a.mm(b).grad_fn()->name() == "MmBackward0", "grad_fn name of mm");
  check(a.view({6}).grad_fn()->name() == "ViewBackward0", "grad_fn name of view");
  check(a.t().grad_fn()->name() == "TBackward0", "grad_fn name of t()");
  check(a.transpose(0, 1).grad_fn()->name() == "TransposeBackward0", "grad_fn name of transpose");
  check(a.permute({1, 0}).grad_fn()->name() == "PermuteBackward0", "grad_fn name of permute");
  check(a.select(0, 1).grad_fn()->name() == "SelectBackward0", "grad_fn name of select");
  check(a.unsqueeze(0).grad_fn()->name() == "UnsqueezeBackward0", "grad_fn name of unsqueeze");
  check(torch::cat({a, a}).grad_fn()->name() == "CatBackward0", "grad_fn name of cat");
  check(torch::stack({a, a}).grad_fn()->name() == "StackBackward0", "grad_fn name of stack");
  check(a.exp().grad_fn()->name() == "ExpBackward0", "grad_fn name of exp");
  check(a.pow(2).grad_fn()->name() == "PowBackward0", "grad_fn name of pow(scalar)");
  check(torch::relu(a).grad_fn()->name() == "ReluBackward0", "grad_fn name of relu");
  check(a.softmax(1).grad_fn()->name() == "SoftmaxBackward0", "grad_fn name of softmax");
  check(a.log_softmax(1).grad_fn()->name() == "LogSoftmaxBackward0", "grad_fn name of log_softmax");
  check(std::get<0>(a.max(1)).grad_fn()->name() == "MaxBackward0", "grad_fn name of max(dim)");
}

void autograd_modes() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto x = torch::tensor({1.0, 2.0}, opts);
  {
    torch::NoGradGuard no_grad;
    auto z = x * 2;
    check(!z.requires_grad() && z.grad_fn() == nullptr, "NoGradGuard: no graph recorded");
    x.add_(1);  // an in-place update of a leaf, allowed without grad mode
  }
  check((x * 2).requires_grad() && torch::GradMode::is_enabled(), "grad mode is back after NoGradGuard");
  {
    torch::AutoGradMode mode(false);
    check(!torch::GradMode::is_enabled() && !(x * 2).requires_grad(), "AutoGradMode(false)");
  }
  check(close(x, torch::tensor({2.0, 3.0})), "in-place update of a leaf under NoGradGuard");

  auto d = x.detach();
  check(!d.requires_grad() && d.grad_fn() == nullptr, "detach(): no grad");
  check(d.data_ptr<double>() == x.data_ptr<double>(), "detach() shares storage");
  auto y = (x * d).sum();  // d is a constant
  y.backward();
  check(close(x.grad(), torch::tensor({2.0, 3.0})), "a detached operand is a constant");
}

void autograd_hooks() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto h = torch::tensor({1.0, 2.0}, opts);
  h.register_hook([](torch::Tensor g) { return g * 10; });
  torch::Tensor seen;
  auto hv = h * 3;
  hv.register_hook([&seen](torch::Tensor g) { seen = g.clone(); });
  (hv * hv).sum().backward();  // dL/dhv = 2 hv = 6 h; dL/dh = 18 h, then x10 by the hook
  check(seen.defined() && close(seen, torch::tensor({6.0, 12.0})), "a void hook sees the gradient");
  check(close(h.grad(), torch::tensor({180.0, 360.0})), "a hook returning a tensor replaces the gradient");
}

void autograd_grad() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto g = torch::tensor({1.0, 2.0}, opts);
  auto y = g.pow(3).sum();
  auto first = torch::autograd::grad({y}, {g}, /*grad_outputs=*/{}, /*retain_graph=*/true, /*create_graph=*/true);
  check(first.size() == 1 && close(first[0], torch::tensor({3.0, 12.0})), "autograd::grad first derivative");
  check(!g.grad().defined(), "autograd::grad does not accumulate into .grad()");
  check(first[0].requires_grad(), "create_graph=true gives a differentiable gradient");
  auto second = torch::autograd::grad({first[0].sum()}, {g});
  check(close(second[0], torch::tensor({6.0, 12.0})), "autograd::grad second derivative");

  auto u = torch::tensor({1.0, 2.0}, opts);
  auto v = torch::tensor({3.0, 4.0}, opts);
  auto out = u * v;
  auto gs = torch::autograd::grad({out}, {u, v}, {torch::tensor({1.0, 10.0}, torch::kFloat64)});
  check(gs.size() == 2 && close(gs[0], torch::tensor({3.0, 40.0})) && close(gs[1], torch::tensor({1.0, 20.0})),
        "autograd::grad with grad_outputs, two inputs");
  auto unused = torch::tensor({1.0}, opts);
  auto ga = torch::autograd::grad({(u * 2).sum()}, {u, unused}, {}, {}, false, /*allow_unused=*/true);
  check(close(ga[0], torch::full({2}, 2.0)) && !ga[1].defined(), "autograd::grad allow_unused");
}

}  // namespace

int main() {
  section("autograd_basics", autograd_basics);
  section("autograd_names", autograd_names);
  section("autograd_modes", autograd_modes);
  section("autograd_hooks", autograd_hooks);
  section("autograd_grad", autograd_grad);
  return finish("autograd");
}
