// The datasets of `cohort train --dataset …`, with their transforms and default locations.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cohort/data/dataset.h"
#include "cohort/models/model.h"

#include "app/config.h"
#include "app/data_spec.h"

namespace cohort::app {

// The validation text of a carried-state language model is read as this many streams (fewer when
// it is too short for each to hold a window).
inline constexpr int64_t kValidationStreams = 64;

struct DataSetup {
  std::shared_ptr<const data::IndexedDataset> train, test;  // train is null when only the test split was asked for
  data::Transform train_transform;  // with augmentation; the test set's is inference_transform(spec)
  DataSpec spec;                    // what the model is shaped for; checkpoints carry it
  std::string prompt;  // text: the start of the validation text, to continue in samples
  // text with char-lstm: the training set is data::CharStreams of --batch-size streams and the
  // validation set of kValidationStreams, both read in order, and the LSTM's state is carried from
  // each batch to the next (Note [Carried state] in trainer.cpp).
  bool carry_state = false;
  // The test loader's batch size when it must be exactly this (the validation streams of a
  // carried-state model), else 0.
  int64_t test_batch = 0;
  std::string source;  // where the data came from, for the log
  // What looks wrong but may be meant (a table's target with a class for most rows), for the log.
  std::vector<std::string> warnings;
};

// The directory a dataset is read from when --data-dir is not given.
std::string default_data_dir(const std::string& dataset);

// The model `name` shaped for the data: its channels, image size and number of classes.
std::shared_ptr<models::Model> create_model(const std::string& name, const DataSpec& data);

// Loads the train (unless !with_train: `cohort eval` needs only the test set, and reading the train
// set would cost most of the time) and test sets of config.dataset, honouring config.limit. Throws a
// cohort::Error starting with `command` and naming the directory and how to get the data when it is
// missing.
DataSetup load_data(const TrainConfig& config, bool with_train = true, const std::string& command = "cohort train");

// `stored` (a checkpoint's data description) or, for a checkpoint of an older cohort without one, the
// description of config's dataset, read from its directory (errors start with `command`).
DataSpec stored_or_loaded_spec(const std::optional<DataSpec>& stored, const TrainConfig& config,
                               const std::string& command);

// A learnable stand-in for a real dataset: 10 classes of 28x28 grey images, each a class-specific
// pattern plus noise, generated from (seed, index) so it needs no files. For tests and demos.
class SyntheticImages : public data::IndexedDataset {
 public:
  SyntheticImages(int64_t size, uint64_t seed);
  int64_t size() const override { return size_; }
  data::Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override;

 private:
  int64_t size_;
  uint64_t seed_;
  std::vector<Tensor> prototypes_;  // one float image per class
};

// The first `n` examples of another dataset.
class Prefix : public data::IndexedDataset {
 public:
  Prefix(std::shared_ptr<const data::IndexedDataset> base, int64_t n);
  int64_t size() const override { return n_; }
  data::Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return base_->classes(); }

 private:
  std::shared_ptr<const data::IndexedDataset> base_;
  int64_t n_;
};

}  // namespace cohort::app
