// PixelShuffle, PixelUnshuffle and Upsample: forwards to nn::functional and PyTorch's reprs.
#include "cohort/nn/vision.h"

#include <ostream>

#include "python_repr.h"

namespace cohort::nn {

namespace {

void print_float(std::ostream& os, double v) { os << detail::python_repr(v); }

// One value prints bare, several as a tuple (PyTorch prints the argument as given; libtorch's is
// always a list, and a single value is the common spelling).
template <class T, class Print>
void print_values(std::ostream& os, const std::vector<T>& values, Print print) {
  if (values.size() == 1) return print(os, values[0]);
  os << "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) os << ", ";
    print(os, values[i]);
  }
  os << ")";
}

}  // namespace

Tensor PixelShuffleImpl::forward(const Tensor& input) { return functional::pixel_shuffle(input, options); }
void PixelShuffleImpl::pretty_print(std::ostream& os) const {
  os << "PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}

Tensor PixelUnshuffleImpl::forward(const Tensor& input) { return functional::pixel_unshuffle(input, options); }
void PixelUnshuffleImpl::pretty_print(std::ostream& os) const {
  os << "PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

// libtorch's UpsampleImpl::forward: interpolate without recomputing the scale factor.
Tensor UpsampleImpl::forward(const Tensor& input) {
  return functional::interpolate(input, functional::InterpolateFuncOptions()
                                            .size(options.size())
                                            .scale_factor(options.scale_factor())
                                            .mode(options.mode())
                                            .align_corners(options.align_corners())
                                            .recompute_scale_factor(false));
}

void UpsampleImpl::pretty_print(std::ostream& os) const {
  os << "Upsample(";
  if (options.scale_factor()) {
    os << "scale_factor=";
    print_values(os, *options.scale_factor(), print_float);
  } else {
    os << "size=";
    print_values(os, options.size().value_or(std::vector<int64_t>{}),
                 [](std::ostream& o, int64_t v) { o << v; });
  }
  os << ", mode=" << (options.mode() == InterpolateMode::kNearest ? "nearest" : "bilinear") << ")";
}

}  // namespace cohort::nn
