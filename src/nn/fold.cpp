// Unfold and Fold: forwards to nn::functional and PyTorch's reprs.
#include "cohort/nn/fold.h"

#include <ostream>

namespace cohort::nn {

namespace {

// PyTorch prints the argument as given; an int (equal entries) is the common spelling.
struct Compact {
  const ExpandingArray<2>& a;
};
std::ostream& operator<<(std::ostream& os, Compact c) {
  if (c.a[0] == c.a[1]) return os << c.a[0];
  return os << c.a;
}

}  // namespace

Tensor UnfoldImpl::forward(const Tensor& input) { return functional::unfold(input, options); }
void UnfoldImpl::pretty_print(std::ostream& os) const {
  os << "Unfold(kernel_size=" << Compact{options.kernel_size()} << ", dilation=" << Compact{options.dilation()}
     << ", padding=" << Compact{options.padding()} << ", stride=" << Compact{options.stride()} << ")";
}

Tensor FoldImpl::forward(const Tensor& input) { return functional::fold(input, options); }
void FoldImpl::pretty_print(std::ostream& os) const {
  os << "Fold(output_size=" << Compact{options.output_size()} << ", kernel_size=" << Compact{options.kernel_size()}
     << ", dilation=" << Compact{options.dilation()} << ", padding=" << Compact{options.padding()}
     << ", stride=" << Compact{options.stride()} << ")";
}

}  // namespace cohort::nn
