// torchvision's image transforms on cohort's two image layouts (uint8 HWC, float CHW): Resize through the
// upsample_bilinear2d op (antialias), crops by copying views, colour adjustments as loops that repeat
// torchvision's float32 arithmetic and its uint8 truncations, so results match it to the byte.
#include "cohort/data/vision_transforms.h"

#include <algorithm>
#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/interpolate.h"
#include "data/transform_draws.h"

namespace cohort::data::transforms {

namespace detail {

namespace {

bool is_hwc(const Tensor& image) { return image.dtype() == kUInt8; }
int64_t h_dim(const Tensor& image) { return is_hwc(image) ? 0 : image.dim() - 2; }

// The image as planes [C, H, W] of float32 (uint8 values 0..255 kept as they are) or of its own float dtype.
Tensor to_planes(const Tensor& image) {
  if (!is_hwc(image)) return image.dim() == 2 ? image.unsqueeze(0).contiguous() : image.contiguous();
  Tensor chw = image.dim() == 2 ? image.unsqueeze(0) : image.permute({2, 0, 1});
  return chw.to(kFloat32).contiguous();
}

// Back to the layout of `like` (uint8: rounded half to even as torch.round, or truncated as .to(uint8),
// then clamped to 0..255, and made HWC again).
Tensor from_planes(const Tensor& planes, const Tensor& like, bool round) {
  if (!is_hwc(like)) return like.dim() == 2 ? planes.squeeze(0) : planes;
  const int64_t c = planes.size(0), h = planes.size(1), w = planes.size(2);
  Tensor out = empty(like.dim() == 2 ? Shape{h, w} : Shape{h, w, c}, TensorOptions(kUInt8));
  const float* src = planes.data_ptr<float>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  for (int64_t k = 0; k < c; ++k)
    for (int64_t i = 0; i < h * w; ++i) {
      float v = round ? std::nearbyint(src[k * h * w + i]) : std::trunc(src[k * h * w + i]);
      dst[i * c + k] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
  return out;
}

}  // namespace

std::array<int64_t, 2> image_size(const char* op, const Tensor& image) {
  COHORT_CHECK(image.defined(), op, ": the image is an undefined tensor");
  if (image.dtype() == kUInt8) {
    COHORT_CHECK(image.dim() == 2 || image.dim() == 3, op, ": expected a uint8 image [H, W, C] or [H, W], got shape ",
                 image.sizes());
  } else {
    COHORT_CHECK(image.is_floating_point() && image.dim() >= 2, op,
                 ": expected a uint8 image [H, W, C] or a float image [C, H, W], got ", image.dtype(), " ",
                 image.sizes());
  }
  const int64_t hd = h_dim(image);
  COHORT_CHECK(image.size(hd) > 0 && image.size(hd + 1) > 0, op, ": the image is empty, got shape ", image.sizes());
  return {image.size(hd), image.size(hd + 1)};
}

Tensor resize(const Tensor& image, int64_t height, int64_t width) {
  image_size("Resize", image);
  COHORT_CHECK(height > 0 && width > 0, "Resize: the output size must be positive, got ", height, "x", width);
  NoGradGuard no_grad;
  Tensor planes = to_planes(image.detach());
  const Shape lead(planes.sizes().begin(), planes.sizes().end() - 2);
  Tensor x = planes.reshape({1, -1, planes.size(-2), planes.size(-1)});
  Tensor y = upsample_bilinear2d(x, {height, width}, false, std::nullopt, std::nullopt, /*antialias=*/true);
  Shape out_shape = lead;
  out_shape.push_back(height);
  out_shape.push_back(width);
  return from_planes(y.reshape(out_shape).contiguous(), image, /*round=*/true);
}

std::array<int64_t, 2> resize_output_size(int64_t h, int64_t w, IntArrayRef size) {
  if (size.size() == 2) return {size[0], size[1]};
  // torchvision: the shorter side becomes `size`, the longer int(size * long / short).
  const int64_t shorter = std::min(h, w), longer = std::max(h, w);
  const auto new_long = static_cast<int64_t>(static_cast<double>(size[0]) * static_cast<double>(longer) /
                                             static_cast<double>(shorter));
  return w <= h ? std::array<int64_t, 2>{new_long, size[0]} : std::array<int64_t, 2>{size[0], new_long};
}

Tensor crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width) {
  image_size("crop", image);
  COHORT_CHECK(height > 0 && width > 0, "crop: the window must be non-empty, got ", height, "x", width);
  const int64_t hd = h_dim(image), h = image.size(hd), w = image.size(hd + 1);
  Shape shape = image.sizes().vec();
  shape[hd] = height, shape[hd + 1] = width;
  const int64_t y0 = std::max<int64_t>(top, 0), y1 = std::min(top + height, h);
  const int64_t x0 = std::max<int64_t>(left, 0), x1 = std::min(left + width, w);
  NoGradGuard no_grad;
  if (y0 == top && x0 == left && y1 - y0 == height && x1 - x0 == width)  // inside: a plain copy of the view
    return image.detach().narrow(hd, top, height).narrow(hd + 1, left, width).contiguous();
  Tensor out = zeros(shape, image.options());
  if (y0 < y1 && x0 < x1)
    out.narrow(hd, y0 - top, y1 - y0).narrow(hd + 1, x0 - left, x1 - x0)
        .copy_(image.detach().narrow(hd, y0, y1 - y0).narrow(hd + 1, x0, x1 - x0));
  return out;
}

Tensor center_crop(const Tensor& image, int64_t height, int64_t width) {
  const auto [h, w] = image_size("CenterCrop", image);
  // torchvision pads (zeros, left/top getting the smaller half) and then crops at round((h - ch) / 2).
  const int64_t pad_top = height > h ? (height - h) / 2 : 0, pad_left = width > w ? (width - w) / 2 : 0;
  const int64_t ph = h + (height > h ? height - h : 0), pw = w + (width > w ? width - w : 0);
  const auto top = static_cast<int64_t>(std::nearbyint(static_cast<double>(ph - height) / 2.0));
  const auto left = static_cast<int64_t>(std::nearbyint(static_cast<double>(pw - width) / 2.0));
  return crop(image, top - pad_top, left - pad_left, height, width);
}

Tensor resized_crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width,
                    int64_t out_height, int64_t out_width) {
  return resize(crop(image, top, left, height, width), out_height, out_width);
}

std::array<int64_t, 4> random_resized_crop_box(int64_t h, int64_t w, std::array<double, 2> scale,
                                               std::array<double, 2> ratio, Generator& gen) {
  const double area = static_cast<double>(h) * static_cast<double>(w);
  const double log_lo = std::log(ratio[0]), log_hi = std::log(ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * draw_uniform(gen, scale[0], scale[1]);
    const double aspect = std::exp(draw_uniform(gen, log_lo, log_hi));
    const auto cw = static_cast<int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto ch = static_cast<int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (cw > 0 && cw <= w && ch > 0 && ch <= h) {
      const int64_t top = draw_below(gen, h - ch + 1);
      const int64_t left = draw_below(gen, w - cw + 1);
      return {top, left, ch, cw};
    }
  }
  // Fallback: the whole image, cut to the nearest allowed aspect ratio, centred.
  const double in_ratio = static_cast<double>(w) / static_cast<double>(h);
  int64_t cw = w, ch = h;
  if (in_ratio < std::min(ratio[0], ratio[1]))
    ch = static_cast<int64_t>(std::nearbyint(static_cast<double>(cw) / std::min(ratio[0], ratio[1])));
  else if (in_ratio > std::max(ratio[0], ratio[1]))
    cw = static_cast<int64_t>(std::nearbyint(static_cast<double>(ch) * std::max(ratio[0], ratio[1])));
  return {(h - ch) / 2, (w - cw) / 2, ch, cw};
}

namespace {

// torchvision's _blend: ratio * a + (1 - ratio) * b, clamped to [0, bound], in T (float32 for uint8).
template <class T>
T blend(T a, T b, T ratio, T one_minus, T bound) {
  return std::clamp(ratio * a + one_minus * b, T(0), bound);
}

// torchvision's rgb_to_grayscale, truncated to integers for uint8 images (its .to(img.dtype)).
template <class T>
T grey_of(T r, T g, T b, bool integral) {
  const T v = T(0.2989) * r + T(0.587) * g + T(0.114) * b;
  return integral ? std::trunc(v) : v;
}

// Runs fn<T>(planes, c, plane size, bound, integral) on the image's planes and converts back
// (truncating, as torchvision's .to(uint8) after a blend).
template <class F>
Tensor adjust(const char* op, const Tensor& image, F&& fn) {
  image_size(op, image);
  Tensor planes = to_planes(image.detach());
  COHORT_CHECK(planes.dim() == 3 && (planes.size(0) == 1 || planes.size(0) == 3), op,
               ": expected an image with 1 or 3 channels, got shape ", image.sizes());
  Tensor out = is_hwc(image) ? planes : planes.clone();  // never write to the input
  const int64_t c = out.size(0), n = out.size(1) * out.size(2);
  const bool integral = is_hwc(image);
  dispatch_floating(out.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    fn(out.data_ptr<T>(), c, n, integral ? T(255) : T(1), integral);
  });
  return from_planes(out, image, /*round=*/false);
}

}  // namespace

Tensor adjust_brightness(const Tensor& image, double factor) {
  COHORT_CHECK(factor >= 0, "adjust_brightness: the factor must be >= 0, got ", factor);
  return adjust("adjust_brightness", image, [&](auto* p, int64_t c, int64_t n, auto bound, bool) {
    using T = std::remove_pointer_t<decltype(p)>;
    const auto r = static_cast<T>(factor), rm = static_cast<T>(1.0 - factor);
    for (int64_t i = 0; i < c * n; ++i) p[i] = blend(p[i], T(0), r, rm, bound);
  });
}

Tensor adjust_contrast(const Tensor& image, double factor) {
  COHORT_CHECK(factor >= 0, "adjust_contrast: the factor must be >= 0, got ", factor);
  return adjust("adjust_contrast", image, [&](auto* p, int64_t c, int64_t n, auto bound, bool integral) {
    using T = std::remove_pointer_t<decltype(p)>;
    double sum = 0;  // the mean grey value of the whole image
    for (int64_t i = 0; i < n; ++i) sum += c == 3 ? grey_of(p[i], p[n + i], p[2 * n + i], integral) : p[i];
    const auto mean = static_cast<T>(sum / static_cast<double>(n));
    const auto r = static_cast<T>(factor), rm = static_cast<T>(1.0 - factor);
    for (int64_t i = 0; i < c * n; ++i) p[i] = blend(p[i], mean, r, rm, bound);
  });
}

Tensor adjust_saturation(const Tensor& image, double factor) {
  COHORT_CHECK(factor >= 0, "adjust_saturation: the factor must be >= 0, got ", factor);
  return adjust("adjust_saturation", image, [&](auto* p, int64_t c, int64_t n, auto bound, bool integral) {
    using T = std::remove_pointer_t<decltype(p)>;
    if (c == 1) return;  // grey: unchanged, as torchvision
    const auto r = static_cast<T>(factor), rm = static_cast<T>(1.0 - factor);
    for (int64_t i = 0; i < n; ++i) {
      const T grey = grey_of(p[i], p[n + i], p[2 * n + i], integral);
      for (int64_t k = 0; k < 3; ++k) p[k * n + i] = blend(p[k * n + i], grey, r, rm, bound);
    }
  });
}

Tensor adjust_hue(const Tensor& image, double factor) {
  COHORT_CHECK(factor >= -0.5 && factor <= 0.5, "adjust_hue: the factor must be in [-0.5, 0.5], got ", factor);
  return adjust("adjust_hue", image, [&](auto* p, int64_t c, int64_t n, auto, bool integral) {
    using T = std::remove_pointer_t<decltype(p)>;
    if (c == 1) return;  // grey: unchanged, as torchvision
    const auto shift = static_cast<T>(factor);
    for (int64_t i = 0; i < n; ++i) {
      // torchvision's _rgb2hsv, its hue shift (Python's %), and _hsv2rgb, step by step in T.
      T r = p[i], g = p[n + i], b = p[2 * n + i];
      if (integral) r = r / T(255), g = g / T(255), b = b / T(255);
      const T maxc = std::max({r, g, b}), minc = std::min({r, g, b});
      const bool eqc = maxc == minc;
      const T cr = maxc - minc;
      const T s = cr / (eqc ? T(1) : maxc);
      const T crd = eqc ? T(1) : cr;
      const T rc = (maxc - r) / crd, gc = (maxc - g) / crd, bc = (maxc - b) / crd;
      const T hr = maxc == r ? bc - gc : T(0);
      const T hg = maxc == g && maxc != r ? T(2) + rc - bc : T(0);
      const T hb = maxc != g && maxc != r ? T(4) + gc - rc : T(0);
      T h = std::fmod((hr + hg + hb) / T(6) + T(1), T(1));
      h = h + shift;
      h = h - std::floor(h);
      const T v = maxc;
      const T fi = std::floor(h * T(6));
      const T f = h * T(6) - fi;
      const int sector = ((static_cast<int>(fi) % 6) + 6) % 6;
      const T pp = std::clamp(v * (T(1) - s), T(0), T(1));
      const T q = std::clamp(v * (T(1) - s * f), T(0), T(1));
      const T t = std::clamp(v * (T(1) - s * (T(1) - f)), T(0), T(1));
      const T rgb[6][3] = {{v, t, pp}, {q, v, pp}, {pp, v, t}, {pp, q, v}, {t, pp, v}, {v, pp, q}};
      for (int k = 0; k < 3; ++k) p[k * n + i] = integral ? rgb[sector][k] * T(255) : rgb[sector][k];
    }
  });
}

Tensor adjust_one(const Tensor& image, int index, const std::array<double, 4>& factors) {
  switch (index) {
    case 0: return adjust_brightness(image, factors[0]);
    case 1: return adjust_contrast(image, factors[1]);
    case 2: return adjust_saturation(image, factors[2]);
    case 3: return adjust_hue(image, factors[3]);
    default: COHORT_CHECK(false, "color_jitter: order holds indices 0..3, got ", index);
  }
  return image;
}

Tensor color_jitter(const Tensor& image, std::array<int, 4> order, std::array<double, 4> factors) {
  Tensor out = image;
  for (int index : order) out = adjust_one(out, index, factors);
  return out;
}

}  // namespace detail

namespace {

std::vector<int64_t> checked_size(const char* op, IntArrayRef size, bool one_is_square) {
  COHORT_CHECK(size.size() == 1 || size.size() == 2, op, ": size must be one value or {height, width}, got ",
               size.size(), " values");
  for (int64_t s : size) COHORT_CHECK(s > 0, op, ": sizes must be positive, got ", size);
  std::vector<int64_t> out = size.vec();
  if (one_is_square && out.size() == 1) out.push_back(out[0]);
  return out;
}

}  // namespace

data::Transform Resize(IntArrayRef size) {
  return [size = checked_size("Resize", size, false)](const Tensor& x, Generator&) -> Tensor {
    const auto [h, w] = detail::image_size("Resize", x);
    const auto [oh, ow] = detail::resize_output_size(h, w, size);
    return detail::resize(x, oh, ow);
  };
}

data::Transform CenterCrop(IntArrayRef size) {
  return [size = checked_size("CenterCrop", size, true)](const Tensor& x, Generator&) -> Tensor {
    return detail::center_crop(x, size[0], size[1]);
  };
}

data::Transform RandomResizedCrop(IntArrayRef size, std::array<double, 2> scale, std::array<double, 2> ratio) {
  COHORT_CHECK(scale[0] > 0 && scale[0] <= scale[1] && ratio[0] > 0 && ratio[0] <= ratio[1],
               "RandomResizedCrop: scale and ratio must be positive ranges {low, high}, got scale {", scale[0], ", ",
               scale[1], "} and ratio {", ratio[0], ", ", ratio[1], "}");
  return [size = checked_size("RandomResizedCrop", size, true), scale, ratio](const Tensor& x, Generator& gen) {
    const auto [h, w] = detail::image_size("RandomResizedCrop", x);
    const auto box = detail::random_resized_crop_box(h, w, scale, ratio, gen);
    return detail::resized_crop(x, box[0], box[1], box[2], box[3], size[0], size[1]);
  };
}

data::Transform ColorJitter(double brightness, double contrast, double saturation, double hue) {
  COHORT_CHECK(brightness >= 0 && contrast >= 0 && saturation >= 0 && hue >= 0 && hue <= 0.5,
               "ColorJitter: brightness, contrast and saturation must be >= 0 and hue in [0, 0.5], got ", brightness,
               ", ", contrast, ", ", saturation, ", ", hue);
  const std::array<double, 4> amount = {brightness, contrast, saturation, hue};
  return [amount](const Tensor& x, Generator& gen) -> Tensor {
    std::array<int, 4> order = {0, 1, 2, 3};
    for (int i = 3; i > 0; --i) std::swap(order[i], order[detail::draw_below(gen, i + 1)]);  // Fisher-Yates
    std::array<double, 4> factors = {1, 1, 1, 0};
    for (int k = 0; k < 3; ++k)
      if (amount[k] > 0) factors[k] = detail::draw_uniform(gen, std::max(0.0, 1 - amount[k]), 1 + amount[k]);
    if (amount[3] > 0) factors[3] = detail::draw_uniform(gen, -amount[3], amount[3]);
    Tensor out = x;
    for (int index : order)
      if (amount[index] > 0) out = detail::adjust_one(out, index, factors);
    return out;
  };
}

}  // namespace cohort::data::transforms
