// Padding layers (libtorch's torch::nn::ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d,
// ConstantPad1d/2d/3d and ZeroPad1d/2d/3d):
//   nn::ReflectionPad2d pad(nn::ReflectionPad2dOptions({1, 1, 2, 2}));   // left, right, top, bottom
//   nn::ReplicationPad1d edge(3);                                        // 3 on each side
//   nn::ConstantPad2d border(nn::ConstantPad2dOptions(1, 0.5));
// A D-d layer pads the last D dims of a [C, *] or [N, C, *] input; forward is cohort::pad
// (cohort/ops/padding.h), with its errors. Prints like PyTorch: ReflectionPad2d((1, 1, 2, 2)),
// ConstantPad2d(padding=(1, 1, 1, 1), value=0.5).
#pragma once

#include <iosfwd>
#include <string>
#include <type_traits>

#include "cohort/core/expanding_array.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

namespace detail {

// The options every padding layer has: 2 D amounts, given as one value or as (before, after) pairs
// from the last dim. Setters return the layer's own options type.
template <size_t D, class Self>
struct PadOptionsBase {
  PadOptionsBase(ExpandingArray<D * 2> padding) : padding_(padding) {}  // NOLINT: implicit like libtorch
  Self& padding(ExpandingArray<D * 2> p) { padding_ = p; return static_cast<Self&>(*this); }
  const ExpandingArray<D * 2>& padding() const { return padding_; }
  static constexpr size_t dims = D;

 private:
  ExpandingArray<D * 2> padding_;
};

}  // namespace detail

template <size_t D>
struct ReflectionPadOptions : detail::PadOptionsBase<D, ReflectionPadOptions<D>> {
  using detail::PadOptionsBase<D, ReflectionPadOptions<D>>::PadOptionsBase;
  static constexpr const char* kind = "ReflectionPad";
  static constexpr const char* mode = "reflect";
};

template <size_t D>
struct ReplicationPadOptions : detail::PadOptionsBase<D, ReplicationPadOptions<D>> {
  using detail::PadOptionsBase<D, ReplicationPadOptions<D>>::PadOptionsBase;
  static constexpr const char* kind = "ReplicationPad";
  static constexpr const char* mode = "replicate";
};

template <size_t D>
struct ZeroPadOptions : detail::PadOptionsBase<D, ZeroPadOptions<D>> {
  using detail::PadOptionsBase<D, ZeroPadOptions<D>>::PadOptionsBase;
  static constexpr const char* kind = "ZeroPad";
  static constexpr const char* mode = "constant";
  double value() const { return 0; }
};

template <size_t D>
struct ConstantPadOptions : detail::PadOptionsBase<D, ConstantPadOptions<D>> {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value)
      : detail::PadOptionsBase<D, ConstantPadOptions<D>>(padding), value_(value) {}
  ConstantPadOptions& value(double v) { value_ = v; return *this; }
  double value() const { return value_; }
  static constexpr const char* kind = "ConstantPad";
  static constexpr const char* mode = "constant";

 private:
  double value_;
};

using ReflectionPad1dOptions = ReflectionPadOptions<1>;
using ReflectionPad2dOptions = ReflectionPadOptions<2>;
using ReflectionPad3dOptions = ReflectionPadOptions<3>;
using ReplicationPad1dOptions = ReplicationPadOptions<1>;
using ReplicationPad2dOptions = ReplicationPadOptions<2>;
using ReplicationPad3dOptions = ReplicationPadOptions<3>;
using ZeroPad1dOptions = ZeroPadOptions<1>;
using ZeroPad2dOptions = ZeroPadOptions<2>;
using ZeroPad3dOptions = ZeroPadOptions<3>;
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

// One layer class for every mode and rank; Options says which (src/nn/padding.cpp instantiates the
// twelve).
template <class Options>
class PadImpl : public Cloneable<PadImpl<Options>> {
 public:
  explicit PadImpl(const Options& options_)
      : Cloneable<PadImpl<Options>>(std::string(Options::kind) + std::to_string(Options::dims) + "d"),
        options(options_) {}
  // The options' arguments directly: ReflectionPad2d(1), ConstantPad1d({2, 0}, 0.5).
  template <class... Rest, std::enable_if_t<std::is_constructible_v<Options, ExpandingArray<Options::dims * 2>,
                                                                    Rest...>, int> = 0>
  explicit PadImpl(ExpandingArray<Options::dims * 2> padding, Rest... rest) : PadImpl(Options(padding, rest...)) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  Options options;
};

using ReflectionPad1dImpl = PadImpl<ReflectionPad1dOptions>;
using ReflectionPad2dImpl = PadImpl<ReflectionPad2dOptions>;
using ReflectionPad3dImpl = PadImpl<ReflectionPad3dOptions>;
using ReplicationPad1dImpl = PadImpl<ReplicationPad1dOptions>;
using ReplicationPad2dImpl = PadImpl<ReplicationPad2dOptions>;
using ReplicationPad3dImpl = PadImpl<ReplicationPad3dOptions>;
using ZeroPad1dImpl = PadImpl<ZeroPad1dOptions>;
using ZeroPad2dImpl = PadImpl<ZeroPad2dOptions>;
using ZeroPad3dImpl = PadImpl<ZeroPad3dOptions>;
using ConstantPad1dImpl = PadImpl<ConstantPad1dOptions>;
using ConstantPad2dImpl = PadImpl<ConstantPad2dOptions>;
using ConstantPad3dImpl = PadImpl<ConstantPad3dOptions>;

using ReflectionPad1d = ModuleHolder<ReflectionPad1dImpl>;
using ReflectionPad2d = ModuleHolder<ReflectionPad2dImpl>;
using ReflectionPad3d = ModuleHolder<ReflectionPad3dImpl>;
using ReplicationPad1d = ModuleHolder<ReplicationPad1dImpl>;
using ReplicationPad2d = ModuleHolder<ReplicationPad2dImpl>;
using ReplicationPad3d = ModuleHolder<ReplicationPad3dImpl>;
using ZeroPad1d = ModuleHolder<ZeroPad1dImpl>;
using ZeroPad2d = ModuleHolder<ZeroPad2dImpl>;
using ZeroPad3d = ModuleHolder<ZeroPad3dImpl>;
using ConstantPad1d = ModuleHolder<ConstantPad1dImpl>;
using ConstantPad2d = ModuleHolder<ConstantPad2dImpl>;
using ConstantPad3d = ModuleHolder<ConstantPad3dImpl>;

}  // namespace cohort::nn
