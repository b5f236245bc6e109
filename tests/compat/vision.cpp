// The libtorch-port promise for the 1-d and 3-d pools, 3-d convolutions and the vision layers: a
// small video classifier (Conv3d, MaxPool3d, AdaptiveAvgPool3d, Linear), the 1-d
// pools over a sequence, ConvTranspose3d as conv3d's adjoint, a sub-pixel upscaling head
// (PixelShuffle, PixelUnshuffle), Upsample, Unfold / Fold, and a spatial transformer (affine_grid,
// grid_sample), with hand-worked values (compat.h has the rules).
#include "compat.h"

using namespace compat;
namespace F = torch::nn::functional;

namespace {

// Deterministic values: 0.3 * sin(0.37 * k + offset), k the flat index.
torch::Tensor wave(std::vector<int64_t> sizes, double offset) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat64).mul(0.37).add(offset).sin().mul(0.3).view(sizes);
}

torch::Tensor values(std::vector<double> v) { return torch::tensor(v, torch::kFloat64); }

// [N, 3, 8, 16, 16] clips -> 5 classes.
struct VideoNet : torch::nn::Module {
  VideoNet()
      : conv1(torch::nn::Conv3dOptions(3, 8, {3, 3, 3}).padding(1)),
        conv2(torch::nn::Conv3dOptions(8, 16, {1, 3, 3}).stride({1, 2, 2}).padding({0, 1, 1}).groups(2)),
        pool(torch::nn::MaxPool3dOptions(2)),
        gap(torch::nn::AdaptiveAvgPool3dOptions({1, 1, 1})),
        fc(16, 5) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("pool", pool);
    register_module("gap", gap);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = pool(torch::relu(conv1(x)));  // [N, 8, 4, 8, 8]
    x = torch::relu(conv2(x));        // [N, 16, 4, 4, 4]
    return fc(gap(x).flatten(1));
  }
  torch::nn::Conv3d conv1, conv2;
  torch::nn::MaxPool3d pool;
  torch::nn::AdaptiveAvgPool3d gap;
  torch::nn::Linear fc;
};

void video_net() {
  auto net = std::make_shared<VideoNet>();
  auto params = net->named_parameters();
  check(params.size() == 6, "two convolutions and a linear layer, each with weight and bias");
  check(has_sizes(params["conv1.weight"], {8, 3, 3, 3, 3}), "Conv3d weight is [out, in, kD, kH, kW]");
  check(has_sizes(params["conv2.weight"], {16, 4, 1, 3, 3}), "grouped Conv3d weight is [out, in / groups, ...]");
  auto clip = wave({2, 3, 8, 16, 16}, 0.1).to(torch::kFloat32);
  auto logits = net->forward(clip);
  check(has_sizes(logits, {2, 5}), "clips [2, 3, 8, 16, 16] -> logits [2, 5]");
  logits.sum().backward();
  check(net->conv1->weight.grad().defined() && has_sizes(net->conv1->weight.grad(), {8, 3, 3, 3, 3}),
        "the first convolution gets a gradient");
  check(net->conv1->weight.grad().abs().sum().item<double>() > 0, "and it is not zero");
}

void pools_1d() {
  auto x = torch::arange(10, torch::kFloat64).view({1, 1, 10});
  torch::nn::MaxPool1d max_pool(torch::nn::MaxPool1dOptions(3).stride(2).padding(1));
  auto [v, i] = max_pool->forward_with_indices(x);
  check(close(v.flatten(), values({1, 3, 5, 7, 9})), "MaxPool1d(3, stride 2, padding 1) values");
  check(i.flatten().equal(torch::tensor(std::vector<int64_t>{1, 3, 5, 7, 9})), "and indices");
  auto avg = F::avg_pool1d(x, F::AvgPool1dFuncOptions(3).stride(2).padding(1));
  check(close(avg.flatten(), values({1.0 / 3, 2, 4, 6, 8})), "avg_pool1d counts the padding by default");
  // ceil_mode adds a last window [9, 11] that starts inside the input; its divisor is the window
  // clipped to the padded input (2), not the kernel.
  auto ceil = F::avg_pool1d(x, F::AvgPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true));
  check(close(ceil.flatten(), values({1.0 / 3, 2, 4, 6, 8, 4.5})), "ceil_mode's last window");
  auto exclude = F::avg_pool1d(x, F::AvgPool1dFuncOptions(3).stride(2).padding(1).count_include_pad(false));
  check(near(exclude.flatten()[0].item<double>(), 0.5), "count_include_pad(false) divides by the real elements");
  check(close(torch::nn::AdaptiveAvgPool1d(4)(x).flatten(), values({1, 3, 6, 8})), "AdaptiveAvgPool1d windows");
  auto [am, ai] = F::adaptive_max_pool1d_with_indices(x, F::AdaptiveMaxPool1dFuncOptions(4));
  check(close(am.flatten(), values({2, 4, 7, 9})), "adaptive_max_pool1d values");
  check(ai.flatten().equal(torch::tensor(std::vector<int64_t>{2, 4, 7, 9})), "and indices");
  check(has_sizes(F::max_pool1d(torch::ones({4, 9}), F::MaxPool1dFuncOptions(2)), {4, 4}), "unbatched [C, L]");
}

void pools_3d() {
  auto x = torch::arange(64, torch::kFloat64).view({1, 1, 4, 4, 4});  // x[d][h][w] = 16 d + 4 h + w
  auto [v, i] = torch::nn::MaxPool3d(2)->forward_with_indices(x);
  check(close(v.flatten(), values({21, 23, 29, 31, 53, 55, 61, 63})), "MaxPool3d(2): each block's far corner");
  check(close(i.flatten().to(torch::kFloat64), v.flatten()), "indices are flat positions in the volume");
  auto xg = x.clone().requires_grad_(true);
  auto avg = F::avg_pool3d(xg, F::AvgPool3dFuncOptions(2));
  check(close(avg.flatten(), values({10.5, 12.5, 18.5, 20.5, 42.5, 44.5, 50.5, 52.5})), "avg_pool3d block means");
  avg.sum().backward();
  check(close(xg.grad(), torch::full({1, 1, 4, 4, 4}, 0.125, torch::kFloat64)), "its gradient spreads 1/8");
  auto ceil = F::max_pool3d(x, F::MaxPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true));
  check(has_sizes(ceil, {1, 1, 3, 3, 3}), "ceil_mode keeps a window that starts inside the input");
  check(near(ceil[0][0][0][0][0].item<double>(), 21) && near(ceil[0][0][2][2][2].item<double>(), 63),
        "its first and last windows");
  check(near(torch::nn::AdaptiveAvgPool3d(1)(x).item<double>(), 31.5), "AdaptiveAvgPool3d(1) is the mean");
  auto [am, ai] = torch::nn::AdaptiveMaxPool3d(torch::nn::AdaptiveMaxPool3dOptions({1, 2, 2}))->forward_with_indices(x);
  check(close(am.flatten(), values({53, 55, 61, 63})), "AdaptiveMaxPool3d({1, 2, 2}): the deepest corners");
  check(close(ai.flatten().to(torch::kFloat64), am.flatten()), "and their flat indices");
}

void conv_3d() {
  // All-ones 2x2x2 kernel: each output is a block sum; the first block holds 16 d + 4 h + w for
  // d, h, w in {0, 1}: 4 * 16 + 4 * 4 + 4 * 1 = 84.
  auto x = torch::arange(64, torch::kFloat64).view({1, 1, 4, 4, 4});
  auto w = torch::ones({1, 1, 2, 2, 2}, torch::kFloat64);
  auto y = F::conv3d(x, w, F::Conv3dFuncOptions().stride(2));
  check(has_sizes(y, {1, 1, 2, 2, 2}), "stride 2 halves each dim");
  check(near(y.flatten()[0].item<double>(), 84), "the first block's sum");
  check(near(y.flatten()[7].item<double>(), 84 + 8 * 42), "the last block is shifted by 8 * (32 + 8 + 2)");
  // A kernel one deep is conv2d on each depth slice.
  auto v = wave({2, 4, 3, 6, 5}, 0.2);
  auto k = wave({6, 2, 1, 3, 3}, 0.7);
  auto y3 = F::conv3d(v, k, F::Conv3dFuncOptions().padding({0, 1, 1}).groups(2));
  for (int64_t d = 0; d < 3; ++d) {
    auto y2 = F::conv2d(v.select(2, d), k.select(2, 0), F::Conv2dFuncOptions().padding(1).groups(2));
    check(close(y3.select(2, d), y2, 1e-10), "kD = 1 is conv2d per depth slice");
  }
  check(has_sizes(F::conv3d(v, wave({3, 4, 2, 2, 2}, 0.1), F::Conv3dFuncOptions().padding(torch::kSame)), {2, 3, 3, 6, 5}),
        "padding kSame keeps the size");
  // conv_transpose3d is conv3d's adjoint: <conv3d(a, w), b> = <a, conv_transpose3d(b, w)>.
  auto a = wave({1, 4, 5, 6, 5}, 0.3), wt = wave({3, 4, 3, 2, 3}, 0.9);
  auto opts = F::Conv3dFuncOptions().stride({2, 1, 2}).padding({1, 0, 1}).dilation({1, 2, 1});
  auto ca = F::conv3d(a, wt, opts);
  auto b = wave(ca.sizes().vec(), 1.1);
  auto tb = F::conv_transpose3d(b, wt, F::ConvTranspose3dFuncOptions().stride({2, 1, 2}).padding({1, 0, 1}).dilation({1, 2, 1}));
  check(has_sizes(tb, {1, 4, 5, 6, 5}), "the transpose maps back to the input's size");
  check(near((ca * b).sum().item<double>(), (a * tb).sum().item<double>(), 1e-9), "conv_transpose3d is the adjoint");
  torch::nn::ConvTranspose3d up(torch::nn::ConvTranspose3dOptions(4, 2, 4).stride(2).padding(1));
  check(has_sizes(up->weight, {4, 2, 4, 4, 4}), "ConvTranspose3d weight is [in, out, kD, kH, kW]");
  check(has_sizes(up(torch::ones({1, 4, 3, 5, 5})), {1, 2, 6, 10, 10}), "ConvTranspose3d doubles each dim");
}

void sub_pixel() {
  auto x = torch::arange(16, torch::kFloat64).view({1, 4, 2, 2});
  torch::nn::PixelShuffle shuffle(torch::nn::PixelShuffleOptions(2));
  auto y = shuffle(x);
  check(has_sizes(y, {1, 1, 4, 4}), "PixelShuffle(2): [1, 4, 2, 2] -> [1, 1, 4, 4]");
  check(close(y[0][0][0], values({0, 4, 1, 5})), "out[h r + i][w r + j] = in[i r + j][h][w]");
  check(close(y[0][0][3], values({10, 14, 11, 15})), "the last row");
  check(torch::nn::PixelUnshuffle(2)(y).equal(x), "PixelUnshuffle undoes it");
  check(F::pixel_unshuffle(F::pixel_shuffle(x, F::PixelShuffleFuncOptions(2)), F::PixelUnshuffleFuncOptions(2)).equal(x),
        "and so do the functional forms");
}

void upsample() {
  auto x = torch::arange(4, torch::kFloat64).view({1, 1, 2, 2});
  torch::nn::Upsample nearest(torch::nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest));
  auto y = nearest(x);
  check(has_sizes(y, {1, 1, 4, 4}), "Upsample nearest x2");
  check(close(y[0][0][1], values({0, 0, 1, 1})) && close(y[0][0][2], values({2, 2, 3, 3})), "each pixel repeated");
  torch::nn::Upsample bilinear(
      torch::nn::UpsampleOptions().size(std::vector<int64_t>{3, 3}).mode(torch::kBilinear).align_corners(true));
  auto z = bilinear(x);
  check(near(z[0][0][1][1].item<double>(), 1.5) && near(z[0][0][0][1].item<double>(), 0.5),
        "bilinear with aligned corners: midpoints");
}

void unfold_fold() {
  auto x = torch::arange(16, torch::kFloat64).view({1, 1, 4, 4});
  torch::nn::Unfold unfold(torch::nn::UnfoldOptions(2).stride(2));
  auto cols = unfold(x);
  check(has_sizes(cols, {1, 4, 4}), "Unfold(2, stride 2): four blocks of four");
  check(close(cols[0].select(1, 0), values({0, 1, 4, 5})), "column 0 is the first block");
  check(close(cols[0].select(1, 3), values({10, 11, 14, 15})), "column 3 the last");
  torch::nn::Fold fold(torch::nn::FoldOptions({4, 4}, {2, 2}).stride(2));
  check(fold(cols).equal(x), "Fold puts non-overlapping blocks back");
  // Overlapping blocks add up: folding unfolded ones counts the blocks that cover each pixel.
  auto ones = torch::ones({1, 1, 4, 4}, torch::kFloat64);
  auto counts = F::fold(F::unfold(ones, F::UnfoldFuncOptions(3).padding(1)), F::FoldFuncOptions({4, 4}, {3, 3}).padding(1));
  check(close(counts[0][0][0], values({4, 6, 6, 4})) && close(counts[0][0][1], values({6, 9, 9, 6})),
        "corners 4, edges 6, inside 9");
  auto xg = x.clone().requires_grad_(true);
  F::unfold(xg, F::UnfoldFuncOptions(3).padding(1)).sum().backward();
  check(close(xg.grad(), counts), "unfold's gradient of ones is the same count");
}

// A spatial transformer: affine_grid of the identity samples the image back; a shift of one pixel
// moves the columns, with zeros or the border column coming in.
void spatial_transformer() {
  auto x = wave({2, 3, 5, 6}, 0.4);
  auto identity = torch::tensor(std::vector<double>{1, 0, 0, 0, 1, 0}, torch::kFloat64).view({1, 2, 3}).repeat({2, 1, 1});
  auto grid = F::affine_grid(identity, {2, 3, 5, 6}, /*align_corners=*/false);
  check(has_sizes(grid, {2, 5, 6, 2}), "affine_grid: [N, H, W, 2]");
  check(near(grid[0][0][0][0].item<double>(), -5.0 / 6) && near(grid[0][4][5][1].item<double>(), 4.0 / 5),
        "pixel centres without align_corners");
  auto same = F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(torch::kBilinear).padding_mode(torch::kZeros).align_corners(false));
  check(close(same, x, 1e-12), "the identity transform samples the image back");
  auto shift = torch::tensor(std::vector<double>{1, 0, 2.0 / 5, 0, 1, 0}, torch::kFloat64).view({1, 2, 3}).repeat({2, 1, 1});
  auto shifted_grid = F::affine_grid(shift, {2, 3, 5, 6}, /*align_corners=*/true);
  auto zeros = F::grid_sample(x, shifted_grid, F::GridSampleFuncOptions().align_corners(true));
  check(close(zeros.narrow(3, 0, 5), x.narrow(3, 1, 5), 1e-12), "a one-pixel shift reads the next column");
  check(zeros.narrow(3, 5, 1).abs().max().item<double>() < 1e-12, "zeros come in at the edge");
  auto border = F::grid_sample(x, shifted_grid, F::GridSampleFuncOptions().padding_mode(torch::kBorder).align_corners(true));
  check(close(border.narrow(3, 5, 1), x.narrow(3, 5, 1), 1e-12), "kBorder repeats the last column");
  auto nearest = F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(torch::kNearest).align_corners(false));
  check(nearest.equal(x), "nearest at the pixel centres is exact");
  // Gradients reach the image and theta.
  auto xg = x.clone().requires_grad_(true);
  auto theta = shift.clone().requires_grad_(true);
  F::grid_sample(xg, F::affine_grid(theta, {2, 3, 5, 6}, true), F::GridSampleFuncOptions().align_corners(true))
      .sum()
      .backward();
  check(xg.grad().defined() && near(xg.grad().sum().item<double>(), 2 * 3 * 5 * 5), "each in-image sample passes 1");
  check(theta.grad().defined() && has_sizes(theta.grad(), {2, 2, 3}), "theta gets a gradient");
}

}  // namespace

int main() {
  section("3-d video classifier", video_net);
  section("1-d pools", pools_1d);
  section("3-d pools", pools_3d);
  section("3-d convolutions", conv_3d);
  section("PixelShuffle", sub_pixel);
  section("Upsample", upsample);
  section("Unfold and Fold", unfold_fold);
  section("affine_grid and grid_sample", spatial_transformer);
  return finish("vision");
}
