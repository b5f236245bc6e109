// The trainer's checkpoint files: io::save_checkpoint plus the run's state as JSON metadata.
#include "app/run_checkpoint.h"
#include "app/json_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/io/checkpoint.h"
#include "cohort/io/safetensors.h"
#include "cohort/ops/creation.h"

#include "app/run_dir.h"
#include "app/schedule.h"

namespace cohort::app {

namespace fs = std::filesystem;

namespace {

// A float32 state tensor as JSON: its shape and its bytes in hex (exact, unlike decimal text).
nlohmann::json state_to_json(const Tensor& t) {
  const Tensor c = t.to(kFloat32).contiguous();
  const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(static_cast<size_t>(c.numel()) * 8);
  for (size_t i = 0; i < static_cast<size_t>(c.numel()) * 4; ++i) {
    hex += kHex[bytes[i] >> 4];
    hex += kHex[bytes[i] & 15];
  }
  return {{"shape", c.sizes().vec()}, {"hex", hex}};
}

Tensor state_from_json(const nlohmann::json& j, const std::string& where) {
  const std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
  const std::string hex = j.at("hex").get<std::string>();
  int64_t n = 1;
  for (int64_t s : shape) {
    COHORT_CHECK(s >= 0 && s < (int64_t{1} << 31), where, "a carried state's shape is invalid");
    n *= s;
  }
  COHORT_CHECK(static_cast<int64_t>(hex.size()) == n * 8, where, "a carried state of shape ", IntArrayRef(shape),
               " needs ", n * 8, " hex digits, got ", hex.size());
  Tensor t = empty(shape, kFloat32);
  auto* bytes = static_cast<unsigned char*>(t.data_ptr());
  auto digit = [&](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    throw Error(where + "a carried state holds a character that is not a hex digit");
  };
  for (size_t i = 0; i < hex.size() / 2; ++i) bytes[i] = static_cast<unsigned char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  return t;
}

constexpr const char* kRunKey = "cohort.run";
constexpr int kFormat = 1;

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


// A path or text from a file, ready to quote in a message (escape_text: no raw control characters).
std::string shown(const fs::path& path) { return escape_text(path.string()); }

std::string checkpoint_name(int64_t step) {
  char name[48];
  std::snprintf(name, sizeof name, "step-%08lld.safetensors", static_cast<long long>(step));
  return name;
}

// A checkpoint's run state (its "cohort.run" metadata) after the whole file is verified: it parses,
// its checksum holds and its floating-point tensors are finite. Throws naming the file.
Checkpoint verified_checkpoint(const fs::path& file) {
  for (const auto& item : io::load_safetensors(file)) {
    const Tensor& t = item.value();
    if (auto bad = first_non_finite(t.contiguous()))
      throw Error(cohort::detail::str("cohort: ", shown(file), ": tensor '", escape_text(item.key()), "' holds ", bad->second,
                                      " (element ", bad->first, "); a checkpoint with weights that are not finite "
                                      "cannot be used"));
  }
  const io::Metadata metadata = io::load_safetensors_metadata(file);
  auto it = metadata.find(kRunKey);
  COHORT_CHECK(it != metadata.end(), "cohort: ", shown(file),
               " is not a cohort training checkpoint (no '", kRunKey, "' metadata)");
  Checkpoint c;
  c.path = file;
  const std::string where = "cohort: " + shown(file) + ": malformed run state in the checkpoint: ";
  try {
    const nlohmann::json run = nlohmann::json::parse(it->second);
    COHORT_CHECK(run.is_object() && run.contains("format") && run.at("format") == kFormat, "cohort: ", shown(file),
                 ": checkpoint format ",
                 run.is_object() && run.contains("format") ? escape_text(run.at("format").dump()) : "(none)",
                 " is not supported (this cohort reads format ", kFormat, ")");
    c.run_id = run.value("run_id", "");
    try {
      c.config = train_config_from_json(run.at("config"));
    } catch (const Error& e) {  // its message starts "cohort: a checkpoint's ...": say which one
      throw Error("cohort: " + shown(file) + ": " + escape_text(std::string(e.what()).substr(8)));
    }
    c.config.validate(file);  // values a flag would have been refused for name the file, not the flag
    if (run.contains("data")) c.data = data_spec_from_json(run.at("data"), where);
    TrainProgress& p = c.progress;
    p.step = integer_at(run, "step", where);
    p.loader.epoch = integer_at(run, "epoch", where);
    p.loader.batch = integer_at(run, "batch", where);
    p.loss_sum = run.at("loss_sum");
    p.correct = integer_at(run, "correct", where);
    p.seen = integer_at(run, "seen", where);
    p.epoch_seconds = run.at("epoch_seconds");
    p.elapsed_seconds = run.at("elapsed_seconds");
    if (run.contains("carried"))
      for (const nlohmann::json& s : run.at("carried")) p.carried.push_back(state_from_json(s, where));
    if (run.contains("grad_scaler"))
      for (const auto& [key, value] : run.at("grad_scaler").items()) p.grad_scaler[key] = value.get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + escape_text(e.what()));
  }
  return c;
}

// The model's parameters and buffers against the file's "model/..." tensors, so that a checkpoint of
// another model (or a damaged one) is named with what differs, before io::load_checkpoint's library
// message (which suggests strict=false, an option this program does not have).
void check_fits(const fs::path& file, const nn::Module& model, const std::string& model_name) {
  std::map<std::string, Shape> in_file;
  for (const auto& item : io::load_safetensors(file))
    if (item.key().rfind("model/", 0) == 0) in_file.emplace(item.key().substr(6), item.value().sizes());
  std::vector<std::string> problems;
  for (const auto& item : model.state_dict()) {
    auto found = in_file.find(item.key());
    if (found == in_file.end()) {
      problems.push_back("'" + item.key() + "' is missing");
    } else if (found->second != item.value().sizes()) {
      problems.push_back(cohort::detail::str("'", item.key(), "' is ", IntArrayRef(found->second), " in the file, ",
                                             item.value().sizes(), " in the model"));
    }
    if (found != in_file.end()) in_file.erase(found);
  }
  for (const auto& [name, shape] : in_file)
    problems.push_back(cohort::detail::str("'", escape_text(name), "' is not in the model"));
  if (problems.empty()) return;
  std::string list;
  for (size_t i = 0; i < problems.size() && i < 5; ++i) list += (i ? "; " : "") + problems[i];
  if (problems.size() > 5) list += "; and " + std::to_string(problems.size() - 5) + " more";
  throw Error("cohort: " + shown(file) + " does not hold the weights of the " + model_name +
              " model its run configuration names: " + list +
              "; hint: the file is damaged or was not written by cohort train");
}

// A checkpoint of another run in this one's directory is never used: the run's id is run.json's.
void check_run_id(const Checkpoint& c, const fs::path& run_dir) {
  const std::optional<RunIdentity> identity = read_run_identity(run_dir);
  if (!identity) return;  // a directory written before runs had ids, or a checkpoint on its own
  COHORT_CHECK(c.run_id == identity->run_id, "cohort: ", shown(c.path), " belongs to another run (run id '",
               escape_text(c.run_id), "') than the one in ", shown(run_dir), " ('", escape_text(identity->run_id),
               "' in ", shown(run_dir / kRunFile), "); hint: remove it, or start over with --overwrite");
}

// The run id in a checkpoint's header, nullopt when the header or its run state does not parse (the
// full check reports those).
std::optional<std::string> run_id_in_header(const fs::path& file) {
  try {
    const io::Metadata metadata = io::load_safetensors_metadata(file);
    auto it = metadata.find(kRunKey);
    if (it == metadata.end()) return std::nullopt;
    const nlohmann::json run = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    if (!run.is_object() || !run.contains("run_id") || !run["run_id"].is_string()) return std::nullopt;
    return run["run_id"].get<std::string>();
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::pair<int64_t, double>> first_non_finite(const Tensor& t) {
  const int64_t n = t.numel();
  if (t.dtype() == kFloat32) {
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(p[i])) return std::make_pair(i, static_cast<double>(p[i]));
  } else if (t.dtype() == kFloat64) {
    const double* p = t.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(p[i])) return std::make_pair(i, p[i]);
  }
  return std::nullopt;
}

void check_finite(const nn::Module& model, const TrainProgress& p, const fs::path& run_dir) {
  for (const auto& item : model.state_dict()) {
    if (!item.value().is_floating_point()) continue;
    if (auto bad = first_non_finite(item.value().detach().cpu().contiguous()))
      throw NotFiniteError(cohort::detail::str("cohort train: the model's '", item.key(), "' holds ", bad->second,
                                               " (element ", bad->first, ") after step ", p.step,
                                               "; training stopped without writing ", checkpoint_name(p.step)));
  }
}

fs::path save_run_checkpoint(const fs::path& run_dir, const std::string& run_id, const TrainConfig& config,
                             const DataSpec& data, const TrainProgress& p, const nn::Module& model, const optim::Optimizer& optimizer,
                             const Schedule* schedule, const optim::AveragedModel* ema) {
  check_finite(model, p, run_dir);
  const fs::path dir = run_dir / "checkpoints";
  std::error_code ec;
  fs::create_directories(dir, ec);
  COHORT_CHECK(!ec, "cohort train: cannot create the checkpoint directory ", dir.string(), ": ", ec.message());
  // What cannot be read back is not written: a checkpoint's data description is checked as resume reads it.
  const nlohmann::json data_json = to_json(data);
  data_spec_from_json(data_json, "cohort train: cannot describe the data in a checkpoint: ");
  nlohmann::json run = {
      {"format", kFormat},
      {"run_id", run_id},
      {"config", to_json(config)},
      {"data", data_json},
      {"step", p.step},
      {"epoch", p.loader.epoch},
      {"batch", p.loader.batch},
      {"loss_sum", p.loss_sum},
      {"correct", p.correct},
      {"seen", p.seen},
      {"epoch_seconds", p.epoch_seconds},
      {"elapsed_seconds", p.elapsed_seconds},
      {"scheduler", schedule ? schedule->state() : nlohmann::json()},
      {"rng", default_generator().get_state()},
  };
  io::ModuleMap others;
  if (ema) {
    run["ema_updates"] = ema->n_averaged();
    others["ema"] = &ema->module();
  }
  if (!p.grad_scaler.empty()) run["grad_scaler"] = p.grad_scaler;
  if (!p.carried.empty()) {
    nlohmann::json carried = nlohmann::json::array();
    for (const Tensor& t : p.carried) carried.push_back(state_to_json(t));
    run["carried"] = carried;
  }
  const fs::path path = dir / checkpoint_name(p.step);
  // A path that is not UTF-8 is stored with U+FFFD (resume then names the path it cannot find).
  io::save_checkpoint(path, model, &optimizer, {{kRunKey, json_text(run)}}, others);

  // Only after the new one is safely in place are old ones deleted, and the temp files that killed
  // processes left behind (Note [Atomic writes]: "<name>.tmp.<pid>"); a live process's temp file may
  // be a save in progress.
  prune_checkpoints(run_dir, config.keep_checkpoints);
  remove_dead_temp_files(run_dir);
  return path;
}

void prune_checkpoints(const fs::path& run_dir, int64_t keep) {
  const auto all = list_checkpoints(run_dir);
  std::error_code ec;
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 1)) < all.size(); ++i) fs::remove(all[i], ec);
}

void set_aside_checkpoints_after(const fs::path& run_dir, int64_t step, bool talk) {
  for (const fs::path& file : list_checkpoints(run_dir)) {
    if (step_of(file) <= step) continue;
    fs::path aside = file;
    aside += ".skipped";
    std::error_code ec;
    fs::rename(file, aside, ec);
    COHORT_CHECK(!ec, "cohort train: cannot rename ", file.string(), " to ", aside.string(), ": ", ec.message());
    if (talk)
      std::cerr << "cohort: set aside " << file.string() << " as " << aside.filename().string()
                << " (newer than the checkpoint the run resumes from)\n";
  }
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

Checkpoint read_checkpoint(const fs::path& path, bool talk) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // no throw for a symlink loop: the reader names it
  COHORT_CHECK(fs::exists(status) || (ec && ec != std::errc::no_such_file_or_directory), "cohort: ", shown(path),
               " does not exist (expected a run directory or a checkpoint file)");
  if (!fs::is_directory(status)) {
    Checkpoint c = verified_checkpoint(path);
    if (path.parent_path().filename() == "checkpoints") check_run_id(c, path.parent_path().parent_path());
    return c;
  }
  const auto all = list_checkpoints(path);
  COHORT_CHECK(!all.empty(), "cohort: no checkpoint in ", shown(path), " (looked for ",
               shown(path / "checkpoints" / "step-*.safetensors"), ")");
  // Every checkpoint in the directory must be the run's, not only the one that is used.
  for (const fs::path& file : all) {
    Checkpoint header;
    header.path = file;
    if (std::optional<std::string> id = run_id_in_header(file)) {
      header.run_id = *id;
      check_run_id(header, path);
    }
  }
  std::string skipped;
  for (auto file = all.rbegin(); file != all.rend(); ++file) {
    std::optional<Checkpoint> c;
    try {
      c = verified_checkpoint(*file);
    } catch (const Error& e) {
      if (talk) std::cerr << "cohort: skipping " << shown(*file) << ": " << escape_text(e.what()) << "\n";
      skipped += "\n  " + escape_text(e.what());
      continue;
    }
    check_run_id(*c, path);
    c->from_run_directory = true;
    if (talk && file != all.rbegin())
      std::cerr << "cohort: using " << file->string() << ", the newest intact checkpoint in " << path.string() << "\n";
    return *c;
  }
  throw Error("cohort: no intact checkpoint in " + shown(path) + ":" + skipped);
}

namespace {

// `checkpoint`, or the newest older checkpoint of its run that is intact and fits `model` (see
// restore_checkpoint).
Checkpoint fitting_checkpoint(const Checkpoint& checkpoint, const nn::Module& model) {
  try {
    check_fits(checkpoint.path, model, checkpoint.config.model);
    return checkpoint;
  } catch (const Error& e) {
    if (!checkpoint.from_run_directory) throw;
    const fs::path run_dir = checkpoint.path.parent_path().parent_path();
    const auto all = list_checkpoints(run_dir);
    bool older = false;
    for (auto file = all.rbegin(); file != all.rend(); ++file) {
      if (!older) {
        older = *file == checkpoint.path;
        continue;
      }
      try {
        Checkpoint c = verified_checkpoint(*file);
        check_run_id(c, run_dir);
        check_fits(*file, model, checkpoint.config.model);
        c.from_run_directory = true;
        std::cerr << escape_text(e.what()) << "\ncohort: using " << shown(*file) << ", the newest checkpoint in "
                  << shown(run_dir) << " that fits the model\n";
        return c;
      } catch (const Error&) {  // damaged too: an older one may do
      }
    }
    throw Error(std::string(e.what()) + "; no older checkpoint in " + shown(run_dir) + " fits the model either");
  }
}

}  // namespace

Checkpoint restore_checkpoint(const Checkpoint& requested, nn::Module& model, optim::Optimizer* optimizer,
                              Schedule* schedule, optim::AveragedModel* ema) {
  const Checkpoint checkpoint = fitting_checkpoint(requested, model);
  io::Metadata metadata;
  try {
    io::MutableModuleMap others;
    if (ema) others["ema"] = ema->module_ptr().get();
    metadata = io::load_checkpoint(checkpoint.path, model, optimizer, others);
  } catch (const Error& e) {  // the optimizer's state: the library's message, with the file named first
    throw Error("cohort: " + shown(checkpoint.path) + ": " + e.what());
  }
  const std::string where = "cohort: " + shown(checkpoint.path) + ": malformed run state in the checkpoint: ";
  try {
    auto found = metadata.find(kRunKey);
    COHORT_CHECK(found != metadata.end(), "cohort: ", shown(checkpoint.path),
                 " is not a cohort training checkpoint (no '", kRunKey, "' metadata)");
    const nlohmann::json run = nlohmann::json::parse(found->second);
    if (schedule) schedule->load_state(run.at("scheduler"), where);
    if (ema) ema->set_n_averaged(integer_at(run, "ema_updates", where));
    try {
      default_generator().set_state(run.at("rng").get<std::string>());
    } catch (const Error& e) {
      throw Error(where + escape_text(e.what()));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + escape_text(e.what()));
  }
  return checkpoint;
}

Checkpoint restore_weights(const Checkpoint& requested, nn::Module& model) {
  const Checkpoint checkpoint = fitting_checkpoint(requested, model);
  try {
    if (checkpoint.config.ema > 0) io::load_checkpoint_module(checkpoint.path, "ema", model);
    else io::load_checkpoint(checkpoint.path, model, nullptr);
  } catch (const Error& e) {
    throw Error("cohort: " + shown(checkpoint.path) + ": " + e.what());
  }
  return checkpoint;
}

}  // namespace cohort::app
