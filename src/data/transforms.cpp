// Transforms as plain loops over contiguous data: a Fashion-MNIST epoch calls each 60000 times, and a
// loop over 784 pixels costs less than dispatching a single tensor op.
#include "cohort/data/transforms.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/transform_draws.h"

namespace cohort::data::transforms {

namespace {

using detail::draw_below;
using detail::draw_unit;

// Rows of contiguous [..., H, W] tensors, `out` = `in` reversed; T only carries the element size.
template <class T>
void reverse_rows(const Tensor& in, const Tensor& out) {
  const int64_t w = in.size(-1), rows = w == 0 ? 0 : in.numel() / w;
  const T* src = static_cast<const T*>(in.data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  for (int64_t r = 0; r < rows; ++r, src += w, dst += w)
    for (int64_t x = 0; x < w; ++x) dst[x] = src[w - 1 - x];
}

template <class T>
void normalize(const T* in, T* out, int64_t channels, int64_t plane, const std::vector<double>& mean,
               const std::vector<double>& stdev) {
  for (int64_t c = 0; c < channels; ++c) {
    // Subtract then divide in T, as torchvision does, so results match it to the last bit.
    const T m = static_cast<T>(mean[c]), s = static_cast<T>(stdev[c]);
    for (int64_t i = 0; i < plane; ++i) out[c * plane + i] = (in[c * plane + i] - m) / s;
  }
}

}  // namespace

data::Transform ToTensor() {
  return [](const Tensor& x, Generator&) -> Tensor {
    if (x.is_floating_point()) {
      COHORT_CHECK(x.dim() == 3, "ToTensor: a float input must already be CHW [C, H, W], got shape ", x.sizes());
      return x;
    }
    COHORT_CHECK(x.dtype() == kUInt8, "ToTensor: expected a uint8 image [H, W, C] or a float [C, H, W] tensor, got ",
                 x.dtype(), " ", x.sizes());
    COHORT_CHECK(x.dim() == 2 || x.dim() == 3, "ToTensor: expected a uint8 image [H, W, C] or [H, W], got shape ",
                 x.sizes());
    const int64_t h = x.size(0), w = x.size(1), c = x.dim() == 3 ? x.size(2) : 1;
    const int64_t sh = x.stride(0), sw = x.stride(1), sc = x.dim() == 3 ? x.stride(2) : 0;
    // v / 255.f for every byte value, computed once: a division per pixel, as torchvision does,
    // would give the same floats more slowly.
    static const auto lut = [] {
      std::array<float, 256> t{};
      for (int v = 0; v < 256; ++v) t[v] = static_cast<float>(v) / 255.0f;
      return t;
    }();
    Tensor out = empty({c, h, w}, TensorOptions(kFloat32));
    const uint8_t* in = x.data_ptr<uint8_t>();
    float* o = out.data_ptr<float>();
    if (c == 1 && sw == 1 && sh == w) {  // grey, contiguous (MNIST): one pass
      for (int64_t i = 0; i < h * w; ++i) o[i] = lut[in[i]];
      return out;
    }
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) *o++ = lut[in[i * sh + j * sw + k * sc]];
    return out;
  };
}

namespace detail {

Tensor normalize_parameter(ArrayRef<double> mean, ArrayRef<double> stddev, bool is_mean) {
  COHORT_CHECK(!mean.empty() && mean.size() == stddev.size(),
               "Normalize: mean and std need one value per channel, got ", mean.size(), " means and ",
               stddev.size(), " stds");
  for (size_t c = 0; c < stddev.size(); ++c)
    COHORT_CHECK(stddev[c] != 0, "Normalize: std[", c, "] is 0, which would divide by zero");
  const ArrayRef<double> values = is_mean ? mean : stddev;
  const auto channels = static_cast<int64_t>(values.size());
  Tensor t = empty({channels, 1, 1}, TensorOptions(kFloat32));
  for (int64_t c = 0; c < channels; ++c) t.data_ptr<float>()[c] = static_cast<float>(values[c]);
  return t;
}

Tensor normalize_broadcast(const Tensor& input, const Tensor& mean, const Tensor& stddev) {
  COHORT_CHECK(input.defined(), "Normalize: the input tensor is undefined");
  const int64_t channels = mean.size(0);
  // The common case, a float32 image or batch of images whose channel dim matches, as one loop;
  // float32 throughout, so it gives libtorch's values to the bit. Anything else broadcasts as ops.
  if (input.dtype() == kFloat32 && input.dim() >= 3 && (channels == 1 || input.size(-3) == channels)) {
    Tensor in = input.contiguous();
    Tensor out = empty(in.sizes(), in.options());
    const int64_t plane = in.size(-1) * in.size(-2), c_in = in.size(-3);
    const int64_t planes = plane == 0 ? 0 : in.numel() / plane;
    const float* m = mean.data_ptr<float>();
    const float* s = stddev.data_ptr<float>();
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t c = channels == 1 ? 0 : p % c_in;
      for (int64_t i = 0; i < plane; ++i) dst[p * plane + i] = (src[p * plane + i] - m[c]) / s[c];
    }
    return out;
  }
  return input.sub(mean).div(stddev);
}

Tensor normalize_chw(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& stdev) {
  COHORT_CHECK(x.is_floating_point() && x.dim() == 3, "Normalize: expected a float [C, H, W] tensor, got ",
               x.dtype(), " ", x.sizes(), "; hint: apply ToTensor() first");
  COHORT_CHECK(x.size(0) == static_cast<int64_t>(mean.size()), "Normalize: the input has ", x.size(0),
               " channels but mean and std have ", mean.size(), " values, got shape ", x.sizes());
  Tensor in = x.contiguous();
  Tensor out = empty(in.sizes(), in.options());
  const int64_t plane = in.size(1) * in.size(2);
  if (in.dtype() == kFloat32)
    normalize(in.data_ptr<float>(), out.data_ptr<float>(), in.size(0), plane, mean, stdev);
  else
    normalize(in.data_ptr<double>(), out.data_ptr<double>(), in.size(0), plane, mean, stdev);
  return out;
}

}  // namespace detail

data::Transform RandomCrop(int64_t size, int64_t padding) {
  COHORT_CHECK(size > 0 && padding >= 0, "RandomCrop: size must be positive and padding non-negative, got size ",
               size, " and padding ", padding);
  return [size, padding](const Tensor& x, Generator& gen) -> Tensor {
    COHORT_CHECK(x.dim() >= 2, "RandomCrop: expected an image [..., H, W], got shape ", x.sizes());
    const int64_t h = x.size(-2), w = x.size(-1);
    COHORT_CHECK(h + 2 * padding >= size && w + 2 * padding >= size, "RandomCrop: cannot crop ", size, "x", size,
                 " from an image of ", h, "x", w, " padded by ", padding, ", got shape ", x.sizes());
    // Window origin in padded coordinates; row before column, as torchvision draws them.
    const int64_t top = draw_below(gen, h + 2 * padding - size + 1);
    const int64_t left = draw_below(gen, w + 2 * padding - size + 1);

    Tensor in = x.contiguous();
    std::vector<int64_t> sizes(in.sizes().begin(), in.sizes().end());
    sizes[sizes.size() - 2] = sizes[sizes.size() - 1] = size;
    Tensor out = zeros(sizes, in.options());  // the padding stays zero
    const int64_t planes = h * w == 0 ? 0 : in.numel() / (h * w);
    const auto es = static_cast<int64_t>(in.element_size());
    // Output columns [x0, x1) come from input columns starting at left + x0 - padding.
    const int64_t x0 = std::max<int64_t>(0, padding - left), x1 = std::min<int64_t>(size, w + padding - left);
    const int64_t y0 = std::max<int64_t>(0, padding - top), y1 = std::min<int64_t>(size, h + padding - top);
    if (x0 >= x1 || y0 >= y1) return out;  // the window lies in the padding
    const auto* src = static_cast<const char*>(in.data_ptr());
    auto* dst = static_cast<char*>(out.data_ptr());
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t y = y0; y < y1; ++y)
        std::memcpy(dst + ((p * size + y) * size + x0) * es,
                    src + ((p * h + top + y - padding) * w + left + x0 - padding) * es, (x1 - x0) * es);
    return out;
  };
}

data::Transform RandomHorizontalFlip(double p) {
  COHORT_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: p must be a probability in [0, 1], got ", p);
  return [p](const Tensor& x, Generator& gen) -> Tensor {
    COHORT_CHECK(x.dim() >= 2, "RandomHorizontalFlip: expected an image [..., H, W], got shape ", x.sizes());
    if (!(draw_unit(gen) < p)) return x;
    if (x.dtype() == kUInt8 && x.dim() == 3) {  // an HWC image: W is dim 1; rows of W pixels of C bytes
      Tensor in = x.contiguous();
      Tensor out = empty(in.sizes(), in.options());
      const int64_t h = in.size(0), w = in.size(1), c = in.size(2);
      const uint8_t* src = in.data_ptr<uint8_t>();
      uint8_t* dst = out.data_ptr<uint8_t>();
      for (int64_t y = 0; y < h; ++y)
        for (int64_t i = 0; i < w; ++i) std::memcpy(dst + (y * w + i) * c, src + (y * w + w - 1 - i) * c, c);
      return out;
    }
    Tensor in = x.contiguous();
    Tensor out = empty(in.sizes(), in.options());
    switch (in.element_size()) {
      case 1: reverse_rows<uint8_t>(in, out); break;
      case 4: reverse_rows<uint32_t>(in, out); break;
      case 8: reverse_rows<uint64_t>(in, out); break;
      default: COHORT_ASSERT(false);
    }
    return out;
  };
}

data::Transform Compose(std::vector<data::Transform> transforms) {
  for (size_t i = 0; i < transforms.size(); ++i)
    COHORT_CHECK(static_cast<bool>(transforms[i]), "Compose: transform ", i, " of ", transforms.size(),
                 " is empty (a default-constructed Transform)");
  return [transforms = std::move(transforms)](const Tensor& x, Generator& gen) -> Tensor {
    Tensor y = x;
    for (const auto& t : transforms) y = t(y, gen);
    return y;
  };
}

}  // namespace cohort::data::transforms
