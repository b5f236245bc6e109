// The trainer's run state: the input is the "cohort.run" metadata (JSON) of a checkpoint whose
// weights and optimizer state are valid, read by app::read_checkpoint (format, config, progress)
// and applied by app::restore_checkpoint (schedule state, the generator's state).
#include "cohort/core/error.h"
#include "cohort/io/checkpoint.h"
#include "fuzz_util.h"

#include "app/run_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  fuzz::TinyRun run;
  const auto path = fuzz::scratch_dir() / "checkpoints" / "step-00000001.safetensors";
  std::filesystem::create_directories(path.parent_path());
  try {
    io::save_checkpoint(path, *run.model, run.optimizer.get(),
                        {{"cohort.run", std::string(reinterpret_cast<const char*>(data), size)}});
  } catch (const Error&) {
    return 0;  // not UTF-8: such metadata cannot be written, so it cannot be read either
  }
  try {
    const app::Checkpoint c = app::read_checkpoint(fuzz::scratch_dir());
    app::restore_checkpoint(c, *run.model, run.optimizer.get(), run.schedule.get());
    (void)rand({2});  // the restored generator works
  } catch (const Error&) {
  }
  return 0;
}
