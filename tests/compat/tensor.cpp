// The libtorch-port promise for tensors: creation, views, joins, arithmetic, reductions and linear
// algebra, written against libtorch's C++ API (compat.h has the rules).
#include "compat.h"

using namespace compat;
using torch::indexing::Ellipsis;
using torch::indexing::None;
using torch::indexing::Slice;

namespace {

// ---------------------------------------------------------------------------------------------------
void creation() {
  auto z = torch::zeros({2, 3});
  check(z.scalar_type() == torch::kFloat32, "zeros: default dtype is float32");
  check(has_sizes(z, {2, 3}) && z.dim() == 2 && z.numel() == 6, "zeros: sizes, dim, numel");
  check(z.size(1) == 3 && z.sizes()[0] == 2, "zeros: size(1), sizes()[0]");
  check(z.sum().item<float>() == 0.0f, "zeros: all zero");

  auto o = torch::ones({2, 2}, torch::kFloat64);
  check(o.scalar_type() == torch::kFloat64 && o.sum().item<double>() == 4.0, "ones(kFloat64)");

  auto f = torch::full({3}, 2.5);
  check(f.scalar_type() == torch::kFloat32 && f.sum().item<float>() == 7.5f, "full({3}, 2.5)");

  auto e = torch::eye(3);
  check(e.sum().item<float>() == 3.0f && e[1][1].item<float>() == 1.0f && e[0][1].item<float>() == 0.0f,
        "eye(3)");

  auto r = torch::arange(6);
  check(r.scalar_type() == torch::kInt64 && r.numel() == 6 && r[5].item<int64_t>() == 5, "arange(6) is int64");
  auto rf = torch::arange(1, 7, torch::kFloat64);
  check(rf.scalar_type() == torch::kFloat64 && rf.sum().item<double>() == 21.0, "arange(1, 7, kFloat64)");
  auto rs = torch::arange(0.0, 1.0, 0.25);
  check(rs.scalar_type() == torch::kFloat32 && close(rs, torch::tensor({0.0, 0.25, 0.5, 0.75})),
        "arange(0.0, 1.0, 0.25)");
  check(close(torch::linspace(0, 1, 5), torch::tensor({0.0, 0.25, 0.5, 0.75, 1.0})), "linspace(0, 1, 5)");

  auto opts = torch::dtype(torch::kFloat64).requires_grad(true);
  auto w = torch::zeros({2}, opts);
  check(w.requires_grad() && w.scalar_type() == torch::kFloat64 && w.is_leaf(),
        "zeros with dtype(kFloat64).requires_grad(true)");
  check(torch::ones({1}, torch::requires_grad()).requires_grad(), "ones with torch::requires_grad()");

  auto ti = torch::tensor({1, 2, 3});
  check(ti.scalar_type() == torch::kInt64 && ti.sum().item<int64_t>() == 6, "tensor({1, 2, 3}) is int64");
  auto tf = torch::tensor({1.5, 2.5});
  check(tf.scalar_type() == torch::kFloat32 && tf.sum().item<float>() == 4.0f, "tensor({1.5, 2.5}) is float32");
  auto t2 = torch::tensor({{1.0, 2.0}, {3.0, 4.0}});
  check(has_sizes(t2, {2, 2}) && t2[1][0].item<float>() == 3.0f, "tensor({{...}, {...}})");
  auto td = torch::tensor({1.0, 2.0}, torch::dtype(torch::kFloat64).requires_grad(true));
  check(td.scalar_type() == torch::kFloat64 && td.requires_grad(), "tensor({...}, dtype().requires_grad())");
  auto tb = torch::tensor({true, false, true});
  check(tb.scalar_type() == torch::kBool && tb.sum().item<int64_t>() == 2, "tensor({true, false, true})");
  std::vector<float> values = {1.0f, 2.0f, 4.0f};
  auto tv = torch::tensor(values);
  check(tv.scalar_type() == torch::kFloat32 && tv.sum().item<float>() == 7.0f, "tensor(std::vector<float>)");
  auto ts = torch::scalar_tensor(3.5);
  check(ts.dim() == 0 && ts.item<float>() == 3.5f, "scalar_tensor(3.5)");

  check(torch::zeros_like(t2).sum().item<float>() == 0.0f && has_sizes(torch::zeros_like(t2), {2, 2}), "zeros_like");
  check(torch::ones_like(t2).sum().item<float>() == 4.0f, "ones_like");
  check(torch::full_like(t2, 7).sum().item<float>() == 28.0f, "full_like");
  check(torch::empty({4, 5}).numel() == 20, "empty({4, 5})");
  check(torch::zeros({2}, torch::kInt64).scalar_type() == torch::kInt64, "zeros(kInt64)");

  double buffer[6] = {1, 2, 3, 4, 5, 6};
  auto b = torch::from_blob(buffer, {2, 3}, torch::kFloat64);
  check(has_sizes(b, {2, 3}) && b[1][2].item<double>() == 6.0, "from_blob: values");
  b.mul_(2);
  check(buffer[5] == 12.0, "from_blob: a write through the tensor reaches the buffer");
  buffer[0] = 100;
  check(b[0][0].item<double>() == 100.0, "from_blob: a write to the buffer shows in the tensor");
  auto owned = torch::from_blob(buffer, {6}, torch::kFloat64).clone();
  buffer[1] = -1;
  check(owned[1].item<double>() == 4.0, "from_blob(...).clone() owns its data");
  float fbuf[4] = {0.5f, 1.5f, 2.5f, 3.5f};
  auto fb = torch::from_blob(fbuf, {2, 2});
  check(fb.scalar_type() == torch::kFloat32 && fb.sum().item<float>() == 8.0f, "from_blob default float32");
  check(fb.data_ptr<float>() == fbuf, "data_ptr<float>() of from_blob");

  auto c = t2.to(torch::kFloat64);
  check(c.scalar_type() == torch::kFloat64 && close(c, t2), "to(kFloat64)");
  check(ti.to(torch::kFloat32).scalar_type() == torch::kFloat32, "to(kFloat32) of int64");
}

// ---------------------------------------------------------------------------------------------------
void views() {
  auto x = torch::arange(24, torch::kFloat32).view({2, 3, 4});
  check(has_sizes(x, {2, 3, 4}) && x[1][2][3].item<float>() == 23.0f, "arange(24).view({2, 3, 4})");
  check(has_sizes(x.view({6, 4}), {6, 4}) && x.view({6, 4})[5][3].item<float>() == 23.0f, "view({6, 4})");
  check(has_sizes(x.view({-1}), {24}), "view({-1})");
  check(has_sizes(x.reshape({4, -1}), {4, 6}) && x.reshape({4, -1})[3][5].item<float>() == 23.0f,
        "reshape({4, -1})");

  auto p = x.permute({2, 0, 1});
  check(has_sizes(p, {4, 2, 3}) && p[3][1][2].item<float>() == 23.0f && p[1][0][2].item<float>() == 9.0f,
        "permute({2, 0, 1})");
  check(!p.is_contiguous() && p.contiguous().is_contiguous() && close(p.contiguous(), p), "contiguous()");
  auto tr = x.transpose(0, 2);
  check(has_sizes(tr, {4, 3, 2}) && tr[1][2][0].item<float>() == 9.0f, "transpose(0, 2)");
  auto m = torch::arange(6, torch::kFloat32).view({2, 3});
  check(has_sizes(m.t(), {3, 2}) && m.t()[2][1].item<float>() == 5.0f, "t()");
  check(has_sizes(m.t().reshape({-1}), {6}) && m.t().reshape({-1})[1].item<float>() == 3.0f,
        "reshape of a transposed tensor");

  auto n = x.narrow(2, 1, 2);
  check(has_sizes(n, {2, 3, 2}) && n[0][0][0].item<float>() == 1.0f && n[1][2][1].item<float>() == 22.0f,
        "narrow(2, 1, 2)");
  auto s = x.select(1, 2);
  check(has_sizes(s, {2, 4}) && s[1][3].item<float>() == 23.0f, "select(1, 2)");

  auto i1 = x.index({Slice(), 1});
  check(has_sizes(i1, {2, 4}) && i1[1][0].item<float>() == 16.0f, "index({Slice(), 1})");
  auto i2 = x.index({0, Slice(1, None), Slice(None, None, 2)});
  check(close(i2, torch::tensor({{4.0, 6.0}, {8.0, 10.0}})), "index({0, Slice(1, None), Slice(None, None, 2)})");
  auto i3 = x.index({Ellipsis, 3});
  check(has_sizes(i3, {2, 3}) && i3[1][1].item<float>() == 19.0f, "index({Ellipsis, 3})");
  auto i4 = m.index({None, Slice(), 0});
  check(has_sizes(i4, {1, 2}) && i4[0][1].item<float>() == 3.0f, "index({None, Slice(), 0})");

  check(has_sizes(m.unsqueeze(0), {1, 2, 3}) && has_sizes(m.unsqueeze(-1), {2, 3, 1}), "unsqueeze");
  check(has_sizes(m.unsqueeze(0).squeeze(), {2, 3}), "squeeze()");
  check(has_sizes(torch::ones({2, 1, 3}).squeeze(1), {2, 3}), "squeeze(1)");
  check(has_sizes(x.flatten(), {24}) && has_sizes(x.flatten(1), {2, 12}), "flatten");

  auto r = torch::arange(10);
  auto ch = r.chunk(3);
  check(ch.size() == 3 && ch[0].numel() == 4 && ch[1].numel() == 4 && ch[2].numel() == 2 &&
            ch[2][0].item<int64_t>() == 8,
        "chunk(3) of 10 elements");
  auto sp = r.split(4);
  check(sp.size() == 3 && sp[2].numel() == 2 && sp[1][0].item<int64_t>() == 4, "split(4) of 10 elements");
  auto sp2 = x.split(2, 2);
  check(sp2.size() == 2 && has_sizes(sp2[1], {2, 3, 2}) && sp2[1][0][0][0].item<float>() == 2.0f, "split(2, 2)");
  auto ch2 = torch::chunk(x, 3, 1);
  check(ch2.size() == 3 && has_sizes(ch2[2], {2, 1, 4}), "torch::chunk(x, 3, 1)");

  // Views share storage with their base.
  auto base = torch::zeros({2, 3});
  base.select(0, 1).fill_(5);
  check(base.sum().item<float>() == 15.0f, "select(...).fill_ writes through");
  base.index({Slice(), 0}).add_(1);
  check(base.sum().item<float>() == 17.0f, "index({Slice(), 0}).add_ writes through");
  base.t().mul_(2);
  check(base.sum().item<float>() == 34.0f, "t().mul_ writes through");
  base.view({6}).narrow(0, 0, 3).zero_();
  check(base.sum().item<float>() == 32.0f, "view().narrow().zero_ writes through");
  base.index_put_({1, Slice(1, None)}, 0);
  check(close(base, torch::tensor({{0.0, 0.0, 0.0}, {12.0, 0.0, 0.0}})), "index_put_({1, Slice(1, None)}, 0)");
  auto cl = base.clone();
  cl.fill_(1);
  check(base.sum().item<float>() == 12.0f, "clone() does not share storage");

  // A few more shape ops.
  auto ex = torch::tensor({{1.0}, {2.0}}).expand({2, 3});
  check(has_sizes(ex, {2, 3}) && ex.sum().item<float>() == 9.0f, "expand({2, 3})");
  check(has_sizes(torch::ones({3}).expand_as(m), {2, 3}), "expand_as");
  auto ub = m.unbind(1);
  check(ub.size() == 3 && close(ub[2], torch::tensor({2.0, 5.0})), "unbind(1)");
  check(close(m.repeat({1, 2}), torch::cat({m, m}, 1)), "repeat({1, 2})");
  auto idx = torch::tensor({2, 0});
  check(close(m.index_select(1, idx), torch::tensor({{2.0, 0.0}, {5.0, 3.0}})), "index_select(1, idx)");
  check(close(m.index({torch::tensor({1, 0})}), torch::tensor({{3.0, 4.0, 5.0}, {0.0, 1.0, 2.0}})),
        "index({int64 tensor})");
  check(m.index({m > 2}).numel() == 3 && m.index({m > 2}).sum().item<float>() == 12.0f, "index({bool mask})");
  check(m.sizes().vec() == std::vector<int64_t>({2, 3}), "sizes().vec()");
  check(m.dtype() == torch::kFloat32 && m.is_floating_point(), "dtype() == kFloat32");
  check(m.device().is_cpu() && m.device() == torch::Device(torch::kCPU), "device() is CPU");
  check(torch::zeros({2}, m.options()).scalar_type() == torch::kFloat32, "zeros(..., x.options())");
  check(m.toType(torch::kFloat64).scalar_type() == torch::kFloat64, "toType(kFloat64)");
  check(m.to(torch::kCPU).equal(m), "to(kCPU)");
}

// ---------------------------------------------------------------------------------------------------
void cat_stack() {
  auto a = torch::tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto b = torch::tensor({{5.0, 6.0}});
  check(close(torch::cat({a, b}, 0), torch::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}})), "cat dim 0");
  check(close(torch::cat({a, b}), torch::cat({a, b}, 0)), "cat default dim");
  auto c1 = torch::cat({a, a * 10}, 1);
  check(has_sizes(c1, {2, 4}) && c1[1][3].item<float>() == 40.0f, "cat dim 1");
  auto s0 = torch::stack({a, a * 2});
  check(has_sizes(s0, {2, 2, 2}) && s0[1][1][0].item<float>() == 6.0f, "stack dim 0");
  auto s2 = torch::stack({a, a * 2}, 2);
  check(has_sizes(s2, {2, 2, 2}) && s2[1][0][1].item<float>() == 6.0f, "stack dim 2");
  std::vector<torch::Tensor> parts = {a, b};
  check(torch::cat(parts).numel() == 6, "cat(std::vector<Tensor>)");
  check(close(torch::cat(a.chunk(2, 1), 1), a), "cat(chunk(...)) round trip");
}

// ---------------------------------------------------------------------------------------------------
void arithmetic() {
  auto m = torch::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto row = torch::tensor({10.0, 20.0, 30.0});
  auto col = torch::tensor({{1.0}, {2.0}});
  check(close(m + row, torch::tensor({{11.0, 22.0, 33.0}, {14.0, 25.0, 36.0}})), "broadcast [2,3] + [3]");
  check(close(m * col, torch::tensor({{1.0, 2.0, 3.0}, {8.0, 10.0, 12.0}})), "broadcast [2,3] * [2,1]");
  check(has_sizes(col + row, {2, 3}) && (col + row)[1][2].item<float>() == 32.0f, "broadcast [2,1] + [3]");
  check(close(m - row, -(row - m)), "sub and unary minus");
  check(close(m / col, torch::tensor({{1.0, 2.0, 3.0}, {2.0, 2.5, 3.0}})), "broadcast div");
  check(close(m + 1, torch::tensor({{2.0, 3.0, 4.0}, {5.0, 6.0, 7.0}})), "tensor + scalar");
  check(close(2 * m, m + m) && close(m * 2.0, m + m), "scalar * tensor");
  check(close(10 - m, torch::tensor({{9.0, 8.0, 7.0}, {6.0, 5.0, 4.0}})), "scalar - tensor");
  check(close(1.0 / torch::tensor({2.0, 4.0}), torch::tensor({0.5, 0.25})), "scalar / tensor");
  check(close(m / 2, m * 0.5), "tensor / scalar");
  check(close(m.add(row, 2), m + 2 * row), "add(other, alpha)");
  check(close(torch::add(m, 1), m + 1) && close(torch::sub(m, m), torch::zeros({2, 3})), "torch::add/sub");
  check(close(torch::mul(m, m), m.pow(2)) && close(torch::pow(m, 2), m * m), "mul, pow");
  check(close(torch::div(m, m), torch::ones({2, 3})), "torch::div");

  check(close(torch::exp(torch::zeros({2})), torch::ones({2})), "exp");
  check(close(torch::log(torch::tensor({1.0, std::exp(1.0)})), torch::tensor({0.0, 1.0})), "log");
  check(close(torch::sqrt(torch::tensor({4.0, 9.0})), torch::tensor({2.0, 3.0})), "sqrt");
  check(close(torch::relu(torch::tensor({-1.0, 2.0})), torch::tensor({0.0, 2.0})), "relu");
  check(close(torch::sigmoid(torch::zeros({2})), torch::full({2}, 0.5)), "sigmoid");
  check(close(torch::tanh(torch::tensor({0.0, 1.0})), torch::tensor({0.0, std::tanh(1.0)})), "tanh");
  check(close(torch::abs(-m), m) && close((-m).abs(), m), "abs");
  check(close(m.clamp(2, 5), torch::tensor({{2.0, 2.0, 3.0}, {4.0, 5.0, 5.0}})), "clamp(2, 5)");
  check(close(torch::clamp(m, 3), torch::tensor({{3.0, 3.0, 3.0}, {4.0, 5.0, 6.0}})), "clamp(min)");
  check(close(m.sqrt().square(), m), "sqrt().square()");
  check(close(torch::maximum(m, torch::full({2, 3}, 3.5)), torch::tensor({{3.5, 3.5, 3.5}, {4.0, 5.0, 6.0}})),
        "maximum");

  auto i = torch::tensor({1, 2, 3});
  check((i + 2).scalar_type() == torch::kInt64, "int64 tensor + int scalar stays int64");
  check((i + 0.5).scalar_type() == torch::kFloat32, "int64 tensor + float scalar is float32");
  check((i / 2).scalar_type() == torch::kFloat32 && close(i / 2, torch::tensor({0.5, 1.0, 1.5})),
        "int64 / int is true division");
  check((torch::ones({1}, torch::kFloat64) + torch::ones({1})).scalar_type() == torch::kFloat64,
        "float64 + float32 is float64");

  auto gt = m > 3;
  check(gt.scalar_type() == torch::kBool && gt.sum().item<int64_t>() == 3, "comparison gives bool");
  check((m == 2).sum().item<int64_t>() == 1 && (m <= 2).sum().item<int64_t>() == 2, "== and <=");
  check(torch::where(m > 3, m, torch::zeros_like(m)).sum().item<float>() == 15.0f, "where");
  check(m.masked_fill(m > 3, 0).sum().item<float>() == 6.0f, "masked_fill");

  // In-place ops.
  auto acc = torch::zeros({2, 3});
  acc += m;
  check(close(acc, m), "+=");
  acc.add_(m, 0.5);
  check(close(acc, m * 1.5), "add_(other, alpha)");
  acc.mul_(2);
  check(close(acc, m * 3), "mul_(scalar)");
  acc -= m;
  check(close(acc, m * 2), "-=");
  acc /= 2;
  check(close(acc, m), "/=");
  acc *= col;
  check(close(acc, m * col), "*= broadcasting");
  acc.sub_(1).div_(torch::full({3}, 2.0));
  check(close(acc, (m * col - 1) / 2), "chained sub_ div_");
  acc.add_(row);
  check(close(acc, (m * col - 1) / 2 + row), "add_ broadcasting");
  acc.clamp_(0, 20);
  check(acc.max().item<float>() == 20.0f, "clamp_");
  acc.copy_(m);
  check(close(acc, m), "copy_");
  acc.pow_(2);
  check(close(acc, m * m), "pow_");
  acc.sqrt_();
  check(close(acc, m), "sqrt_");
  acc.neg_().relu_();
  check(acc.sum().item<float>() == 0.0f, "neg_().relu_()");
  acc.fill_(3);
  check(acc.sum().item<float>() == 18.0f, "fill_");
  acc.zero_();
  check(acc.sum().item<float>() == 0.0f, "zero_");
}

// ---------------------------------------------------------------------------------------------------
void reductions() {
  auto m = torch::tensor({{1.0, 5.0, 3.0}, {4.0, 2.0, 6.0}});
  check(m.sum().item<float>() == 21.0f && torch::sum(m).item<float>() == 21.0f, "sum()");
  check(close(m.sum(0), torch::tensor({5.0, 7.0, 9.0})) && close(m.sum(1), torch::tensor({9.0, 12.0})), "sum(dim)");
  check(m.sum(torch::IntArrayRef{0, 1}).item<float>() == 21.0f, "sum(IntArrayRef{0, 1})");
  check(has_sizes(m.sum(1, /*keepdim=*/true), {2, 1}), "sum(1, keepdim=true)");
  check(torch::tensor({1, 2, 3}).sum().scalar_type() == torch::kInt64, "sum of int64 is int64");
  check(m.sum(torch::kFloat64).scalar_type() == torch::kFloat64, "sum(dtype)");
  check(m.mean().item<float>() == 3.5f, "mean()");
  check(close(m.mean(0), torch::tensor({2.5, 3.5, 4.5})) && close(torch::mean(m, 1), torch::tensor({3.0, 4.0})),
        "mean(dim)");
  check(has_sizes(m.mean(torch::IntArrayRef{0, 1}, true), {1, 1}), "mean(IntArrayRef{0, 1}, keepdim)");
  check(m.prod().item<float>() == 720.0f, "prod()");

  check(m.max().item<float>() == 6.0f && m.min().item<float>() == 1.0f, "max(), min()");
  auto [values, indices] = m.max(1);
  check(close(values, torch::tensor({5.0, 6.0})), "max(1) values");
  check(indices.scalar_type() == torch::kInt64 && torch::equal(indices, torch::tensor({1, 2})), "max(1) indices");
  auto mx0 = torch::max(m, 0);
  check(close(std::get<0>(mx0), torch::tensor({4.0, 5.0, 6.0})) &&
            std::get<1>(mx0).equal(torch::tensor({1, 0, 1})),
        "torch::max(m, 0)");
  auto mn = m.min(1, /*keepdim=*/true);
  check(has_sizes(std::get<0>(mn), {2, 1}) && std::get<1>(mn)[1][0].item<int64_t>() == 1, "min(1, keepdim)");
  check(m.argmax().item<int64_t>() == 5, "argmax()");
  check(torch::equal(m.argmax(1), torch::tensor({1, 2})), "argmax(1)");
  check(has_sizes(m.argmax(0, true), {1, 3}) && torch::argmax(m, 0)[1].item<int64_t>() == 0, "argmax(0, keepdim)");
  check(m.argmin().item<int64_t>() == 0, "argmin()");

  check(torch::tensor({3.0, 4.0}).norm().item<float>() == 5.0f, "norm()");
  check(close(m.norm(1, {1}), torch::tensor({9.0, 12.0})), "norm(1, {1})");
  check(near(m.norm(2, {0}, true)[0][0].item<double>(), std::sqrt(17.0)), "norm(2, {0}, keepdim)");
  auto v = torch::tensor({1.0, 2.0, 3.0, 4.0});
  check(near(v.var().item<double>(), 5.0 / 3.0), "var() is unbiased");
  check(near(v.var(false).item<double>(), 1.25), "var(false)");
  check(close(m.var({1}, true, false), torch::tensor({4.0, 4.0})), "var({1}, true, false)");
  check(near(v.std().item<double>(), std::sqrt(5.0 / 3.0)), "std()");

  auto z = torch::tensor({{0.0, std::log(2.0), std::log(5.0)}, {1.0, 1.0, 1.0}});
  auto sm = torch::softmax(z, 1);
  check(close(sm, torch::tensor({{0.125, 0.25, 0.625}, {1 / 3.0, 1 / 3.0, 1 / 3.0}})), "softmax(z, 1)");
  check(close(z.softmax(-1), sm), "z.softmax(-1)");
  check(close(torch::log_softmax(z, 1), sm.log()) && close(z.log_softmax(1).exp(), sm), "log_softmax");
  check(close(torch::softmax(z, 0).sum(0), torch::ones({3})), "softmax(z, 0) sums to one");

  check(torch::allclose(m, m + 1e-9) && !torch::allclose(m, m + 1e-3), "allclose");
  check(m.allclose(m * 1.0000001, 1e-5, 1e-8), "Tensor::allclose(other, rtol, atol)");
  check(torch::equal(m, m.clone()) && !m.equal(m + 1), "equal");
}

// ---------------------------------------------------------------------------------------------------
void linalg() {
  auto A = torch::tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto B = torch::tensor({{5.0, 6.0}, {7.0, 8.0}});
  auto AB = torch::tensor({{19.0, 22.0}, {43.0, 50.0}});
  auto BA = torch::tensor({{23.0, 34.0}, {31.0, 46.0}});
  check(close(A.mm(B), AB) && close(torch::mm(A, B), AB), "mm");
  check(close(torch::matmul(A, B), AB) && close(A.matmul(B), AB), "matmul 2-d");
  check(close(A.matmul(torch::tensor({1.0, 1.0})), torch::tensor({3.0, 7.0})), "matmul matrix-vector");
  check(close(torch::matmul(torch::tensor({1.0, 1.0}), A), torch::tensor({4.0, 6.0})), "matmul vector-matrix");
  auto batch = torch::bmm(torch::stack({A, B}), torch::stack({B, A}));
  check(has_sizes(batch, {2, 2, 2}) && close(batch[0], AB) && close(batch[1], BA), "bmm");
  check(close(torch::stack({A, B}).bmm(torch::stack({B, A})), batch), "Tensor::bmm");
  auto bc = torch::matmul(torch::stack({A, B}), A);
  check(close(bc[0], A.mm(A)) && close(bc[1], B.mm(A)), "matmul broadcasts batch dims");
  check(close(torch::matmul(A, B.t()), A.mm(B.t())), "matmul of a transposed operand");

  auto a = torch::arange(24, torch::kFloat64).view({2, 3, 4}) / 10;  // [b, g, i]
  auto w = torch::arange(60, torch::kFloat64).view({3, 4, 5}) / 7;   // [g, i, o]
  auto e = torch::einsum("bgi,gio->bgo", {a, w});
  std::vector<torch::Tensor> per_group;
  for (int64_t g = 0; g < 3; ++g) per_group.push_back(a.select(1, g).mm(w[g]));
  check(has_sizes(e, {2, 3, 5}) && close(e, torch::stack(per_group, 1)), "einsum bgi,gio->bgo == per-group mm");
  check(close(e, a.transpose(0, 1).bmm(w).transpose(0, 1)), "einsum bgi,gio->bgo == bmm");
  check(close(torch::einsum("ij,jk->ik", {A, B}), AB), "einsum ij,jk->ik");
  check(close(torch::einsum("ij->ji", {A}), A.t()), "einsum ij->ji");
}

}  // namespace

int main() {
  section("creation", creation);
  section("views", views);
  section("cat_stack", cat_stack);
  section("arithmetic", arithmetic);
  section("reductions", reductions);
  section("linalg", linalg);
  return finish("tensor");
}
