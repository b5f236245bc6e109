// The padding layers: forward is cohort::pad in the layer's mode; PyTorch's reprs.
#include "cohort/nn/padding.h"

#include <ostream>
#include <type_traits>

#include "cohort/ops/padding.h"
#include "python_repr.h"

namespace cohort::nn {

namespace {

template <class Options>
constexpr bool has_value = std::is_same_v<Options, ConstantPadOptions<Options::dims>> ||
                           std::is_same_v<Options, ZeroPadOptions<Options::dims>>;

}  // namespace

template <class Options>
Tensor PadImpl<Options>::forward(const Tensor& input) {
  const IntArrayRef padding = options.padding();
  if constexpr (has_value<Options>) return cohort::pad(input, padding, Options::mode, options.value());
  else return cohort::pad(input, padding, Options::mode);
}

template <class Options>
void PadImpl<Options>::pretty_print(std::ostream& os) const {
  os << this->name() << "(";
  // ZeroPad's value is always 0, and PyTorch does not print it.
  if constexpr (std::is_same_v<Options, ConstantPadOptions<Options::dims>>)
    os << "padding=" << options.padding() << ", value=" << detail::python_repr(options.value());
  else
    os << options.padding();
  os << ")";
}

template class PadImpl<ReflectionPad1dOptions>;
template class PadImpl<ReflectionPad2dOptions>;
template class PadImpl<ReflectionPad3dOptions>;
template class PadImpl<ReplicationPad1dOptions>;
template class PadImpl<ReplicationPad2dOptions>;
template class PadImpl<ReplicationPad3dOptions>;
template class PadImpl<ZeroPad1dOptions>;
template class PadImpl<ZeroPad2dOptions>;
template class PadImpl<ZeroPad3dOptions>;
template class PadImpl<ConstantPad1dOptions>;
template class PadImpl<ConstantPad2dOptions>;
template class PadImpl<ConstantPad3dOptions>;

}  // namespace cohort::nn
