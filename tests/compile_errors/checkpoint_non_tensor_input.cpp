// flags: -std=c++17
// expect: utils::checkpoint: every input after fn must be a Tensor; capture other values in fn
// The inputs are what backward runs fn again on; other values belong in fn's captures.
#include <cohort/utils/checkpoint.h>

int main() {
  cohort::Tensor x;
  cohort::utils::checkpoint([](const cohort::Tensor& t, double s) { return t * s; }, x, 2.0);
}
