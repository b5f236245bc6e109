// The trainer's checkpoint files: io::save_checkpoint plus the run's state as JSON metadata.
#include "app/run_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/io/checkpoint.h"
#include "cohort/io/safetensors.h"

namespace cohort::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRunKey = "cohort.run";
constexpr int kFormat = 1;

nlohmann::json scheduler_json(const optim::LRScheduler* scheduler) {
  if (!scheduler) return nullptr;
  optim::LRSchedulerState s = scheduler->state_dict();
  return {{"last_epoch", s.last_epoch}, {"step_count", s.step_count}, {"base_lrs", s.base_lrs},
          {"last_lrs", s.last_lrs}};
}

// "step-00000938.safetensors" → 938; -1 for other names (temp files of a save in progress among them).
int64_t step_of(const fs::path& file) {
  const std::string name = file.filename().string(), prefix = "step-", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

}  // namespace

fs::path save_run_checkpoint(const fs::path& run_dir, const TrainConfig& config, const TrainProgress& p,
                             const nn::Module& model, const optim::Optimizer& optimizer,
                             const optim::LRScheduler* scheduler) {
  const fs::path dir = run_dir / "checkpoints";
  std::error_code ec;
  fs::create_directories(dir, ec);
  COHORT_CHECK(!ec, "cohort train: cannot create the checkpoint directory ", dir.string(), ": ", ec.message());
  nlohmann::json run = {
      {"format", kFormat},
      {"config", to_json(config)},
      {"step", p.step},
      {"epoch", p.loader.epoch},
      {"batch", p.loader.batch},
      {"loss_sum", p.loss_sum},
      {"correct", p.correct},
      {"seen", p.seen},
      {"epoch_seconds", p.epoch_seconds},
      {"elapsed_seconds", p.elapsed_seconds},
      {"scheduler", scheduler_json(scheduler)},
      {"rng", default_generator().get_state()},
  };
  char name[48];
  std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(p.step));
  const fs::path path = dir / name;
  io::save_checkpoint(path, model, &optimizer, {{kRunKey, run.dump()}});

  // Only after the new one is safely in place are old ones deleted, and the temp files of saves that
  // a killed run left behind (Note [Atomic writes]: "<name>.tmp.<pid>").
  auto all = list_checkpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(config.keep_checkpoints) < all.size(); ++i) fs::remove(all[i], ec);
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("step-", 0) == 0 && file.find(".safetensors.tmp.") != std::string::npos) stale.push_back(entry.path());
  }
  for (const auto& file : stale) fs::remove(file, ec);
  return path;
}

std::vector<fs::path> list_checkpoints(const fs::path& run_dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir / "checkpoints", ec)) {
    int64_t step = step_of(entry.path());
    if (step >= 0) found.emplace_back(step, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [step, path] : found) paths.push_back(path);
  return paths;
}

Checkpoint read_checkpoint(const fs::path& path) {
  fs::path file = path;
  COHORT_CHECK(fs::exists(path), "cohort: ", path.string(),
               " does not exist (expected a run directory or a checkpoint file)");
  if (fs::is_directory(path)) {
    auto all = list_checkpoints(path);
    COHORT_CHECK(!all.empty(), "cohort: no checkpoint in ", path.string(), " (looked for ",
                 (path / "checkpoints" / "step-*.safetensors").string(), ")");
    file = all.back();
  }
  const io::Metadata metadata = io::load_safetensors_metadata(file);
  auto it = metadata.find(kRunKey);
  COHORT_CHECK(it != metadata.end(), "cohort: ", file.string(),
               " is not a cohort training checkpoint (no '", kRunKey, "' metadata)");
  Checkpoint c;
  c.path = file;
  const std::string where = "cohort: " + file.string() + ": malformed run state in the checkpoint: ";
  try {
    const nlohmann::json run = nlohmann::json::parse(it->second);
    COHORT_CHECK(run.is_object() && run.contains("format") && run.at("format") == kFormat, "cohort: ", file.string(),
                 ": checkpoint format ", run.is_object() && run.contains("format") ? run.at("format").dump() : "(none)",
                 " is not supported (this cohort reads format ", kFormat, ")");
    c.config = train_config_from_json(run.at("config"));
    TrainProgress& p = c.progress;
    p.step = integer_at(run, "step", where);
    p.loader.epoch = integer_at(run, "epoch", where);
    p.loader.batch = integer_at(run, "batch", where);
    p.loss_sum = run.at("loss_sum");
    p.correct = integer_at(run, "correct", where);
    p.seen = integer_at(run, "seen", where);
    p.epoch_seconds = run.at("epoch_seconds");
    p.elapsed_seconds = run.at("elapsed_seconds");
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + e.what());
  }
  return c;
}

void restore_checkpoint(const Checkpoint& checkpoint, nn::Module& model, optim::Optimizer* optimizer,
                        optim::LRScheduler* scheduler) {
  const io::Metadata metadata = io::load_checkpoint(checkpoint.path, model, optimizer);
  const std::string where = "cohort: " + checkpoint.path.string() + ": malformed run state in the checkpoint: ";
  try {
    auto found = metadata.find(kRunKey);
    COHORT_CHECK(found != metadata.end(), "cohort: ", checkpoint.path.string(),
                 " is not a cohort training checkpoint (no '", kRunKey, "' metadata)");
    const nlohmann::json run = nlohmann::json::parse(found->second);
    if (scheduler) {
      const nlohmann::json& s = run.at("scheduler");
      COHORT_CHECK(!s.is_null(), "cohort: ", checkpoint.path.string(), " has no scheduler state but the run uses one");
      optim::LRSchedulerState state;
      state.last_epoch = integer_at(s, "last_epoch", where + "scheduler: ");
      state.step_count = integer_at(s, "step_count", where + "scheduler: ");
      state.base_lrs = s.at("base_lrs").get<std::vector<double>>();
      state.last_lrs = s.at("last_lrs").get<std::vector<double>>();
      scheduler->load_state_dict(state);
    }
    default_generator().set_state(run.at("rng").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + e.what());
  }
}

}  // namespace cohort::app
