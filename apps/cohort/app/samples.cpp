// The captioned grid of test predictions (samples.h), drawn into a uint8 canvas with io::draw_text,
// and the predictions it shows.
#include "app/samples.h"

#include <algorithm>
#include <array>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/data/transforms.h"
#include "cohort/io/image.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"

namespace cohort::app {

namespace {

constexpr int64_t kColumns = 8;
constexpr int64_t kPad = 6;        // around a cell's content
constexpr int64_t kGap = 4;        // between an image and its caption
constexpr int64_t kTarget = 96;    // pixels an image is enlarged towards
constexpr int64_t kMaxLabel = 160; // wider labels drop to font scale 1
constexpr std::array<uint8_t, 3> kGrey{90, 96, 108}, kGreen{22, 140, 40}, kRed{214, 39, 40};

// Copies image [H, W, C] (uint8, C = 1 or 3) into canvas at (top, left), each pixel an s x s square.
void blit(const Tensor& canvas, const Tensor& image, int64_t top, int64_t left, int64_t s) {
  const int64_t h = image.size(0), w = image.size(1), c = image.size(2), cw = canvas.size(1);
  const uint8_t* src = image.data_ptr<uint8_t>();
  uint8_t* dst = canvas.data_ptr<uint8_t>();
  for (int64_t y = 0; y < h * s; ++y)
    for (int64_t x = 0; x < w * s; ++x) {
      const uint8_t* p = src + ((y / s) * w + x / s) * c;
      uint8_t* q = dst + ((top + y) * cw + left + x) * 3;
      for (int64_t k = 0; k < 3; ++k) q[k] = p[c == 1 ? 0 : k];
    }
}

}  // namespace

void write_samples_png(const std::string& path, const Tensor& images, const std::vector<int64_t>& truth,
                       const std::vector<int64_t>& predicted, const std::vector<std::string>& class_names) {
  COHORT_CHECK(images.defined() && images.is_floating_point() && images.dim() == 4 &&
                   (images.size(1) == 1 || images.size(1) == 3),
               "write_samples_png: expected float images [N, C, H, W] with C = 1 or 3, got ",
               images.defined() ? images.describe() : std::string("an undefined tensor"));
  const int64_t n = images.size(0), h = images.size(2), w = images.size(3);
  COHORT_CHECK(n >= 1 && h >= 1 && w >= 1, "write_samples_png: no images to draw, got ", images.sizes());
  COHORT_CHECK(static_cast<int64_t>(truth.size()) == n && static_cast<int64_t>(predicted.size()) == n,
               "write_samples_png: expected one true and one predicted label per image (", n, "), got ",
               truth.size(), " and ", predicted.size());
  auto label = [&](int64_t c) {
    if (class_names.empty()) {
      COHORT_CHECK(c >= 0, "write_samples_png: labels are class indices, got ", c);
      return std::to_string(c);
    }
    COHORT_CHECK(c >= 0 && c < static_cast<int64_t>(class_names.size()), "write_samples_png: label ", c,
                 " is not a class index in [0, ", class_names.size(), ")");
    return class_names[static_cast<size_t>(c)];
  };

  const int64_t s = std::max<int64_t>(1, kTarget / std::max(h, w));
  int64_t widest = 0;
  for (int64_t i = 0; i < n; ++i)
    widest = std::max({widest, io::text_width(label(truth[i]), 2), io::text_width(label(predicted[i]), 2)});
  const int font = widest > kMaxLabel ? 1 : 2;
  if (font == 1) widest /= 2;  // text_width scales exactly
  const int64_t line = 12 * font;
  const int64_t inner_w = std::max(s * w, widest);
  const int64_t cell_w = inner_w + 2 * kPad, cell_h = s * h + 2 * kPad + kGap + 2 * line;
  const int64_t cols = std::min(kColumns, n), rows = (n + cols - 1) / cols;

  Tensor canvas = full({rows * cell_h, cols * cell_w, 3}, 255, TensorOptions(kUInt8));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t top = i / cols * cell_h + kPad, left = i % cols * cell_w + kPad;
    blit(canvas, io::to_uint8_hwc(images[i]), top, left + (inner_w - s * w) / 2, s);
    const std::string t = label(truth[i]), p = label(predicted[i]);
    const int64_t y = top + s * h + kGap;
    io::draw_text(canvas, left + (inner_w - io::text_width(t, font)) / 2, y, t, kGrey, font);
    io::draw_text(canvas, left + (inner_w - io::text_width(p, font)) / 2, y + line, p,
                  truth[i] == predicted[i] ? kGreen : kRed, font);
  }
  io::write_png(path, canvas);
}

std::vector<int64_t> spread_across_classes(const data::IndexedDataset& dataset, int64_t k, int64_t scanned) {
  std::vector<std::vector<int64_t>> by_class;
  for (int64_t i = 0; i < std::min(scanned, dataset.size()); ++i) {
    const auto c = static_cast<size_t>(std::max<int64_t>(dataset.get(i).target.item<int64_t>(), 0));
    if (by_class.size() <= c) by_class.resize(c + 1);
    by_class[c].push_back(i);
  }
  std::vector<int64_t> picked;
  for (size_t round = 0; static_cast<int64_t>(picked.size()) < k; ++round) {
    const size_t before = picked.size();
    for (const auto& indices : by_class)
      if (round < indices.size() && static_cast<int64_t>(picked.size()) < k) picked.push_back(indices[round]);
    if (picked.size() == before) break;
  }
  return picked;
}

void write_prediction_samples(const std::string& path, models::Model& model, const DataSetup& data) {
  std::vector<data::Example<>> picked;
  for (const int64_t i : spread_across_classes(*data.test, 32)) picked.push_back(data.test->get(i));
  const auto n = static_cast<int64_t>(picked.size());
  std::vector<Tensor> shown, inputs;
  std::vector<int64_t> truth;
  Generator unused(0);
  const data::Transform transform = inference_transform(data.spec);
  const data::Transform to_tensor = data::transforms::ToTensor();
  for (const data::Example<>& e : picked) {
    // Images of any size (--dataset folder) are shown at the model's input size.
    Tensor image = e.data;
    if (image.dtype() == kUInt8 && (image.size(0) != data.spec.image_size || image.size(1) != data.spec.image_size))
      image = data::transforms::detail::resize(image, data.spec.image_size, data.spec.image_size);
    shown.push_back(to_tensor(image, unused));
    inputs.push_back(transform(e.data, unused));
    truth.push_back(e.target.item<int64_t>());
  }
  NoGradGuard no_grad;
  model.eval();
  Tensor predicted = model.forward(stack(inputs)).argmax(1).contiguous();
  model.train();
  std::vector<int64_t> pred(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + n);
  write_samples_png(path, stack(shown), truth, pred, data.spec.classes);
}

}  // namespace cohort::app
