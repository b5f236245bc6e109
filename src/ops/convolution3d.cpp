// conv3d and conv_transpose3d, composed of one 2-d convolution each, so that they run on the 2-d
// kernels (oneDNN for float32) and autograd differentiates them to any order through the 2-d
// convolution's own nodes. Arguments arrive checked (convolution.cpp's conv_nd/conv_transpose_nd).
// N batch, C input channels, O output channels, G groups; D H W input, P Q R output; kD kH kW kernel.
#include <vector>

#include "cohort/ops/convolution.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/shape.h"
#include "ops/convolution_internal.h"

namespace cohort::detail::conv {

// Note [3-d convolution as a 2-d one]
// Output depth p of a 3-d convolution reads input depths p * sD - padD + kd * dilD for kd < kD. Taking
// those kD depth slices for every p (strided slices of the depth-padded input) and stacking them
// gives, per (n, p), a 2-d image of kD * C channels; the weight's kD taps become channels too
// ([O, C / G, kD, ...] as [O, kD * C / G, ...], group by group), so one conv2d over the N * P images
// computes every output depth at once. The stack copies the input kD / sD times: the price of running
// on the 2-d kernels (a depth tap that oneDNN's 3-d convolution would loop over).
Tensor conv3d_as_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const ExpandingArray<3>& stride,
                        const std::array<int64_t, 3>& lo, const std::array<int64_t, 3>& hi,
                        const ExpandingArray<3>& dilation, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), kD = w.size(2), Cg = C / groups;
  // Depth padding always, and H/W padding too when its two sides differ ("same" with an even kernel).
  const bool symmetric = lo[1] == hi[1] && lo[2] == hi[2];
  std::vector<int64_t> pad{0, 0, 0, 0, lo[0], hi[0]};
  if (!symmetric) pad = {lo[2], hi[2], lo[1], hi[1], lo[0], hi[0]};
  bool any = false;
  for (int64_t v : pad) any = any || v != 0;
  const Tensor xp = any ? constant_pad_nd(x, pad) : x;
  const int64_t H = xp.size(3), W = xp.size(4);
  const int64_t P = (xp.size(2) - dilation[0] * (kD - 1) - 1) / stride[0] + 1;
  std::vector<Tensor> taps;
  for (int64_t kd = 0; kd < kD; ++kd)
    taps.push_back(slice(xp, 2, kd * dilation[0], kd * dilation[0] + (P - 1) * stride[0] + 1, stride[0]));
  // [N, C, kD, P, H, W] -> [N, P, G, kD, C / G, H, W] -> [N P, G kD C / G, H, W]
  const Tensor images = stack(taps, 2)
                            .reshape({N, groups, Cg, kD, P, H, W})
                            .permute({0, 4, 1, 3, 2, 5, 6})
                            .reshape({N * P, groups * kD * Cg, H, W});
  const Tensor w2 = w.permute({0, 2, 1, 3, 4}).reshape({O, kD * Cg, w.size(3), w.size(4)});
  const std::vector<int64_t> hw_pad = symmetric ? std::vector<int64_t>{lo[1], lo[2]} : std::vector<int64_t>{0, 0};
  const Tensor y = conv2d(images, w2, bias, {stride[1], stride[2]}, hw_pad, {dilation[1], dilation[2]}, groups);
  return y.reshape({N, P, O, y.size(2), y.size(3)}).permute({0, 2, 1, 3, 4}).contiguous();
}

// Note [3-d transposed convolution as a 2-d one]
// Input depth d and tap kd of a transposed convolution add to output depth d * sD + kd * dilD - padD.
// One conv_transpose2d over the N * D depth slices, with the weight's kD taps as output channels
// ([C, O / G, kD, ...] as [C, kD * O / G, ...], group by group), gives each (d, kd) contribution; each
// tap's contributions are then spread along depth with stride sD (zeros between), shifted by
// kd * dilD, summed over taps, and the padding cut from both ends (output_padding less at the end).
Tensor conv_transpose3d_as_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                                            const ExpandingArray<3>& stride, const ExpandingArray<3>& padding,
                                            const ExpandingArray<3>& output_padding,
                                            const ExpandingArray<3>& dilation, int64_t groups, const Shape& out_sizes) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2), kD = w.size(2), Og = w.size(1);
  const Tensor slices = x.permute({0, 2, 1, 3, 4}).reshape({N * D, C, x.size(3), x.size(4)});
  const Tensor w2 = w.permute({0, 2, 1, 3, 4}).reshape({C, kD * Og, w.size(3), w.size(4)});
  // The H and W output sizes ask for their output_padding; the 2-d op checks it against stride/dilation.
  const Tensor y = conv_transpose2d(slices, w2, {}, {stride[1], stride[2]}, {padding[1], padding[2]},
                                    {output_padding[1], output_padding[2]}, groups, {dilation[1], dilation[2]});
  const int64_t Hy = y.size(2), Wy = y.size(3);
  // [N D, G kD O / G, H', W'] -> [N, D, G, kD, O / G, H', W'] -> per tap [N, G O / G, D, H', W']
  const Tensor per_tap = y.reshape({N, D, groups, kD, Og, Hy, Wy});
  const int64_t full = (D - 1) * stride[0] + dilation[0] * (kD - 1) + 1 + output_padding[0];
  const int64_t spread = (D - 1) * stride[0] + 1;
  Tensor sum;
  for (int64_t kd = 0; kd < kD; ++kd) {
    Tensor t = select(per_tap, 3, kd).permute({0, 2, 3, 1, 4, 5}).reshape({N, groups * Og, D, Hy, Wy});
    if (stride[0] > 1) {  // d -> d * sD with zeros between: [.., D, sD, ..] flattened, the tail cut
      t = constant_pad_nd(t.unsqueeze(3), {0, 0, 0, 0, 0, stride[0] - 1});
      t = t.reshape({N, groups * Og, D * stride[0], Hy, Wy}).narrow(2, 0, spread);
    }
    const int64_t before = kd * dilation[0];
    t = constant_pad_nd(t, {0, 0, 0, 0, before, full - spread - before});
    sum = sum.defined() ? sum + t : t;
  }
  Tensor out = sum.narrow(2, padding[0], out_sizes[2]);
  if (bias.defined()) out = out + bias.view({1, -1, 1, 1, 1});
  return out.contiguous();
}

}  // namespace cohort::detail::conv
