// Printing of the activation layers, as PyTorch's repr.
#include "cohort/nn/activation.h"

#include <ostream>

namespace cohort::nn {

void ReLUImpl::pretty_print(std::ostream& os) const { os << "ReLU(" << (options.inplace() ? "inplace=True" : "") << ")"; }
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << (options.inplace() ? ", inplace=True" : "") << ")";
}
void GELUImpl::pretty_print(std::ostream& os) const {
  os << "GELU(approximate='" << options.approximate() << "')";
}
void SiLUImpl::pretty_print(std::ostream& os) const { os << "SiLU()"; }
void SigmoidImpl::pretty_print(std::ostream& os) const { os << "Sigmoid()"; }
void TanhImpl::pretty_print(std::ostream& os) const { os << "Tanh()"; }
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << options.dim() << ")"; }
void LogSoftmaxImpl::pretty_print(std::ostream& os) const { os << "LogSoftmax(dim=" << options.dim() << ")"; }

}  // namespace cohort::nn
