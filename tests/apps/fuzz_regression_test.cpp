// Inputs found for the trainer's JSON (fuzz/fuzz_train_config.cpp, fuzz/fuzz_run_checkpoint.cpp):
// each must be a cohort::Error, never undefined behaviour or another exception.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cohort/io/checkpoint.h"
#include "cohort/io/safetensors.h"
#include "cohort/models/model.h"
#include "cohort/optim/sgd.h"
#include "support/error_of.h"

#include "app/config.h"
#include "app/run_checkpoint.h"
#include "app/schedule.h"

namespace fs = std::filesystem;
using namespace cohort;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// The data description of the small image models these tests save.
app::DataSpec grey_images() {
  app::DataSpec spec;
  spec.classes = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  spec.image_size = 8, spec.mean = {0.5}, spec.std = {0.25};
  return spec;
}

nlohmann::json good_config() { return app::to_json(app::TrainConfig()); }

// A trainer checkpoint whose "cohort.run" metadata is `edit` applied to a real one.
struct EditedCheckpoint {
  fs::path dir = fs::temp_directory_path() / ("cohort-fuzz-regression-" + std::to_string(::getpid()));
  std::shared_ptr<models::Model> model = models::create("mlp", models::ModelOptions().in_channels(1).image_size(8));
  optim::SGD optimizer{model->parameters(), optim::SGDOptions(0.1)};

  fs::path write(const std::function<void(nlohmann::json&)>& edit) {
    fs::remove_all(dir);
    const fs::path path = app::save_run_checkpoint(dir, "fuzz-run", app::TrainConfig(), grey_images(), {}, *model, optimizer, nullptr);
    nlohmann::json run = nlohmann::json::parse(io::load_safetensors_metadata(path).at("cohort.run"));
    edit(run);
    io::save_checkpoint(path, *model, &optimizer, {{"cohort.run", run.dump()}});
    return path;
  }
  ~EditedCheckpoint() { fs::remove_all(dir); }
};

}  // namespace

// A float where an integer belongs: nlohmann converted 1e300 to int64 with undefined behaviour
// (UBSan: "1e+300 is outside the range of representable values of type 'long'").
TEST(AppFuzzRegression, ConfigIntegerFieldsRefuseFloatsOutOfRange) {
  for (const char* key : {"epochs", "batch_size", "limit", "checkpoint_every", "keep_checkpoints", "log_every", "workers", "seed"}) {
    nlohmann::json j = good_config();
    j[key] = 1e300;
    EXPECT_THAT(cohort::testing::error_of([&] { app::train_config_from_json(j); }),
                AllOf(HasSubstr("run configuration is incomplete or malformed"), HasSubstr(key), HasSubstr("1e+300")))
        << key;
  }
  nlohmann::json j = good_config();
  j["workers"] = int64_t{1} << 40;
  EXPECT_THAT(cohort::testing::error_of([&] { app::train_config_from_json(j); }), HasSubstr("'workers' must be from 0 to 1024"));
  EXPECT_THAT(cohort::testing::error_of([&] { app::train_config_from_json(nlohmann::json::array()); }),
              HasSubstr("run configuration is incomplete or malformed"));
  EXPECT_EQ(app::to_json(app::train_config_from_json(good_config())), good_config());
}

// A device count past int's range: std::stoi threw std::out_of_range, which escaped run_cli (it
// catches cohort::Error) and terminated `cohort train --devices 99999999999`.
TEST(AppFuzzRegression, DeviceCountPastIntIsAnError) {
  EXPECT_THAT(cohort::testing::error_of([] { app::parse_devices("99999999999"); }),
              HasSubstr("--devices 99999999999 asks for 99999999999 devices"));
  nlohmann::json j = good_config();
  j["devices"] = "99999999999999999999999";
  EXPECT_THAT(cohort::testing::error_of([&] { app::train_config_from_json(j).validate(); }), HasSubstr("asks for"));
}

TEST(AppFuzzRegression, RunStateIntegersRefuseFloatsOutOfRange) {
  EditedCheckpoint c;
  for (const char* key : {"step", "epoch", "batch", "correct", "seen"}) {
    const fs::path path = c.write([&](nlohmann::json& run) { run[key] = -1e300; });
    EXPECT_THAT(cohort::testing::error_of([&] { app::read_checkpoint(path); }),
                AllOf(HasSubstr(path.string()), HasSubstr("malformed run state"), HasSubstr(key)))
        << key;
  }
}

// restore_checkpoint parsed the scheduler and RNG state outside any try: a wrong type escaped as
// nlohmann::json::type_error instead of a cohort::Error naming the file.
TEST(AppFuzzRegression, RestoreRefusesAMalformedSchedulerOrRngAsAnError) {
  EditedCheckpoint c;
  const fs::path bad_rng = c.write([](nlohmann::json& run) { run["rng"] = 7; });
  const app::Checkpoint checkpoint = app::read_checkpoint(bad_rng);
  EXPECT_THAT(cohort::testing::error_of([&] { app::restore_checkpoint(checkpoint, *c.model, &c.optimizer, nullptr); }),
              AllOf(HasSubstr(bad_rng.string()), HasSubstr("malformed run state")));

  const fs::path bad_scheduler = c.write([](nlohmann::json& run) {
    run["scheduler"] = {{"last_epoch", "soon"}, {"step_count", 1.5}, {"base_lrs", {0.1}}, {"last_lrs", {0.1}}};
  });
  app::TrainConfig stepped;
  stepped.scheduler = "step";
  app::Schedule schedule(stepped, c.optimizer, 4);
  EXPECT_THAT(cohort::testing::error_of([&] {
                app::restore_checkpoint(app::read_checkpoint(bad_scheduler), *c.model, &c.optimizer, &schedule);
              }),
              AllOf(HasSubstr(bad_scheduler.string()), HasSubstr("scheduler: 'last_epoch' must be an integer")));
}
