// Smallest user of an installed cohort: built by run.sh via CMake and via pkg-config.
#include <cohort/cohort.h>

int main() {
  auto x = cohort::ones({2, 3});
  auto y = (x * 2).sum();
  return y.item<float>() == 12.0f ? 0 : 1;
}
