// io::load_checkpoint into a small model and Adam: the safetensors file, the "model/" and
// "optimizer/" tensors against the model's and optimizer's, the optimizer's name and its scalars
// (JSON in the metadata), load_state_dict's checks.
#include "cohort/core/error.h"
#include "cohort/io/checkpoint.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = cohort::fuzz::write_input("input.safetensors", data, size);
  cohort::fuzz::TinyRun run;  // fresh every time: an input's outcome must not depend on the last one
  try {
    cohort::io::load_checkpoint(path, *run.model, run.optimizer.get());
    run.model->forward(cohort::ones({1, 3})).sum().backward();
    run.optimizer->step();
  } catch (const cohort::Error&) {
  }
  return 0;
}
