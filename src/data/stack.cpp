// Stack<Example<>> and Stack<TensorExample>: torch::stack of the examples' tensors, after checks
// that name the offending examples (stack's own message could only name tensor positions).
#include "cohort/data/stack.h"

#include <utility>

#include "cohort/core/error.h"
#include "cohort/ops/shape.h"

namespace cohort::data::transforms {

namespace {

// Stacks `parts`, the `field` ("data" or "target") of each example of a batch.
Tensor stack_field(const char* op, const char* field, std::vector<Tensor>& parts) {
  COHORT_CHECK(!parts.empty(), op, ": the batch is empty; hint: a sampler gives at least one index per batch");
  for (size_t i = 0; i < parts.size(); ++i) {
    COHORT_CHECK(parts[i].defined() && parts[0].defined(), op, ": example ", parts[0].defined() ? i : 0,
                 " of the batch has an undefined ", field, " tensor; hint: every example needs one to be stacked");
    COHORT_CHECK(parts[i].sizes() == parts[0].sizes() && parts[i].dtype() == parts[0].dtype(), op,
                 ": cannot stack the ", field, " of the batch: example 0 has ", parts[0].dtype(), " ",
                 parts[0].sizes(), " but example ", i, " has ", parts[i].dtype(), " ", parts[i].sizes(),
                 "; hint: give every example the same ", field, " shape and dtype (e.g. resize or crop in get())");
  }
  return stack(parts);
}

}  // namespace

Example<> Stack<Example<>>::apply_batch(std::vector<Example<>> examples) {
  std::vector<Tensor> data, targets;
  data.reserve(examples.size());
  targets.reserve(examples.size());
  for (Example<>& e : examples) {
    data.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  Tensor d = stack_field("Stack<Example<>>", "data", data);
  return {std::move(d), stack_field("Stack<Example<>>", "target", targets)};
}

TensorExample Stack<TensorExample>::apply_batch(std::vector<TensorExample> examples) {
  std::vector<Tensor> data;
  data.reserve(examples.size());
  for (TensorExample& e : examples) data.push_back(std::move(e.data));
  return stack_field("Stack<TensorExample>", "data", data);
}

}  // namespace cohort::data::transforms
