// Dataset selection for the trainer: readers, normalisation constants and augmentation.
#include "app/data_setup.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "cohort/core/error.h"
#include "cohort/data/cifar10.h"
#include "cohort/data/csv.h"
#include "cohort/data/image_folder.h"
#include "cohort/data/mnist.h"
#include "cohort/data/subset.h"
#include "cohort/data/text.h"
#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"

namespace cohort::app {

namespace tf = data::transforms;

std::string default_data_dir(const std::string& dataset) {
  if (dataset == "fashion-mnist") return "/usr/share/datasets/fashion-mnist";  // Debian's dataset-fashion-mnist
  if (dataset == "mnist") return "/usr/share/datasets/mnist";
  if (dataset == "cifar10") return "data/cifar-10-batches-bin";
  return "";
}

namespace {

void check_dir(const std::string& command, const std::string& dir, const std::string& dataset,
               const std::string& hint) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  COHORT_CHECK(std::filesystem::is_directory(status), command, ": the ", dataset, " directory ", escape_text(dir),
               std::filesystem::exists(status) ? " is not a directory" : " does not exist", "; hint: ", hint);
}

// A table's per-column mean and std over the training rows (a constant column keeps std 1).
void set_table_statistics(DataSpec& spec, const data::Subset& train, const data::CsvDataset& table) {
  Tensor rows = index_select(table.features(), 0, tensor(train.indices()));
  Tensor mean = rows.mean(0);
  Tensor std = rows.std({0}, /*unbiased=*/false);
  std = where(std > 0, std, 1.0);
  for (int64_t f = 0; f < mean.size(0); ++f) {
    spec.mean.push_back(mean[f].item<float>());
    spec.std.push_back(std[f].item<float>());
  }
}

}  // namespace

DataSetup load_data(const TrainConfig& config, bool with_train, const std::string& command) {
  DataSetup d;
  const std::string dir = config.data_dir.empty() ? default_data_dir(config.dataset) : config.data_dir;
  d.source = dir;
  // Each split is built only when asked for: a reader loads (and inflates) its files at construction.
  auto both = [&](auto make) {
    if (with_train) d.train = make(true);
    d.test = make(false);
  };
  if (config.dataset == "fashion-mnist") {
    check_dir(command, dir, "Fashion-MNIST",
              "apt-get install dataset-fashion-mnist, or pass --data-dir with the IDX files");
    both([&](bool train) { return std::make_shared<data::FashionMNIST>(dir, train); });
    d.spec.mean = {0.2860}, d.spec.std = {0.3530};
  } else if (config.dataset == "mnist") {
    check_dir(command, dir, "MNIST", "pass --data-dir with train-images-idx3-ubyte(.gz) and the other three IDX files");
    both([&](bool train) { return std::make_shared<data::MNIST>(dir, train); });
    d.spec.mean = {0.1307}, d.spec.std = {0.3081};
  } else if (config.dataset == "cifar10") {
    check_dir(command, dir, "CIFAR-10",
              "pass --data-dir with data_batch_1.bin … data_batch_5.bin and test_batch.bin (the 'binary version' "
              "of CIFAR-10)");
    both([&](bool train) { return std::make_shared<data::CIFAR10>(dir, train); });
    const std::vector<double> mean{0.4914, 0.4822, 0.4465}, std{0.2470, 0.2435, 0.2616};
    // The usual CIFAR augmentation: 4-pixel padded random crops and horizontal flips.
    d.train_transform = tf::Compose({tf::ToTensor(), tf::RandomCrop(32, 4), tf::RandomHorizontalFlip(),
                                     tf::Normalize(mean, std)});
    d.spec.mean = mean, d.spec.std = std;
    d.spec.channels = 3;
    d.spec.image_size = 32;
  } else if (config.dataset == "folder") {
    // Decoded at (at least) twice the size asked for: big photos cost little (DCT-domain scaling).
    const int64_t size = config.image_size > 0 ? config.image_size : 64;
    const auto read = io::ImageReadOptions().min_size(2 * size);
    auto note_skipped = [&](const data::ImageFolder& folder) {
      const std::string skipped = folder.skipped_summary();
      if (!skipped.empty()) d.warnings.push_back("the image folder " + escape_text(folder.root()) + ": skipped " + skipped);
    };
    // Testing on a validation folder needs no training folder (it may have stayed on another machine).
    std::shared_ptr<data::ImageFolder> all;
    if (with_train || config.val_dir.empty()) {
      check_dir(command, dir, "image folder",
                command == "cohort train" ? "pass --dataset folder:DIR with DIR/<class>/<image>.jpg|png"
                                          : "pass --data-dir DIR, the training folder's new place (DIR/<class>/<image>)");
      all = std::make_shared<data::ImageFolder>(dir, data::Transform{}, read);
      note_skipped(*all);
      COHORT_CHECK(all->classes().size() >= 2, command, ": the image folder ", escape_text(dir),
                   " has one class folder, '", escape_text(all->classes().front()),
                   "'; a classifier needs at least two classes; hint: put each class's images in a folder of its own, "
                   "DIR/<class>/<image>");
    }
    if (!config.val_dir.empty()) {
      check_dir(command, config.val_dir, "validation",
                command == "cohort train" || command == "cohort eval"
                    ? "pass --val-dir with the same class folders as the training set"
                    : "the run's validation folder has moved; `cohort eval --val-dir DIR` tests on a folder");
      auto val = std::make_shared<data::ImageFolder>(config.val_dir, data::Transform{}, read);
      note_skipped(*val);
      if (all)
        COHORT_CHECK(val->classes() == all->classes(), command, ": the validation folder ", escape_text(config.val_dir),
                     " and the training folder ", escape_text(dir), " must hold the same class folders: ",
                     class_difference(val->classes(), "the validation folder", all->classes(), "the training folder"));
      if (with_train) d.train = all;
      d.test = val;
    } else {
      // A fixed shuffle of the files (from the run's seed), a val_split share held out.
      auto [train, held_out] = data::random_split(all, config.val_split, config.seed);
      if (with_train) d.train = train;
      d.test = held_out;
    }
    const std::vector<double> mean{0.485, 0.456, 0.406}, std{0.229, 0.224, 0.225};  // ImageNet's, as torchvision
    d.train_transform = tf::Compose({tf::Resize({size, size}), tf::RandomHorizontalFlip(), tf::ToTensor(),
                                     tf::Normalize(mean, std)});
    d.spec.mean = mean, d.spec.std = std;
    d.spec.channels = 3;
    d.spec.image_size = size;
  } else if (config.dataset == "csv") {
    const std::string& file = dir;
    auto table = std::make_shared<data::CsvDataset>(file, data::CsvOptions(config.target));
    auto [train, held_out] = data::random_split(table, config.val_split > 0 ? config.val_split : 0.2, config.seed);
    if (with_train) d.train = train;
    d.test = held_out;
    d.spec.kind = DataKind::kTable;
    d.spec.channels = static_cast<int64_t>(table->feature_names().size());
    d.spec.image_size = 1;
    d.spec.features = table->feature_names();
    set_table_statistics(d.spec, *train, *table);
    d.source = file;
    // A column of identifiers (or of measurements) makes a class of almost every row: the model cannot
    // learn it, and evaluating it takes a line per class.
    const auto classes = static_cast<int64_t>(table->classes().size());
    if (2 * classes > table->size())
      d.warnings.push_back(cohort::detail::str(
          "the target column '", escape_text(config.target), "' has ", classes, " distinct values in ", table->size(),
          " rows: more than half the rows have a class of their own, so it is probably an identifier or a "
          "measurement, not a class; hint: --target names the column to predict"));
  } else if (config.dataset == "text") {
    // The last tenth of the text is the validation set: held out whole, so no window of it was seen.
    const std::string& path = dir;
    const std::string text = data::read_text_corpus(path);
    const data::CharVocab vocab(text);
    const size_t cut = text.size() - text.size() / 10;
    const std::string_view train_text = std::string_view(text).substr(0, cut);
    d.carry_state = config.model == "char-lstm";
    if (with_train && d.carry_state)
      d.train = std::make_shared<data::CharStreams>(train_text, vocab, config.seq_len, config.batch_size);
    else if (with_train)
      d.train = std::make_shared<data::CharSequences>(train_text, vocab, config.seq_len);
    if (d.carry_state) {
      // Fewer streams for a validation text too short to give each one a window.
      const auto val_len = static_cast<int64_t>(text.size() - cut);
      d.test_batch = std::clamp<int64_t>((val_len - 1) / std::max<int64_t>(config.seq_len, 1), 1, kValidationStreams);
      d.test = std::make_shared<data::CharStreams>(std::string_view(text).substr(cut), vocab, config.seq_len,
                                                   d.test_batch);
    } else {
      d.test = std::make_shared<data::CharSequences>(std::string_view(text).substr(cut), vocab, config.seq_len);
    }
    d.spec.kind = DataKind::kText;
    d.spec.image_size = config.seq_len;
    d.prompt = text.substr(cut, 16);
    d.source = path;
  } else {
    d.source = "generated (seed " + std::to_string(config.seed) + ")";
    if (with_train) d.train = std::make_shared<SyntheticImages>(4096, config.seed);
    d.test = std::make_shared<SyntheticImages>(1024, config.seed + 1);
    d.spec.mean = {0.5}, d.spec.std = {0.25};
  }
  d.spec.classes = d.test->classes();
  // Augmentation (CIFAR's crops and flips, a folder's flips) was set above; the rest train on what
  // they are tested on.
  if (!d.train_transform) d.train_transform = inference_transform(d.spec);
  if (config.limit > 0) {
    if (d.train) d.train = std::make_shared<Prefix>(d.train, std::min(config.limit, d.train->size()));
    d.test = std::make_shared<Prefix>(d.test, std::min(config.limit, d.test->size()));
  }
  return d;
}

DataSpec stored_or_loaded_spec(const std::optional<DataSpec>& stored, const TrainConfig& config,
                               const std::string& command) {
  return stored ? *stored : load_data(config, /*with_train=*/false, command).spec;
}

std::shared_ptr<models::Model> create_model(const std::string& name, const DataSpec& data) {
  return models::create(name, models::ModelOptions()
                                  .in_channels(data.channels)
                                  .num_classes(static_cast<int64_t>(data.classes.size()))
                                  .image_size(data.image_size));
}

SyntheticImages::SyntheticImages(int64_t size, uint64_t seed) : size_(size), seed_(seed) {
  COHORT_CHECK(size >= 1, "SyntheticImages: size must be at least 1, got ", size);
  // The prototypes depend only on a fixed seed, so train and test sets share their classes.
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int c = 0; c < 10; ++c) {
    Tensor p = empty({28, 28});
    float* v = p.data_ptr<float>();
    for (int i = 0; i < 28 * 28; ++i) v[i] = u(rng) < 0.3f ? 1.f : 0.f;
    prototypes_.push_back(p);
  }
}

data::Example<> SyntheticImages::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size_, "SyntheticImages::get: index ", index,
                  " is out of range for a dataset of ", size_, " examples");
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(index));
  const int64_t label = static_cast<int64_t>(rng() % 10);
  std::normal_distribution<float> noise(0.f, 0.35f);
  Tensor image = empty({28, 28, 1}, kUInt8);
  const float* p = prototypes_[label].data_ptr<float>();
  uint8_t* out = image.data_ptr<uint8_t>();
  for (int i = 0; i < 28 * 28; ++i) {
    float v = std::clamp(p[i] + noise(rng), 0.f, 1.f);
    out[i] = static_cast<uint8_t>(v * 255.f + 0.5f);
  }
  return {image, scalar_tensor(label, kInt64)};
}

std::vector<std::string> SyntheticImages::classes() const {
  return {"pattern 0", "pattern 1", "pattern 2", "pattern 3", "pattern 4",
          "pattern 5", "pattern 6", "pattern 7", "pattern 8", "pattern 9"};
}

Prefix::Prefix(std::shared_ptr<const data::IndexedDataset> base, int64_t n) : base_(std::move(base)), n_(n) {
  COHORT_CHECK(n >= 0 && n <= base_->size(), "Prefix: cannot take ", n, " examples of a dataset of ", base_->size());
}

data::Example<> Prefix::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < n_, "Prefix::get: index ", index,
                  " is out of range for a dataset of ", n_, " examples");
  return base_->get(index);
}

}  // namespace cohort::app
