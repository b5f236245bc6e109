// The libtorch-port promise for custom autograd functions (torch::autograd::Function<T>): saved
// tensors, saved_data, needs_input_grad, mark_dirty, mark_non_differentiable, two outputs and
// double backward, with gradients checked against values derived by hand (compat.h has the rules).
#include "compat.h"

using namespace compat;
using torch::autograd::AutogradContext;
using torch::autograd::Function;
using torch::autograd::Variable;
using torch::autograd::variable_list;

namespace {

// y = scale * x^3, scale a plain double: dy/dx = 3 scale x^2, d2y/dx2 = 6 scale x.
class ScaledCube : public Function<ScaledCube> {
 public:
  static Variable forward(AutogradContext* ctx, Variable x, double scale) {
    ctx->saved_data["scale"] = scale;
    ctx->save_for_backward({x});
    return x.pow(3) * scale;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto x = ctx->get_saved_variables()[0];
    double scale = ctx->saved_data["scale"].toDouble();
    return {grad_outputs[0] * 3 * scale * x * x, Variable()};
  }
};

// y = a * b + c: gradients only where needs_input_grad says so.
class MulAdd : public Function<MulAdd> {
 public:
  static Variable forward(AutogradContext* ctx, Variable a, Variable b, Variable c) {
    ctx->save_for_backward({a, b});
    return a * b + c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto g = grad_outputs[0];
    Variable ga, gb, gc;
    if (ctx->needs_input_grad(0)) ga = g * saved[1];
    if (ctx->needs_input_grad(1)) gb = g * saved[0];
    if (ctx->needs_input_grad(2)) gc = g;
    return {ga, gb, gc};
  }
};

// In place: x <- x + 1, marked dirty; the gradient passes unchanged.
class AddOneInPlace : public Function<AddOneInPlace> {
 public:
  static Variable forward(AutogradContext* ctx, Variable x) {
    x.add_(1);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) { return {grad_outputs[0]}; }
};

// The row maxima and where they are: the indices are not differentiable.
class RowMax : public Function<RowMax> {
 public:
  static variable_list forward(AutogradContext* ctx, Variable x) {
    auto indices = x.argmax(1, /*keepdim=*/true);
    auto values = x.gather(1, indices);
    ctx->mark_non_differentiable({indices});
    ctx->save_for_backward({indices});
    ctx->saved_data["columns"] = x.size(1);
    return {values, indices};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto indices = ctx->get_saved_variables()[0];
    auto columns = torch::arange(ctx->saved_data["columns"].toInt()).unsqueeze(0);
    auto hot = columns.eq(indices).to(grad_outputs[0].dtype());
    return {grad_outputs[0] * hot};
  }
};

// Two differentiable outputs: (x + y, x * y).
class SumAndProduct : public Function<SumAndProduct> {
 public:
  static variable_list forward(AutogradContext* ctx, Variable x, Variable y) {
    ctx->save_for_backward({x, y});
    return {x + y, x * y};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    return {grad_outputs[0] + grad_outputs[1] * saved[1], grad_outputs[0] + grad_outputs[1] * saved[0]};
  }
};

void saved_data_and_double_backward() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto x = torch::tensor({1.0, -2.0, 0.5}, opts);
  auto y = ScaledCube::apply(x, 2.0);
  check(close(y, torch::tensor({2.0, -16.0, 0.25})), "ScaledCube forward: 2 x^3");
  check(y.grad_fn() != nullptr && y.requires_grad(), "the output has a grad_fn");
  auto g = torch::autograd::grad({y.sum()}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  check(close(g, torch::tensor({6.0, 24.0, 1.5})), "dy/dx = 6 x^2");
  auto gg = torch::autograd::grad({g.sum()}, {x})[0];
  check(close(gg, torch::tensor({12.0, -24.0, 6.0})), "d2y/dx2 = 12 x (backward made of differentiable ops)");
  y.sum().backward();
  check(close(x.grad(), torch::tensor({6.0, 24.0, 1.5})), "backward() accumulates into .grad");
  {
    torch::NoGradGuard no_grad;
    check(!ScaledCube::apply(x, 2.0).requires_grad(), "under NoGradGuard no node is recorded");
  }
}

void needs_input_grad() {
  auto a = torch::tensor({1.0, 2.0}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto b = torch::tensor({3.0, 4.0}, torch::kFloat64);  // no gradient wanted
  auto c = torch::tensor({0.5, 0.5}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto y = MulAdd::apply(a, b, c);
  check(close(y, torch::tensor({3.5, 8.5})), "MulAdd forward");
  (y * torch::tensor({1.0, 10.0}, torch::kFloat64)).sum().backward();
  check(close(a.grad(), torch::tensor({3.0, 40.0})), "d/da = g b");
  check(close(c.grad(), torch::tensor({1.0, 10.0})), "d/dc = g");
  // (An undefined Tensor argument is not tried: libtorch 1.13's apply throws "tensor does not have a
  // device" for one.)
}

void dirty_and_non_differentiable() {
  auto leaf = torch::tensor({1.0, 2.0}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto z = leaf * 2;
  auto w = AddOneInPlace::apply(z);
  check(w.is_same(z), "mark_dirty: the input itself is returned");
  check(close(z, torch::tensor({3.0, 5.0})), "the input was modified in place");
  (w * w).sum().backward();
  check(close(leaf.grad(), torch::tensor({12.0, 20.0})), "gradient through the in-place function: 4 (2 x + 1)");

  auto x = torch::tensor({{1.0, 7.0, 3.0}, {9.0, -1.0, 2.0}}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto out = RowMax::apply(x);
  check(out.size() == 2 && has_sizes(out[0], {2, 1}), "RowMax returns values and indices");
  check(out[0].requires_grad() && !out[1].requires_grad(), "the indices do not require grad");
  check(out[1].dtype() == torch::kInt64 && out[1][0][0].item<int64_t>() == 1, "the indices");
  (out[0] * 5).sum().backward();
  check(close(x.grad(), torch::tensor({{0.0, 5.0, 0.0}, {5.0, 0.0, 0.0}})), "the gradient goes to the maxima");
}

void two_outputs() {
  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto x = torch::tensor({2.0, 3.0}, opts), y = torch::tensor({5.0, -1.0}, opts);
  auto out = SumAndProduct::apply(x, y);
  check(close(out[0], torch::tensor({7.0, 2.0})) && close(out[1], torch::tensor({10.0, -3.0})), "two outputs");
  (out[0] * 2 + out[1] * 3).sum().backward();
  check(close(x.grad(), torch::tensor({17.0, -1.0})), "d/dx = 2 + 3 y");
  check(close(y.grad(), torch::tensor({8.0, 11.0})), "d/dy = 2 + 3 x");
  auto only_sum = torch::autograd::grad({SumAndProduct::apply(x, y)[0].sum()}, {x})[0];
  check(close(only_sum, torch::tensor({1.0, 1.0})), "an unused output gets a zero gradient");
}

}  // namespace

int main() {
  section("saved_data and double backward", saved_data_and_double_backward);
  section("needs_input_grad", needs_input_grad);
  section("mark_dirty and mark_non_differentiable", dirty_and_non_differentiable);
  section("two outputs", two_outputs);
  return finish("custom_function");
}
