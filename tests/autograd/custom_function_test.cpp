// Custom autograd functions (autograd::Function<T>): libtorch's documented examples (a linear
// function with saved tensors and needs_input_grad, MulConstant with saved_data), mark_dirty,
// non-differentiable and several differentiable outputs, materialize_grads, double backward,
// gradcheck/gradgradcheck, the errors that name the function; and IValue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>

#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

using autograd::AutogradContext;
using autograd::Function;
using autograd::variable_list;
using ::testing::HasSubstr;
using testing::error_of;

// libtorch's documentation example: y = x w^T + b, the bias optional.
struct LinearFunction : Function<LinearFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor input, Tensor weight, Tensor bias = Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    Tensor output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    Tensor input = saved[0], weight = saved[1], bias = saved[2], g = grad_outputs[0];
    Tensor grad_input, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) grad_input = g.mm(weight);
    if (ctx->needs_input_grad(1)) grad_weight = g.t().mm(input);
    if (bias.defined() && ctx->needs_input_grad(2)) grad_bias = g.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

// libtorch's second example: a constant (not a tensor) kept in saved_data.
struct MulConstant : Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double constant) {
    ctx->saved_data["mul"] = constant;
    return x * constant;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["mul"].toDouble(), Tensor()};
  }
};

TEST(CustomFunction, LinearFunctionMatchesTheComposedOps) {
  manual_seed(1);
  Tensor x = randn({4, 3}, kFloat64).requires_grad_(), w = randn({5, 3}, kFloat64).requires_grad_();
  Tensor b = randn({5}, kFloat64).requires_grad_();
  Tensor y = LinearFunction::apply(x, w, b);
  EXPECT_EQ(y.sizes(), IntArrayRef({4, 5}));
  ASSERT_TRUE(y.grad_fn());
  EXPECT_THAT(y.grad_fn()->name(), HasSubstr("LinearFunction"));
  EXPECT_EQ(y.grad_fn()->next_functions().size(), 3u);
  Tensor up = randn({4, 5}, kFloat64);
  (y * up).sum().backward();
  EXPECT_TRUE(x.grad().allclose(up.mm(w.detach())));
  EXPECT_TRUE(w.grad().allclose(up.t().mm(x.detach())));
  EXPECT_TRUE(b.grad().allclose(up.sum(0)));

  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{LinearFunction::apply(in[0], in[1], in[2])}; };
  EXPECT_TRUE(testing::gradcheck(fn, {x.detach(), w.detach(), b.detach()}));
  EXPECT_TRUE(testing::gradgradcheck(fn, {x.detach(), w.detach(), b.detach()}));
  auto no_bias = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{LinearFunction::apply(in[0], in[1])}; };
  EXPECT_TRUE(testing::gradcheck(no_bias, {x.detach(), w.detach()}));
}

TEST(CustomFunction, NeedsInputGradFollowsRequiresGrad) {
  static std::vector<bool> seen;
  struct Probe : Function<Probe> {
    static Tensor forward(AutogradContext*, Tensor a, Tensor b, Tensor c) { return a + b + c; }
    static variable_list backward(AutogradContext* ctx, variable_list g) {
      seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2), ctx->needs_input_grad(3)};
      return {ctx->needs_input_grad(0) ? g[0] : Tensor(), Tensor(), g[0]};
    }
  };
  Tensor a = randn({3}).requires_grad_(), b = randn({3}), c = randn({3}).requires_grad_();
  Probe::apply(a, b, c).sum().backward();
  EXPECT_EQ(seen, (std::vector<bool>{true, false, true, false}));
  EXPECT_TRUE(a.grad().equal(ones({3})));
  EXPECT_TRUE(c.grad().equal(ones({3})));
}

TEST(CustomFunction, MulConstantKeepsSavedData) {
  Tensor x = randn({2, 3}, kFloat64).requires_grad_();
  Tensor y = MulConstant::apply(x, 5.5);
  EXPECT_TRUE(y.allclose(x.detach() * 5.5));
  y.sum().backward();
  EXPECT_TRUE(x.grad().equal(full({2, 3}, 5.5, kFloat64)));
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{MulConstant::apply(in[0], -1.5)}; };
  EXPECT_TRUE(testing::gradcheck(fn, {x.detach()}));
  EXPECT_TRUE(testing::gradgradcheck(fn, {x.detach()}));
}

TEST(CustomFunction, WithoutGradModeNoNodeIsRecorded) {
  Tensor x = randn({3}).requires_grad_();
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(MulConstant::apply(x, 2.0).requires_grad());
  }
  EXPECT_FALSE(MulConstant::apply(randn({3}), 2.0).requires_grad());
  // forward runs with grad mode off: what it computes has no history of its own.
  struct SeesGradMode : Function<SeesGradMode> {
    static Tensor forward(AutogradContext*, Tensor x) {
      EXPECT_FALSE(GradMode::is_enabled());
      return x * 2;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
  };
  EXPECT_TRUE(SeesGradMode::apply(x).requires_grad());
}

// exp saving its output: under create_graph the saved output is re-linked to the function's node,
// so the second derivative is right.
struct Exp : Function<Exp> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) { return {g[0] * ctx->get_saved_variables()[0]}; }
};

TEST(CustomFunction, SavedOutputIsDifferentiableUnderCreateGraph) {
  Tensor x = tensor({0.5, -1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = Exp::apply(x);
  Tensor g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(g.allclose(x.detach().exp()));
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(gg.allclose(x.detach().exp()));
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{Exp::apply(in[0])}; };
  EXPECT_TRUE(testing::gradgradcheck(fn, {randn({2, 3}, kFloat64)}));
}

TEST(CustomFunction, SecondBackwardNeedsRetainGraph) {
  Tensor x = randn({3}, kFloat64).requires_grad_();
  Tensor y = Exp::apply(x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(x.grad().allclose(2 * x.detach().exp()));
  EXPECT_THAT(error_of([&] { y.backward(); }), HasSubstr("trying to backward through the graph a second time"));
}

// An in-place function: forward modifies x, marks it dirty and returns it; x takes the node.
struct MulTwoInPlace : Function<MulTwoInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

TEST(CustomFunction, MarkDirtyRebasesTheInputsHistory) {
  Tensor leaf = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
  Tensor a = leaf * 3;  // a non-leaf, so it may be modified in place
  const uint32_t version = a._version();
  Tensor y = MulTwoInPlace::apply(a);
  EXPECT_TRUE(y.is_same(a));
  EXPECT_GT(a._version(), version);
  EXPECT_THAT(a.grad_fn()->name(), HasSubstr("MulTwoInPlace"));
  EXPECT_TRUE(a.detach().equal(tensor({6.0, 12.0, 18.0}, kFloat64)));
  (y * y).sum().backward();  // d/dleaf (6 leaf)^2 = 72 leaf
  EXPECT_TRUE(leaf.grad().allclose(leaf.detach() * 72));

  EXPECT_THAT(error_of([] { MulTwoInPlace::apply(randn({2}).requires_grad_()); }),
              HasSubstr("a leaf tensor that requires grad (float32 [2]) was modified in place by forward (mark_dirty)"));
  Tensor base = randn({4}).requires_grad_() * 1;
  EXPECT_THAT(error_of([&] { MulTwoInPlace::apply(base.narrow(0, 1, 2)); }),
              HasSubstr("MulTwoInPlace: a view ([2]) was modified in place by forward (mark_dirty) while recording"));
  struct ForgetsToReturn : Function<ForgetsToReturn> {
    static Tensor forward(AutogradContext* ctx, Tensor x) {
      x.add_(1);
      ctx->mark_dirty({x});
      return x * 2;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
  };
  EXPECT_THAT(error_of([] { ForgetsToReturn::apply(randn({2}).requires_grad_() * 1); }),
              HasSubstr("ForgetsToReturn: a tensor marked dirty (mark_dirty) is not among forward's outputs"));
}

// Values and their argmax: the indices (int64) and a float output marked non-differentiable get
// no gradient; backward still gets a (zero) gradient for each.
struct MaxWithIndex : Function<MaxWithIndex> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    Tensor index = x.argmax(1, true), values = x.amax({1}, true), flag = (values > 0).to(x.dtype());
    ctx->mark_non_differentiable({index, flag});
    ctx->save_for_backward({index});
    ctx->saved_data["width"] = x.size(1);
    return {values, index, flag};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    EXPECT_EQ(g.size(), 3u);
    EXPECT_TRUE(g[2].defined() && g[2].abs().sum().item<double>() == 0);
    Tensor index = ctx->get_saved_variables()[0];
    Tensor hot = (arange(ctx->saved_data["width"].toInt()).unsqueeze(0) == index).to(g[0].dtype());
    return {g[0] * hot};
  }
};

TEST(CustomFunction, NonDifferentiableOutputs) {
  Tensor x = tensor({{1.0, 5.0, 2.0}, {-4.0, -3.0, -9.0}}, kFloat64).requires_grad_();
  auto out = MaxWithIndex::apply(x);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  EXPECT_FALSE(out[2].requires_grad());
  EXPECT_EQ(out[1].dtype(), kInt64);
  (out[0] * 10).sum().backward();
  EXPECT_TRUE(x.grad().equal(tensor({{0.0, 10.0, 0.0}, {0.0, 10.0, 0.0}}, kFloat64)));
}

// Two differentiable outputs: the product and the sum of two tensors.
struct ProductAndSum : Function<ProductAndSum> {
  static variable_list forward(AutogradContext* ctx, Tensor a, Tensor b) {
    ctx->save_for_backward({a, b});
    return {a * b, a + b};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    auto s = ctx->get_saved_variables();
    return {g[0] * s[1] + g[1], g[0] * s[0] + g[1]};
  }
};

TEST(CustomFunction, SeveralDifferentiableOutputs) {
  Tensor a = tensor({1.0, 2.0}, kFloat64).requires_grad_(), b = tensor({3.0, -1.0}, kFloat64).requires_grad_();
  auto out = ProductAndSum::apply(a, b);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].requires_grad() && out[1].requires_grad());
  EXPECT_THAT(out[0].grad_fn()->name(), HasSubstr("ProductAndSum"));
  (out[0] * 3 + out[1] * 5).sum().backward();
  EXPECT_TRUE(a.grad().equal(b.detach() * 3 + 5));
  EXPECT_TRUE(b.grad().equal(a.detach() * 3 + 5));
  // Only one output used: the other's gradient is materialized as zeros.
  Tensor ga = autograd::grad({ProductAndSum::apply(a, b)[1].sum()}, {a})[0];
  EXPECT_TRUE(ga.equal(ones({2}, kFloat64)));
  auto fn = [](const std::vector<Tensor>& in) { return ProductAndSum::apply(in[0], in[1]); };
  EXPECT_TRUE(testing::gradcheck(fn, {randn({3}, kFloat64), randn({3}, kFloat64)}));
  EXPECT_TRUE(testing::gradgradcheck(fn, {randn({3}, kFloat64), randn({3}, kFloat64)}));
}

// Two outputs, one saved: the saved output is re-linked to its own relay under create_graph.
struct ExpAndNeg : Function<ExpAndNeg> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    Tensor e = x.exp();
    ctx->save_for_backward({e});
    return {e, -x};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0] - g[1]};
  }
};

TEST(CustomFunction, SeveralOutputsSavedOutputDoubleBackward) {
  auto fn = [](const std::vector<Tensor>& in) { return ExpAndNeg::apply(in[0]); };
  EXPECT_TRUE(testing::gradcheck(fn, {randn({4}, kFloat64)}));
  EXPECT_TRUE(testing::gradgradcheck(fn, {randn({4}, kFloat64)}));
}

TEST(CustomFunction, MaterializeGradsOff) {
  static bool second_defined = true;
  struct Lazy : Function<Lazy> {
    static variable_list forward(AutogradContext* ctx, Tensor x) {
      ctx->set_materialize_grads(false);
      return {x * 2, x * 3};
    }
    static variable_list backward(AutogradContext*, variable_list g) {
      second_defined = g[1].defined();
      return {g[0] * 2};
    }
  };
  Tensor x = randn({3}).requires_grad_();
  Lazy::apply(x)[0].sum().backward();
  EXPECT_FALSE(second_defined);
  EXPECT_TRUE(x.grad().equal(full({3}, 2.0f)));
}

TEST(CustomFunction, InputsReturnedAsIsAndOptionalArguments) {
  struct PassThrough : Function<PassThrough> {
    static Tensor forward(AutogradContext*, Tensor x) { return x; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 7}; }
  };
  Tensor x = randn({2}).requires_grad_();
  Tensor y = PassThrough::apply(x);
  EXPECT_TRUE(x.is_leaf());  // the input keeps its own (no) history; y is an alias
  EXPECT_FALSE(y.is_leaf());
  y.sum().backward();
  EXPECT_TRUE(x.grad().equal(full({2}, 7.0f)));

  struct ScaledAdd : Function<ScaledAdd> {
    static Tensor forward(AutogradContext* ctx, Tensor x, std::optional<Tensor> y, int64_t k) {
      ctx->saved_data["k"] = k;
      ctx->saved_data["has_y"] = y.has_value();
      return y ? x + *y * static_cast<double>(k) : x.clone();
    }
    static variable_list backward(AutogradContext* ctx, variable_list g) {
      Tensor gy = ctx->saved_data["has_y"].toBool() ? g[0] * static_cast<double>(ctx->saved_data["k"].toInt()) : Tensor();
      return {g[0], gy, Tensor()};
    }
  };
  Tensor a = randn({2}, kFloat64).requires_grad_(), b = randn({2}, kFloat64).requires_grad_();
  ScaledAdd::apply(a, std::optional<Tensor>(b), int64_t{3}).sum().backward();
  EXPECT_TRUE(b.grad().equal(full({2}, 3.0, kFloat64)));
  ScaledAdd::apply(a, std::optional<Tensor>(), int64_t{3}).sum().backward();
  EXPECT_TRUE(a.grad().equal(full({2}, 2.0, kFloat64)));
}

TEST(CustomFunction, ErrorsNameTheFunctionAndTheArgument) {
  struct TooFew : Function<TooFew> {
    static Tensor forward(AutogradContext*, Tensor x, double c) { return x * c; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
  };
  struct WrongShape : Function<WrongShape> {
    static Tensor forward(AutogradContext*, Tensor x, Tensor y) { return x + y; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0].sum(1)}; }
  };
  struct GradForANumber : Function<GradForANumber> {
    static Tensor forward(AutogradContext*, Tensor x, double c) { return x * c; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2, g[0]}; }
  };
  Tensor x = randn({2, 3}).requires_grad_();
  EXPECT_THAT(error_of([&] { TooFew::apply(x, 2.0).sum().backward(); }),
              HasSubstr("TooFew: backward returned 1 gradients, expected 2 (one per argument of forward)"));
  EXPECT_THROW(TooFew::apply(x, 2.0).sum().backward(), AutogradError);
  EXPECT_THAT(error_of([&] { WrongShape::apply(x, randn({2, 3}).requires_grad_()).sum().backward(); }),
              HasSubstr("WrongShape: backward returned a gradient of shape [2] for argument 1 of forward (tensor input "
                        "1), which has shape [2, 3]"));
  EXPECT_THAT(error_of([&] { GradForANumber::apply(x, 2.0).sum().backward(); }),
              HasSubstr("GradForANumber: backward returned a gradient for argument 1 of forward, which is not a tensor "
                        "input"));
  // A gradient the input broadcasts to is summed back (libtorch's rule).
  struct Broadcasting : Function<Broadcasting> {
    static Tensor forward(AutogradContext*, Tensor x, Tensor bias) { return x + bias; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
  };
  Tensor bias = randn({3}).requires_grad_();
  Broadcasting::apply(x, bias).sum().backward();
  EXPECT_TRUE(bias.grad().equal(full({3}, 2.0f)));
}

TEST(IValue, KindsAndConversions) {
  IValue none, d = 2.5, f = 1.5f, i = 7, l = int64_t{1} << 40, b = true, s = "name", t = ones({2});
  IValue sizes = std::vector<int64_t>{2, 3};
  EXPECT_TRUE(none.isNone());
  EXPECT_EQ(d.toDouble(), 2.5);
  EXPECT_EQ(f.toDouble(), 1.5);
  EXPECT_EQ(i.toInt(), 7);
  EXPECT_EQ(l.toInt(), int64_t{1} << 40);
  EXPECT_TRUE(b.toBool());
  EXPECT_EQ(s.toStringRef(), "name");
  EXPECT_TRUE(t.toTensor().equal(ones({2})));
  EXPECT_EQ(sizes.toIntVector(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(i.isInt() && !i.isDouble() && d.isDouble() && b.isBool() && s.isString() && t.isTensor());
  EXPECT_THAT(error_of([&] { i.toDouble(); }), HasSubstr("IValue: expected Double but got Int"));
  EXPECT_THROW(s.toTensor(), TypeError);
}

}  // namespace
}  // namespace cohort
