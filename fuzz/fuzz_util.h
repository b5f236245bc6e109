// Shared by the fuzz targets and make_seeds: where inputs are written (the parsers take paths) and
// the tiny model, optimizer and schedule that the checkpoint targets load into.
//
// A target's contract: every input either parses or throws a cohort::Error. Anything else
// (another exception escaping, which terminates; a crash; an ASan or UBSan report; a hang; an
// allocation past libFuzzer's -malloc_limit_mb) is a bug that libFuzzer saves as crash-<sha1>.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cohort/core/generator.h"
#include "cohort/nn/activation.h"
#include "cohort/nn/container.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adam.h"

#include "app/schedule.h"

namespace cohort::fuzz {

// $COHORT_FUZZ_TMP (scripts/fuzz.sh sets it), else /dev/shm/cohort-fuzz-<pid>: tmpfs, so writing
// every input costs no disk I/O. Created on first use.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* env = std::getenv("COHORT_FUZZ_TMP");
    std::filesystem::path d = env && *env ? std::filesystem::path(env)
                                          : std::filesystem::path("/dev/shm") / ("cohort-fuzz-" + std::to_string(::getpid()));
    d /= std::to_string(::getpid());  // libFuzzer -jobs/-fork run several processes
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::filesystem::path write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();  // the harness, not the parser, failed
  return path;
}

// Sequential(Linear(3, 4), ReLU, Linear(4, 2)) with Adam after one step (so it has state) and a
// the trainer's step schedule with a warm-up: small enough that a checkpoint of it is a ~1 KB seed.
struct TinyRun {
  nn::Sequential model = make_model();
  std::unique_ptr<optim::Adam> optimizer;
  std::unique_ptr<app::Schedule> schedule;

  static nn::Sequential make_model() {
    manual_seed(0);  // the same weights in every process, so a crash input reproduces
    return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  }
  TinyRun() {
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-2));
    model->forward(ones({2, 3})).sum().backward();
    optimizer->step();
    app::TrainConfig config;
    config.scheduler = "step", config.warmup_steps = 3;
    schedule = std::make_unique<app::Schedule>(config, *optimizer, /*steps_per_epoch=*/4);
  }
};

}  // namespace cohort::fuzz
