// TrainConfig: validation and its JSON form.
#include "app/config.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "cohort/io/file.h"
#include "cohort/models/model.h"

#include "app/activation_checkpointing.h"

namespace cohort::app {

const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist", "cifar10", "synthetic", "folder", "csv", "text"};
const std::vector<std::string> kOptimizers = {"sgd", "adam", "adamw", "rmsprop"};
const std::vector<std::string> kSchedulers = {"none", "step", "cosine", "onecycle", "plateau", "cosine-restarts"};
const std::vector<std::string> kPrecisions = {"f32", "bf16", "f16"};

Precision precision_of(const TrainConfig& c) {
  if (c.precision == "bf16") return {.autocast = true, .dtype = kBFloat16, .loss_scaling = false,
                                     .summary = ", bfloat16 autocast"};
  if (c.precision == "f16") return {.autocast = true, .dtype = kHalf, .loss_scaling = true,
                                    .summary = ", float16 autocast with loss scaling"};
  return {.autocast = false, .dtype = kFloat32, .loss_scaling = false, .summary = ""};
}

void check_output_flag(const std::string& path, const std::string& command_and_flag) {
  try {
    io::check_output_file(path, command_and_flag);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
  return out.str();
}

std::string class_difference(const std::vector<std::string>& a, const std::string& a_side,
                             const std::vector<std::string>& b, const std::string& b_side) {
  auto only = [](const std::vector<std::string>& mine, const std::vector<std::string>& theirs, const std::string& side) {
    std::vector<std::string> names;
    for (const std::string& name : mine)
      if (std::find(theirs.begin(), theirs.end(), name) == theirs.end()) names.push_back(name);
    if (names.empty()) return std::string();
    std::string out;
    for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", '" : "'") + escape_text(names[i]) + "'";
    if (names.size() > 5) out += cohort::detail::str(" and ", names.size() - 5, " more");
    return out + " only in " + side;
  };
  const std::string a_only = only(a, b, a_side), b_only = only(b, a, b_side);
  if (a_only.empty() && b_only.empty()) return "the same names in another order";
  return a_only + (a_only.empty() || b_only.empty() ? "" : "; ") + b_only;
}

namespace {

// Where a configuration's values came from, for its errors: the command line (a flag is named
// "--batch-size" and is the user's to fix) or a checkpoint file (the field 'batch_size' of that file).
struct Source {
  std::filesystem::path file;  // empty: the command line

  template <class... Args>
  void check(bool ok, const std::string& flag, const Args&... what) const {
    if (ok) [[likely]] return;
    const std::string message = cohort::detail::str(what...);
    if (file.empty()) throw UsageError("cohort train: " + flag + " " + message);
    std::string field = flag.substr(2);
    std::replace(field.begin(), field.end(), '-', '_');
    throw Error("cohort: " + escape_text(file.string()) + ": the run configuration stored in this checkpoint is " +
                "invalid: '" + field + "' " + escape_text(message) +
                "; hint: the file is damaged or was not written by cohort train");
  }
};

void check_one_of(const Source& source, const std::string& flag, const std::string& value,
                  const std::vector<std::string>& names) {
  source.check(std::find(names.begin(), names.end(), value) != names.end(), flag, "'", value,
               "' is not known; choose one of ", join_names(names));
}

}  // namespace

void TrainConfig::validate(const std::filesystem::path& stored_in) const {
  const Source s{stored_in};
  check_one_of(s, "--model", model, models::names());
  check_one_of(s, "--dataset", dataset, kDatasets);
  s.check(target.empty() || dataset == "csv", "--target", "is only for --dataset csv:FILE, got --dataset ", dataset);
  if (dataset == "csv") {
    s.check(!target.empty(), "--target", "is needed with --dataset csv:FILE: the column to predict");
    s.check(model == "mlp", "--model", "'", model, "' needs images; a table (--dataset csv:FILE) trains with --model mlp");
  }
  if (dataset == "text") {
    s.check(model.starts_with("char-"), "--model", "'", model,
            "' is not a language model; --dataset text:PATH trains --model char-lstm or char-transformer");
  } else {
    s.check(!model.starts_with("char-"), "--model", "'", model, "' is a language model; it trains on --dataset text:PATH");
  }
  s.check(seq_len >= 1, "--seq-len", "must be at least 1, got ", seq_len);
  check_one_of(s, "--optimizer", optimizer, kOptimizers);
  check_one_of(s, "--scheduler", scheduler, kSchedulers);
  check_one_of(s, "--precision", precision, kPrecisions);
  if (checkpoint_activations)
    s.check(std::ranges::count(models_with_checkpoint_activations(), model) > 0, "--checkpoint-activations",
            "is not supported by model ", model, "; the models that support it: ",
            join_names(models_with_checkpoint_activations()));
  s.check(epochs >= 1, "--epochs", "must be at least 1, got ", epochs);
  s.check(batch_size >= 1, "--batch-size", "must be at least 1, got ", batch_size);
  // NaN fails every comparison and an infinity passes "> 0": both are refused by name.
  s.check(std::isfinite(lr) && lr > 0, "--lr", "must be a positive finite number, got ", lr);
  s.check(momentum >= 0 && momentum < 1, "--momentum", "must be in [0, 1), got ", momentum);
  s.check(std::isfinite(weight_decay) && weight_decay >= 0, "--weight-decay", "must be a finite number at least 0, got ",
          weight_decay);
  s.check(std::isfinite(clip_grad_norm) && clip_grad_norm >= 0, "--clip-grad-norm",
          "must be a finite number at least 0 (0: no clipping), got ", clip_grad_norm);
  s.check(accumulate >= 1, "--accumulate", "must be at least 1 (micro-batches per step), got ", accumulate);
  s.check(warmup_steps >= 0, "--warmup-steps", "must be at least 0 (0: no warm-up), got ", warmup_steps);
  s.check(warmup_steps == 0 || scheduler != "onecycle", "--warmup-steps",
          "does not combine with --scheduler onecycle, which warms up itself (over the first 30% of the steps)");
  s.check(std::isfinite(ema) && ema >= 0 && ema < 1, "--ema",
          "must be a decay in [0, 1) (0: no average; 0.999 is usual), got ", ema);
  s.check(threads >= 0, "--threads", "must be at least 0 (0 = all cores), got ", threads);
  s.check(threads <= kMaxThreads, "--threads", "must be at most ", kMaxThreads, ", got ", threads,
          "; hint: 0 gives one per core (", core_count(), " here)");
  s.check(workers >= 0, "--workers", "must be at least 0, got ", workers);
  s.check(workers <= kMaxThreads, "--workers", "must be at most ", kMaxThreads, ", got ", workers,
          "; hint: a few data-loading threads per core keep any model fed");
  s.check(std::isfinite(val_split) && val_split >= 0 && val_split < 1, "--val-split", "must be in [0, 1), got ",
          val_split);
  s.check(image_size >= 0 && image_size <= 4096, "--image-size", "must be from 0 (64) to 4096, got ", image_size);
  if (dataset == "folder")
    s.check((val_split > 0) != !val_dir.empty(), "--val-dir",
            "or --val-split: give exactly one for --dataset folder (the validation images), got ",
            val_dir.empty() ? "neither" : "both");
  s.check(limit >= 0, "--limit", "must be at least 0 (0 = everything), got ", limit);
  s.check(checkpoint_every >= 0, "--checkpoint-every", "must be at least 0 (0 = each epoch), got ", checkpoint_every);
  s.check(keep_checkpoints >= 1, "--keep-checkpoints", "must be at least 1, got ", keep_checkpoints);
  s.check(log_every >= 1, "--log-every", "must be at least 1, got ", log_every);
  if (!stored_in.empty()) return;
  s.check(!out.empty(), "--out", "must name a directory");
  parse_devices(devices);
}

std::vector<Device> parse_devices(const std::string& spec) {
  std::vector<Device> devices;
  const bool is_count = !spec.empty() && std::all_of(spec.begin(), spec.end(), ::isdigit);
  if (is_count) {
    int n = 0;  // stays 0 past int's range, which no device count reaches
    std::from_chars(spec.data(), spec.data() + spec.size(), n);
    if (!(n >= 1 && n <= device_count()))
      throw UsageError(cohort::detail::str("cohort train: --devices ", spec, " asks for ", spec, " devices but ",
                                           device_count(),
                                           " exist; hint: set COHORT_CPU_DEVICES for more virtual devices"));
    for (int i = 0; i < n; ++i) devices.emplace_back(kCPU, i);
    return devices;
  }
  std::stringstream in(spec);
  std::string item;
  auto fail = [&](const auto&... what) {
    throw UsageError(cohort::detail::str("cohort train: --devices '", spec, "'", what...));
  };
  while (std::getline(in, item, ',')) {
    Device d = [&] {
      try {
        return Device(item);
      } catch (const Error& e) {
        throw UsageError("cohort train: --devices '" + spec + "': " + e.what());
      }
    }();
    if (d.index() >= device_count())
      fail(": ", d, " does not exist (", device_count(),
           " CPU devices); hint: set COHORT_CPU_DEVICES for more virtual devices");
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      fail(" names ", d, " twice; hint: name each device once, e.g. cpu:0,cpu:1");
    devices.push_back(d);
  }
  if (devices.empty()) fail(" must name at least one device");
  if (devices.front().index() != 0)
    fail(" starts with ", devices.front(), ", expected cpu:0 first (the model is built there and DataParallel "
         "gathers each batch's outputs there), then other devices once each; hint: --devices cpu:0,",
         devices.front(), " or a count, --devices ", devices.size());
  return devices;
}

nlohmann::json to_json(const TrainConfig& c) {
  return {{"model", c.model},       {"dataset", c.dataset},       {"data_dir", c.data_dir},
          {"val_dir", c.val_dir},   {"val_split", c.val_split},   {"image_size", c.image_size},
          {"target", c.target},     {"seq_len", c.seq_len},
          {"epochs", c.epochs},     {"batch_size", c.batch_size}, {"lr", c.lr},
          {"optimizer", c.optimizer}, {"momentum", c.momentum},   {"weight_decay", c.weight_decay},
          {"clip_grad_norm", c.clip_grad_norm}, {"accumulate", c.accumulate},
          {"scheduler", c.scheduler}, {"warmup_steps", c.warmup_steps}, {"ema", c.ema}, {"precision", c.precision},
          {"checkpoint_activations", c.checkpoint_activations}, {"seed", c.seed},           {"workers", c.workers},
          {"devices", c.devices},
          {"limit", c.limit},       {"checkpoint_every", c.checkpoint_every},
          {"keep_checkpoints", c.keep_checkpoints}, {"log_every", c.log_every},
          {"init_from", c.init_from}, {"freeze", c.freeze}, {"tensorboard", c.tensorboard}};
}

int64_t integer_at(const nlohmann::json& j, const char* key, const std::string& where) {
  COHORT_CHECK(j.is_object() && j.contains(key), where, "'", key, "' is missing");
  const nlohmann::json& v = j.at(key);
  COHORT_CHECK(v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX), where, "'", key,
               "' must be an integer in int64's range, got ", v.dump());
  return v.get<int64_t>();
}

TrainConfig train_config_from_json(const nlohmann::json& j) {
  const std::string where = "cohort: a checkpoint's run configuration is incomplete or malformed: ";
  TrainConfig c;
  try {
    c.model = j.at("model");
    c.dataset = j.at("dataset");
    c.data_dir = j.at("data_dir");
    c.val_dir = j.value("val_dir", std::string());  // absent in checkpoints of older versions
    c.val_split = j.value("val_split", 0.0);
    c.image_size = j.contains("image_size") ? integer_at(j, "image_size", where) : 0;
    c.target = j.value("target", std::string());
    if (j.contains("seq_len")) c.seq_len = integer_at(j, "seq_len", where);
    c.epochs = integer_at(j, "epochs", where);
    c.batch_size = integer_at(j, "batch_size", where);
    c.lr = j.at("lr");
    c.optimizer = j.at("optimizer");
    c.momentum = j.at("momentum");
    c.weight_decay = j.at("weight_decay");
    c.clip_grad_norm = j.value("clip_grad_norm", 0.0);  // absent in checkpoints of older cohorts
    // Absent in checkpoints of older cohorts, which had none of these.
    c.accumulate = j.contains("accumulate") ? integer_at(j, "accumulate", where) : 1;
    c.scheduler = j.at("scheduler");
    c.warmup_steps = j.contains("warmup_steps") ? integer_at(j, "warmup_steps", where) : 0;
    c.ema = j.value("ema", 0.0);
    c.precision = j.value("precision", "f32");  // absent in checkpoints of older cohorts
    c.checkpoint_activations = j.value("checkpoint_activations", false);
    c.seed = j.at("seed").is_number_unsigned() ? j.at("seed").get<uint64_t>()
                                                 : static_cast<uint64_t>(integer_at(j, "seed", where));
    const int64_t workers = integer_at(j, "workers", where);
    COHORT_CHECK(workers >= 0 && workers <= kMaxThreads, where, "'workers' must be from 0 to ", kMaxThreads,
                 " (data-loading threads), got ", workers);
    c.workers = static_cast<int>(workers);
    c.devices = j.value("devices", "cpu:0");
    c.limit = integer_at(j, "limit", where);
    c.checkpoint_every = integer_at(j, "checkpoint_every", where);
    c.keep_checkpoints = integer_at(j, "keep_checkpoints", where);
    c.log_every = integer_at(j, "log_every", where);
    c.init_from = j.value("init_from", "");  // absent in checkpoints of older cohorts
    c.freeze = j.value("freeze", "");
    c.tensorboard = j.value("tensorboard", "");
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + e.what());
  }
  return c;
}

}  // namespace cohort::app
