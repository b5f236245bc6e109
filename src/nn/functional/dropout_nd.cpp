// dropout1d/2d/3d: the rank check and the unbatched case around cohort::feature_dropout.
#include "cohort/nn/functional/dropout_nd.h"

#include "cohort/ops/feature_dropout.h"

namespace cohort::nn::functional {

namespace {

const char* letters(int64_t spatial) {
  return spatial == 1 ? "[N, C, L]" : spatial == 2 ? "[N, C, H, W]" : "[N, C, D, H, W]";
}

Tensor dropout_nd(const char* name, int64_t spatial, const Tensor& x, double p, bool training, Generator* generator) {
  COHORT_CHECK(x.defined(), name, ": the input is undefined");
  COHORT_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, name, ": expected a ", spatial + 1,
               "-d (unbatched) or ", spatial + 2, "-d (batched) input ", letters(spatial), ", got input of shape ",
               x.sizes());
  COHORT_CHECK(p >= 0 && p <= 1, name, ": dropout probability has to be between 0 and 1, but got ", p);
  if (x.dim() == spatial + 2) return feature_dropout(x, p, training, generator);
  return feature_dropout(x.unsqueeze(0), p, training, generator).squeeze(0);
}

}  // namespace

Tensor dropout1d(const Tensor& x, double p, bool training, Generator* generator) {
  return dropout_nd("dropout1d", 1, x, p, training, generator);
}
Tensor dropout2d(const Tensor& x, double p, bool training, Generator* generator) {
  return dropout_nd("dropout2d", 2, x, p, training, generator);
}
Tensor dropout3d(const Tensor& x, double p, bool training, Generator* generator) {
  return dropout_nd("dropout3d", 3, x, p, training, generator);
}

}  // namespace cohort::nn::functional
