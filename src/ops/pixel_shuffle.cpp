// pixel_shuffle and pixel_unshuffle: a reshape that splits a dim into factors, a permute, and a
// reshape that joins them, so autograd differentiates them through those views.
#include "cohort/ops/pixel_shuffle.h"

#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// The leading dims [*] of [*, C, H, W].
Shape leading(const Tensor& x) { return Shape(x.sizes().begin(), x.sizes().end() - 3); }

void check_input(const char* op, const Tensor& x, const char* factor_name, int64_t factor) {
  detail::check_defined(op, x);
  COHORT_CHECK(x.dim() >= 3, op, ": expected an input of at least 3 dims [*, C, H, W], got shape ", x.sizes());
  COHORT_CHECK(factor > 0, op, ": ", factor_name, " must be positive, got ", factor);
}

// x with its last perm.size() dims permuted by perm (the leading dims stay).
Tensor permute_tail(const Tensor& x, std::initializer_list<int64_t> perm) {
  const int64_t lead = x.dim() - static_cast<int64_t>(perm.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t p : perm) dims.push_back(lead + p);
  return x.permute(dims);
}

Shape with_tail(Shape lead, std::initializer_list<int64_t> tail) {
  lead.insert(lead.end(), tail);
  return lead;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t r) {
  const char* op = "pixel_shuffle";
  check_input(op, self, "upscale_factor", r);
  const int64_t C = self.size(-3), H = self.size(-2), W = self.size(-1);
  COHORT_CHECK(C % (r * r) == 0, op, ": expected the channels (dim -3) of input ", self.sizes(),
               " to be divisible by upscale_factor^2 = ", r * r, ", got ", C);
  const int64_t c = C / (r * r);
  const Shape lead = leading(self);
  // [*, c, r, r, H, W] -> [*, c, H, r, W, r]
  const Tensor split = self.reshape(with_tail(lead, {c, r, r, H, W}));
  return permute_tail(split, {0, 3, 1, 4, 2}).reshape(with_tail(lead, {c, H * r, W * r}));
}

Tensor pixel_unshuffle(const Tensor& self, int64_t r) {
  const char* op = "pixel_unshuffle";
  check_input(op, self, "downscale_factor", r);
  const int64_t C = self.size(-3), H = self.size(-2), W = self.size(-1);
  COHORT_CHECK(H % r == 0 && W % r == 0, op, ": expected the height and width (dims -2, -1) of input ", self.sizes(),
               " to be divisible by downscale_factor = ", r, ", got ", H, " and ", W);
  const Shape lead = leading(self);
  // [*, C, H / r, r, W / r, r] -> [*, C, r, r, H / r, W / r]
  const Tensor split = self.reshape(with_tail(lead, {C, H / r, r, W / r, r}));
  return permute_tail(split, {0, 2, 4, 1, 3}).reshape(with_tail(lead, {C * r * r, H / r, W / r}));
}

}  // namespace cohort
