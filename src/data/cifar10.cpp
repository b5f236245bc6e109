// CIFAR-10's binary batches. Records are converted from the file's CHW planes to HWC once, at load,
// so that get() is a view and ToTensor treats CIFAR-10 and MNIST inputs alike.
#include "cohort/data/cifar10.h"

#include <cstring>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/file_reader.h"

namespace cohort::data {

namespace {

constexpr int64_t kSide = 32;
constexpr int64_t kChannels = 3;
constexpr int64_t kPixels = kSide * kSide;                   // per plane
constexpr int64_t kRecord = 1 + kChannels * kPixels;         // label byte + R, G, B planes
constexpr const char* kOp = "CIFAR10";
constexpr const char* kSubdir = "cifar-10-batches-bin";

std::vector<std::string> batch_names(bool train) {
  if (!train) return {"test_batch.bin"};
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  return names;
}

// The directory holding the batches: root itself, or the archive's folder inside it.
std::string batch_dir(const std::string& root, const std::string& first) {
  if (detail::find_plain_or_gz(root + "/" + first)) return root;
  const std::string sub = root + "/" + kSubdir;
  if (detail::find_plain_or_gz(sub + "/" + first)) return sub;
  detail::fail(kOp, root + "/" + first,
               std::string("the file does not exist, neither plain nor .gz, and neither does ") + sub + "/" + first +
                   "; hint: root must be the directory that holds the CIFAR-10 binary batches");
}

}  // namespace

CIFAR10::CIFAR10(const std::string& root, bool train) : train_(train) {
  const std::vector<std::string> names = batch_names(train);
  const std::string dir = batch_dir(root, names[0]);

  // Read and validate every file before allocating the set.
  std::vector<std::vector<uint8_t>> files;
  std::vector<std::string> paths;
  int64_t n = 0;
  for (const auto& name : names) {
    auto found = detail::find_plain_or_gz(dir + "/" + name);
    if (!found)
      detail::fail(kOp, dir + "/" + name, "the file does not exist, neither plain nor .gz, though " + names[0] + " does");
    files.push_back(detail::read_file(*found, kOp));
    const auto size = static_cast<int64_t>(files.back().size());
    if (size == 0) detail::fail(kOp, *found, "the file is empty, expected records of 3073 bytes");
    if (size % kRecord != 0)
      detail::fail(kOp, *found,
                   "the file has " + std::to_string(size) + " bytes, not a whole number of 3073-byte records (" +
                       std::to_string(size / kRecord) + " records and " + std::to_string(size % kRecord) +
                       " bytes left over); the file is truncated or not a CIFAR-10 batch");
    paths.push_back(*found);
    n += size / kRecord;
  }

  images_ = empty({n, kSide, kSide, kChannels}, TensorOptions(kUInt8));
  labels_ = empty({n}, TensorOptions(kInt64));
  uint8_t* img = images_.data_ptr<uint8_t>();
  int64_t* lab = labels_.data_ptr<int64_t>();
  int64_t row = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const uint8_t* rec = files[f].data();
    const auto records = static_cast<int64_t>(files[f].size()) / kRecord;
    for (int64_t r = 0; r < records; ++r, ++row, rec += kRecord) {
      if (rec[0] >= 10)
        detail::fail(kOp, paths[f], "label " + std::to_string(rec[0]) + " of record " + std::to_string(r) +
                                        " is not a class index in [0, 10); the file is not a CIFAR-10 batch");
      lab[row] = rec[0];
      // CHW planes -> HWC pixels.
      uint8_t* out = img + row * kPixels * kChannels;
      for (int64_t c = 0; c < kChannels; ++c) {
        const uint8_t* plane = rec + 1 + c * kPixels;
        for (int64_t p = 0; p < kPixels; ++p) out[p * kChannels + c] = plane[p];
      }
    }
    files[f] = {};  // free each file's bytes as soon as it is converted
  }
}

int64_t CIFAR10::size() const { return images_.size(0); }

Example<> CIFAR10::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "CIFAR10::get: index ", index,
                  " is out of range for a dataset of ", size(), " examples");
  return {images_.select(0, index), labels_.select(0, index)};
}

std::vector<std::string> CIFAR10::classes() const {
  return {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
}

}  // namespace cohort::data
