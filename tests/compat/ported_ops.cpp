// The tensor ops community libtorch programs reach for beyond the tutorials: reordering (flip, roll,
// unfold, repeat_interleave), scattering (scatter_, scatter_add_, index_add_, masked_scatter_),
// finding (nonzero, unique), padding (constant_pad_nd, reflection and replication pads), elementwise
// min/max of two tensors, in-place shape ops, indexing with several tensors at once, and an LBFGS fit
// with the strong-Wolfe line search.
// Expected values are worked out by hand (compat.h has the rules).
#include "compat.h"

using namespace compat;

namespace {

// 0, 1, ..., n-1 as float, in `sizes`.
torch::Tensor counting(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat).reshape(sizes);
}

// ---------------------------------------------------------------------------------------------------
void reordering() {
  auto x = counting({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  check(torch::equal(torch::flip(x, {1}), torch::tensor({{2.f, 1.f, 0.f}, {5.f, 4.f, 3.f}})), "flip(x, {1})");
  check(torch::equal(x.flip({0, 1}), torch::tensor({{5.f, 4.f, 3.f}, {2.f, 1.f, 0.f}})), "x.flip({0, 1})");
  check(torch::equal(torch::roll(x, {1}, {1}), torch::tensor({{2.f, 0.f, 1.f}, {5.f, 3.f, 4.f}})), "roll along a dim");
  check(torch::equal(x.roll({1}), torch::tensor({{5.f, 0.f, 1.f}, {2.f, 3.f, 4.f}})), "roll of the flattened tensor");

  auto windows = torch::arange(5, torch::kFloat).unfold(0, 3, 1);  // sliding windows of 3
  check(torch::equal(windows, torch::tensor({{0.f, 1.f, 2.f}, {1.f, 2.f, 3.f}, {2.f, 3.f, 4.f}})), "unfold(0, 3, 1)");
  auto strided = counting({2, 6}).unfold(1, 2, 2);
  check(strided.sizes() == torch::IntArrayRef({2, 3, 2}) && strided[1][2][0].item<float>() == 10,
        "unfold(1, 2, 2): windows along the last dim");

  auto r = torch::tensor({1.f, 2.f});
  check(torch::equal(torch::repeat_interleave(r, 2), torch::tensor({1.f, 1.f, 2.f, 2.f})), "repeat_interleave(x, 2)");
  auto counts = torch::tensor({1, 3}, torch::kLong);
  check(torch::equal(x.repeat_interleave(counts, 0),
                     torch::tensor({{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}, {3.f, 4.f, 5.f}, {3.f, 4.f, 5.f}})),
        "x.repeat_interleave(tensor, dim)");
  check(torch::equal(torch::repeat_interleave(counts), torch::tensor({0, 1, 1, 1}, torch::kLong)),
        "repeat_interleave(repeats): the index form");
}

// ---------------------------------------------------------------------------------------------------
void scattering() {
  auto index = torch::tensor({{2, 0}, {1, 1}}, torch::kLong);
  auto src = torch::tensor({{1.f, 2.f}, {3.f, 4.f}});
  auto s = torch::zeros({2, 3});
  s.scatter_(1, index, src);
  check(torch::equal(s, torch::tensor({{2.f, 0.f, 1.f}, {0.f, 4.f, 0.f}})), "scatter_(dim, index, src)");
  auto v = torch::zeros({2, 3}).scatter(1, index, 7.0);
  check(torch::equal(v, torch::tensor({{7.f, 0.f, 7.f}, {0.f, 7.f, 0.f}})), "scatter(dim, index, value)");

  auto a = torch::zeros({2, 3});
  a.scatter_add_(1, index, src);
  check(torch::equal(a, torch::tensor({{2.f, 0.f, 1.f}, {0.f, 7.f, 0.f}})), "scatter_add_: repeated indices add");

  auto acc = torch::ones({3, 2});
  acc.index_add_(0, torch::tensor({0, 2, 0}, torch::kLong), counting({3, 2}));
  check(torch::equal(acc, torch::tensor({{1.f + 0 + 4, 1.f + 1 + 5}, {1.f, 1.f}, {3.f, 4.f}})), "index_add_");

  auto m = torch::zeros({2, 2});
  m.masked_scatter_(torch::tensor({{true, false}, {false, true}}), torch::tensor({5.f, 6.f, 7.f}));
  check(torch::equal(m, torch::tensor({{5.f, 0.f}, {0.f, 6.f}})), "masked_scatter_ takes src in order");
}

// ---------------------------------------------------------------------------------------------------
void finding() {
  auto x = torch::tensor({{0.f, 3.f}, {1.f, 0.f}});
  check(torch::equal(torch::nonzero(x), torch::tensor({{0, 1}, {1, 0}}, torch::kLong)), "nonzero: [n, dims]");
  check(torch::equal(x.nonzero(), torch::nonzero(x)), "x.nonzero()");

  auto values = torch::tensor({3, 1, 3, 2, 1}, torch::kLong);
  auto [u, inverse, count] = torch::_unique2(values, /*sorted=*/true, /*return_inverse=*/true, /*return_counts=*/true);
  check(torch::equal(u, torch::tensor({1, 2, 3}, torch::kLong)), "_unique2: sorted values");
  check(torch::equal(inverse, torch::tensor({2, 0, 2, 1, 0}, torch::kLong)), "_unique2: inverse");
  check(torch::equal(count, torch::tensor({2, 1, 2}, torch::kLong)), "_unique2: counts");

  auto rows = torch::tensor({{1, 2}, {0, 5}, {1, 2}}, torch::kLong);
  auto [ur, ir, cr] = torch::unique_dim(rows, 0, true, true, true);
  check(torch::equal(ur, torch::tensor({{0, 5}, {1, 2}}, torch::kLong)) &&
            torch::equal(ir, torch::tensor({1, 0, 1}, torch::kLong)) &&
            torch::equal(cr, torch::tensor({1, 2}, torch::kLong)),
        "unique_dim: unique rows, inverse and counts");

  auto a = torch::tensor({1.f, 5.f, 3.f}), b = torch::tensor({4.f, 2.f, 3.f});
  check(torch::equal(torch::max(a, b), torch::tensor({4.f, 5.f, 3.f})), "torch::max(a, b) elementwise");
  check(torch::equal(torch::min(a, b), torch::tensor({1.f, 2.f, 3.f})), "torch::min(a, b) elementwise");
}

// ---------------------------------------------------------------------------------------------------
void padding() {
  auto x = counting({1, 1, 2, 3});  // [[0, 1, 2], [3, 4, 5]]
  auto c = torch::constant_pad_nd(x, {1, 0, 0, 1}, -1);
  check(torch::equal(c[0][0], torch::tensor({{-1.f, 0.f, 1.f, 2.f}, {-1.f, 3.f, 4.f, 5.f}, {-1.f, -1.f, -1.f, -1.f}})),
        "constant_pad_nd: left 1 and bottom 1");
  check(torch::equal(torch::constant_pad_nd(x, {0, -1})[0][0], torch::tensor({{0.f, 1.f}, {3.f, 4.f}})),
        "constant_pad_nd: a negative pad crops");
  auto r = torch::reflection_pad2d(x, {1, 1, 1, 0});
  check(torch::equal(r[0][0], torch::tensor({{4.f, 3.f, 4.f, 5.f, 4.f}, {1.f, 0.f, 1.f, 2.f, 1.f}, {4.f, 3.f, 4.f, 5.f, 4.f}})),
        "reflection_pad2d");
  auto p = torch::replication_pad2d(x, {2, 0, 0, 1});
  check(torch::equal(p[0][0], torch::tensor({{0.f, 0.f, 0.f, 1.f, 2.f}, {3.f, 3.f, 3.f, 4.f, 5.f}, {3.f, 3.f, 3.f, 4.f, 5.f}})),
        "replication_pad2d");
  auto line = torch::arange(3, torch::kFloat).reshape({1, 1, 3});
  check(torch::equal(torch::reflection_pad1d(line, {2, 1}).flatten(), torch::tensor({2.f, 1.f, 0.f, 1.f, 2.f, 1.f})),
        "reflection_pad1d");
  check(torch::equal(torch::replication_pad1d(line, {1, 2}).flatten(), torch::tensor({0.f, 0.f, 1.f, 2.f, 2.f, 2.f})),
        "replication_pad1d");

  // Gradients flow back through the pad: each input element gets one per place it was copied to.
  auto leaf = torch::ones({1, 1, 3}, torch::requires_grad());
  torch::replication_pad1d(leaf, {1, 1}).sum().backward();
  check(torch::equal(leaf.grad().flatten(), torch::tensor({2.f, 1.f, 2.f})), "replication_pad1d backward");
}

// ---------------------------------------------------------------------------------------------------
void in_place_shapes() {
  auto x = counting({2, 3});
  x.unsqueeze_(0);
  check(x.sizes() == torch::IntArrayRef({1, 2, 3}), "unsqueeze_");
  x.squeeze_(0);
  check(x.sizes() == torch::IntArrayRef({2, 3}), "squeeze_(dim)");
  x.t_();
  check(x.sizes() == torch::IntArrayRef({3, 2}) && x[2][1].item<float>() == 5, "t_");
  x.transpose_(0, 1);
  check(torch::equal(x, counting({2, 3})), "transpose_ back");
}

// ---------------------------------------------------------------------------------------------------
void advanced_indexing() {
  using torch::indexing::Slice;
  auto x = counting({2, 3, 4});
  auto pick = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kLong); };
  // Consecutive tensor indices: their broadcast shape replaces those dims in place.
  check(torch::equal(x.index({Slice(), pick({0, 2}), pick({1, 3})}), torch::tensor({{1.f, 11.f}, {13.f, 23.f}})),
        "x.index({Slice(), t, t})");
  // Apart (a slice between them): their shape goes first.
  check(torch::equal(x.index({pick({1, 0}), Slice(), pick({3, 1})}),
                     torch::tensor({{15.f, 19.f, 23.f}, {1.f, 5.f, 9.f}})),
        "x.index({t, Slice(), t})");
  check(torch::equal(x.index({pick({-1}), pick({0, -1}), 0}), torch::tensor({12.f, 20.f})),
        "negative values in index tensors, broadcast, and an integer");
  check(torch::equal(x.index({torch::tensor({false, true}), pick({2}), pick({0, 1})}), torch::tensor({20.f, 21.f})),
        "a bool mask beside long tensors");
  auto y = torch::zeros({2, 3});
  y.index_put_({pick({0, 1}), pick({2, 0})}, torch::tensor({7.f, 8.f}));
  check(torch::equal(y, torch::tensor({{0.f, 0.f, 7.f}, {8.f, 0.f, 0.f}})), "index_put_ with two tensors");
}

// ---------------------------------------------------------------------------------------------------
// LBFGS with the strong-Wolfe line search on a least-squares fit: A w = b has the exact solution
// w = (1, -2, 3), which the optimizer reaches to high precision in one step of 50 iterations.
void lbfgs() {
  auto A = torch::tensor({{2.f, 0.f, 1.f}, {0.f, 1.f, 0.f}, {1.f, 1.f, 3.f}, {0.f, 2.f, 1.f}});
  auto want = torch::tensor({1.f, -2.f, 3.f});
  auto b = torch::matmul(A, want);
  auto w = torch::zeros({3}, torch::requires_grad());
  torch::optim::LBFGS opt({w}, torch::optim::LBFGSOptions(1).max_iter(50).line_search_fn("strong_wolfe"));
  auto closure = [&] {
    opt.zero_grad();
    auto loss = (torch::matmul(A, w) - b).pow(2).sum();
    loss.backward();
    return loss;
  };
  auto first = opt.step(closure);
  check(first.item<float>() > 1.0f, "LBFGS: step returns the loss before the step");
  check(close(w.detach(), want, 1e-4), "LBFGS with strong_wolfe reaches the least-squares solution");
}

}  // namespace

int main() {
  section("reordering", reordering);
  section("scattering", scattering);
  section("finding", finding);
  section("padding", padding);
  section("in-place shape ops", in_place_shapes);
  section("advanced indexing", advanced_indexing);
  section("LBFGS", lbfgs);
  return finish("ported_ops");
}
