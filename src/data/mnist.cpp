// The IDX reader and the MNIST / Fashion-MNIST datasets. Every size in a header is checked against
// the bytes that follow it before a tensor is allocated, so a bad file fails loudly and never yields
// a short or garbage dataset.
#include "cohort/data/mnist.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/file_reader.h"

namespace cohort::data {

namespace {

constexpr int64_t kSide = 28;

std::string hex(uint64_t v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llX", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string shape_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

const char* idx_type_name(uint8_t type) {
  switch (type) {
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "unknown";
  }
}

// Parses IDX bytes read from `path`; `op` starts error messages.
Tensor parse_idx(const std::vector<uint8_t>& b, const std::string& path, const std::string& op) {
  using detail::fail;
  if (b.size() < 4)
    fail(op, path, "not an IDX file: " + std::to_string(b.size()) + " bytes is shorter than the 4-byte magic number");
  const uint32_t magic = uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
  if (b[0] != 0 || b[1] != 0)
    fail(op, path, "not an IDX file: the magic number is " + hex(magic, 8) +
                       ", expected 0x0000 then a type byte and the number of dimensions (0x00000803 for images)");
  if (b[2] != 0x08)
    fail(op, path, "IDX element type " + hex(b[2], 2) + " (" + idx_type_name(b[2]) +
                       ") is not supported, expected 0x08 (unsigned byte)");
  const size_t ndims = b[3];
  if (ndims == 0) fail(op, path, "the IDX header declares 0 dimensions, expected at least 1");
  const size_t header = 4 + 4 * ndims;
  if (b.size() < header)
    fail(op, path, "truncated IDX header: " + std::to_string(ndims) + " dimensions need " + std::to_string(header) +
                       " header bytes, the file has " + std::to_string(b.size()));

  std::vector<int64_t> dims(ndims);
  const uint64_t available = b.size() - header;
  uint64_t declared = 1;
  bool overflow = false;  // dims whose product does not fit 64 bits cannot match any file
  for (size_t i = 0; i < ndims; ++i) {
    const uint8_t* p = b.data() + 4 + 4 * i;
    dims[i] = int64_t{p[0]} << 24 | int64_t{p[1]} << 16 | int64_t{p[2]} << 8 | p[3];
    overflow |= __builtin_mul_overflow(declared, static_cast<uint64_t>(dims[i]), &declared);
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {  // an empty set, if its other dims fit a tensor
    uint64_t extent = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(extent, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &extent) || extent > INT64_MAX)
        fail(op, path, "the IDX header declares dims " + shape_str(dims) +
                           ": no elements, but the other dims multiply past int64, too large for a tensor");
    declared = 0, overflow = false;
  }
  if (overflow || declared > available)
    fail(op, path, "truncated IDX data: the header declares dims " + shape_str(dims) +
                       (overflow ? "" : " (" + std::to_string(declared) + " bytes)") + " but only " +
                       std::to_string(available) + " bytes follow the header");
  if (declared < available)
    fail(op, path, "the IDX header declares dims " + shape_str(dims) + " (" + std::to_string(declared) +
                       " bytes) but " + std::to_string(available) +
                       " bytes follow the header; the dims disagree with the file size");

  Tensor t = empty(dims, TensorOptions(kUInt8));
  if (declared > 0) std::memcpy(t.data_ptr<uint8_t>(), b.data() + header, declared);
  return t;
}

// root/name, plain or gzipped; throws naming both candidates when neither exists.
std::string locate(const std::string& root, const std::string& name, const std::string& op) {
  const std::string path = root + "/" + name;
  if (auto found = detail::find_plain_or_gz(path)) return *found;
  detail::fail(op, path, "the file does not exist, neither plain nor as " + name +
                             ".gz; hint: root must be the directory that holds the IDX files");
}

}  // namespace

Tensor read_idx(const std::string& path) { return parse_idx(detail::read_file(path, "read_idx"), path, "read_idx"); }

MNIST::MNIST(const std::string& root, bool train)
    : MNIST(root, train, "MNIST", {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) {}

MNIST::MNIST(const std::string& root, bool train, std::string name, std::vector<std::string> classes)
    : name_(std::move(name)), train_(train), classes_(std::move(classes)) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string images_path = locate(root, prefix + "-images-idx3-ubyte", name_);
  const std::string labels_path = locate(root, prefix + "-labels-idx1-ubyte", name_);
  Tensor images = parse_idx(detail::read_file(images_path, name_), images_path, name_);
  Tensor labels = parse_idx(detail::read_file(labels_path, name_), labels_path, name_);

  std::vector<int64_t> image_dims(images.sizes().begin(), images.sizes().end());
  if (images.dim() != 3 || images.size(1) != kSide || images.size(2) != kSide)
    detail::fail(name_, images_path, "expected images of dims [N, 28, 28], got " + shape_str(image_dims));
  if (labels.dim() != 1)
    detail::fail(name_, labels_path,
                 "expected labels of dims [N], got " +
                     shape_str(std::vector<int64_t>(labels.sizes().begin(), labels.sizes().end())));
  const int64_t n = images.size(0);
  COHORT_CHECK(labels.size(0) == n, name_, ": ", images_path, " holds ", n, " images but ", labels_path, " holds ",
               labels.size(0), " labels; hint: the two files must come from the same set");

  // Labels become int64 class indices (what cross_entropy takes), checked once here.
  labels_ = empty({n}, TensorOptions(kInt64));
  const uint8_t* src = labels.data_ptr<uint8_t>();
  int64_t* dst = labels_.data_ptr<int64_t>();
  const auto num_classes = static_cast<int64_t>(classes_.size());
  for (int64_t i = 0; i < n; ++i) {
    if (src[i] >= num_classes)
      detail::fail(name_, labels_path, "label " + std::to_string(src[i]) + " at index " + std::to_string(i) +
                                           " is not a class index in [0, " + std::to_string(num_classes) + ")");
    dst[i] = src[i];
  }
  images_ = images.view({n, kSide, kSide, 1});
}

int64_t MNIST::size() const { return images_.size(0); }

Example<> MNIST::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), name_, "::get: index ", index,
                  " is out of range for a dataset of ", size(), " examples");
  return {images_.select(0, index), labels_.select(0, index)};
}

FashionMNIST::FashionMNIST(const std::string& root, bool train)
    : MNIST(root, train, "FashionMNIST",
            {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
             "Ankle boot"}) {}

namespace datasets {

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  const data::MNIST raw(root, train_);
  const int64_t n = raw.size();
  // byte / 255 in float32, as libtorch's to(kFloat32).div_(255) rounds it.
  images_ = empty({n, 1, kSide, kSide}, TensorOptions(kFloat32));
  const uint8_t* src = raw.images().data_ptr<uint8_t>();
  float* dst = images_.data_ptr<float>();
  for (int64_t i = 0; i < n * kSide * kSide; ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;
  targets_ = raw.labels();
}

Example<> MNIST::get(size_t index) {
  const int64_t n = images_.size(0);
  COHORT_CHECK_AS(IndexError, index < static_cast<size_t>(n), "datasets::MNIST::get: index ", index,
                  " is out of range for a dataset of ", n, " examples");
  const auto i = static_cast<int64_t>(index);
  return {images_.select(0, i), targets_.select(0, i)};
}

optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace datasets

}  // namespace cohort::data
