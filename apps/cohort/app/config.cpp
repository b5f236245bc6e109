// TrainConfig: validation and its JSON form.
#include "app/config.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "cohort/models/model.h"

namespace cohort::app {

const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist", "cifar10", "synthetic"};
const std::vector<std::string> kOptimizers = {"sgd", "adam", "adamw", "rmsprop"};
const std::vector<std::string> kSchedulers = {"none", "step", "cosine", "onecycle"};

std::string join_names(const std::vector<std::string>& names) {
  std::ostringstream out;
  for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
  return out.str();
}

namespace {

void check_one_of(const std::string& flag, const std::string& value, const std::vector<std::string>& names) {
  COHORT_CHECK(std::find(names.begin(), names.end(), value) != names.end(), "cohort train: ", flag, " '", value,
               "' is not known; choose one of ", join_names(names));
}

}  // namespace

void TrainConfig::validate() const {
  check_one_of("--model", model, models::names());
  check_one_of("--dataset", dataset, kDatasets);
  check_one_of("--optimizer", optimizer, kOptimizers);
  check_one_of("--scheduler", scheduler, kSchedulers);
  COHORT_CHECK(epochs >= 1, "cohort train: --epochs must be at least 1, got ", epochs);
  COHORT_CHECK(batch_size >= 1, "cohort train: --batch-size must be at least 1, got ", batch_size);
  COHORT_CHECK(lr > 0, "cohort train: --lr must be positive, got ", lr);
  COHORT_CHECK(momentum >= 0 && momentum < 1, "cohort train: --momentum must be in [0, 1), got ", momentum);
  COHORT_CHECK(weight_decay >= 0, "cohort train: --weight-decay must be at least 0, got ", weight_decay);
  COHORT_CHECK(threads >= 0, "cohort train: --threads must be at least 0 (0 = all cores), got ", threads);
  COHORT_CHECK(threads <= kMaxThreads, "cohort train: --threads must be at most ", kMaxThreads, ", got ", threads,
               "; hint: 0 gives one per core (", core_count(), " here)");
  COHORT_CHECK(workers >= 0, "cohort train: --workers must be at least 0, got ", workers);
  COHORT_CHECK(workers <= kMaxThreads, "cohort train: --workers must be at most ", kMaxThreads, ", got ", workers,
               "; hint: a few data-loading threads per core keep any model fed");
  COHORT_CHECK(limit >= 0, "cohort train: --limit must be at least 0 (0 = everything), got ", limit);
  COHORT_CHECK(checkpoint_every >= 0, "cohort train: --checkpoint-every must be at least 0 (0 = each epoch), got ",
               checkpoint_every);
  COHORT_CHECK(keep_checkpoints >= 1, "cohort train: --keep-checkpoints must be at least 1, got ", keep_checkpoints);
  COHORT_CHECK(log_every >= 1, "cohort train: --log-every must be at least 1, got ", log_every);
  COHORT_CHECK(!out.empty(), "cohort train: --out must name a directory");
  parse_devices(devices);
}

std::vector<Device> parse_devices(const std::string& spec) {
  std::vector<Device> devices;
  const bool is_count = !spec.empty() && std::all_of(spec.begin(), spec.end(), ::isdigit);
  if (is_count) {
    int n = 0;  // stays 0 past int's range, which no device count reaches
    std::from_chars(spec.data(), spec.data() + spec.size(), n);
    COHORT_CHECK(n >= 1 && n <= device_count(), "cohort train: --devices ", spec, " asks for ", spec, " devices but ",
                 device_count(), " exist; hint: set COHORT_CPU_DEVICES for more virtual devices");
    for (int i = 0; i < n; ++i) devices.emplace_back(kCPU, i);
    return devices;
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    Device d = [&] {
      try {
        return Device(item);
      } catch (const Error& e) {
        throw Error("cohort train: --devices '" + spec + "': " + e.what());
      }
    }();
    COHORT_CHECK(d.index() < device_count(), "cohort train: --devices '", spec, "': ", d, " does not exist (",
                 device_count(), " CPU devices); hint: set COHORT_CPU_DEVICES for more virtual devices");
    COHORT_CHECK(std::find(devices.begin(), devices.end(), d) == devices.end(), "cohort train: --devices '", spec,
                 "' names ", d, " twice");
    devices.push_back(d);
  }
  COHORT_CHECK(!devices.empty(), "cohort train: --devices must name at least one device, got '", spec, "'");
  return devices;
}

nlohmann::json to_json(const TrainConfig& c) {
  return {{"model", c.model},       {"dataset", c.dataset},       {"data_dir", c.data_dir},
          {"epochs", c.epochs},     {"batch_size", c.batch_size}, {"lr", c.lr},
          {"optimizer", c.optimizer}, {"momentum", c.momentum},   {"weight_decay", c.weight_decay},
          {"scheduler", c.scheduler}, {"seed", c.seed},           {"workers", c.workers},
          {"devices", c.devices},
          {"limit", c.limit},       {"checkpoint_every", c.checkpoint_every},
          {"keep_checkpoints", c.keep_checkpoints}, {"log_every", c.log_every}};
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
    c.epochs = integer_at(j, "epochs", where);
    c.batch_size = integer_at(j, "batch_size", where);
    c.lr = j.at("lr");
    c.optimizer = j.at("optimizer");
    c.momentum = j.at("momentum");
    c.weight_decay = j.at("weight_decay");
    c.scheduler = j.at("scheduler");
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
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + e.what());
  }
  return c;
}

}  // namespace cohort::app
