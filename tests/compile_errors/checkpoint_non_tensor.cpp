// flags: -std=c++17
// expect: utils::checkpoint: fn must return a Tensor or a std::vector<Tensor>
// A checkpointed function's result is what its node hands gradients to: it must be tensors.
#include <cohort/utils/checkpoint.h>

int main() {
  cohort::Tensor x;
  cohort::utils::checkpoint([](const cohort::Tensor& t) { return t.dim(); }, x);
}
