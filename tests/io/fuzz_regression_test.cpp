// Inputs found by the fuzz targets (fuzz/, scripts/fuzz.sh), kept as regression tests: each must be
// a cohort::Error naming the file, never undefined behaviour, a crash or another exception.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/data/mnist.h"
#include "cohort/io/checkpoint.h"
#include "cohort/io/npy.h"
#include "cohort/io/safetensors.h"
#include "cohort/nn/linear.h"
#include "cohort/optim/sgd.h"
#include "io/io_test_util.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class FuzzRegression : public ScratchDir {
 protected:
  fs::path file(const std::string& name, const std::string& bytes) const {
    write_bytes(path(name), bytes);
    return path(name);
  }
};

std::string npy(const std::string& dict) {
  std::string header = dict;
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header;
}

std::string safetensors(const std::string& json) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(json.size()) >> (8 * i));
  return out + json;
}

// fuzz_idx, crash-b17225f3: dims [0, 131079, 671351048, 84019465] hold no element, so no data was
// expected, but the other dims' product (the tensor's strides) overflowed int64 inside empty():
// signed overflow in contiguous_strides (UBSan).
TEST_F(FuzzRegression, IdxEmptySetWithAbsurdDims) {
  const std::string bytes("\x00\x00\x08\x04\x00\x00\x00\x00\x00\x02\x00\x07\x28\x04\x01\x08\x05\x02\x09\x09", 20);
  const fs::path p = file("empty-huge.idx", bytes);
  EXPECT_THAT(error_of([&] { data::read_idx(p.string()); }),
              AllOf(HasSubstr("read_idx: " + p.string()), HasSubstr("[0, 131079, 671351048, 84019465]"),
                    HasSubstr("multiply past int64")));
}

// The same overflow through .npy and safetensors: an empty shape whose other dims are absurd.
TEST_F(FuzzRegression, NpyEmptyArrayWithAbsurdDims) {
  const fs::path p = file("empty-huge.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }"));
  EXPECT_THAT(error_of([&] { io::load_npy(p); }),
              AllOf(HasSubstr("load_npy: " + p.string()), HasSubstr("has too many elements (overflow)")));
}

TEST_F(FuzzRegression, SafetensorsEmptyTensorWithAbsurdDims) {
  const fs::path p = file("empty-huge.safetensors",
                          safetensors(R"({"w":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})"));
  EXPECT_THAT(error_of([&] { io::load_safetensors(p); }),
              AllOf(HasSubstr("load_safetensors: " + p.string()), HasSubstr("has too many elements (overflow)")));
}

// fuzz_npy, crash-9745eca5: shape (0, 0) loaded as a tensor that was not contiguous (load_npy
// promises contiguous) and failed the save / load round trip: TensorImpl counted [0, 0] and [2, 0]
// as strided. An empty tensor is contiguous, as in PyTorch.
TEST_F(FuzzRegression, NpyEmptyArraysAreContiguousAndRoundTrip) {
  const fs::path p = file("empty.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 0), }"));
  const Tensor t = io::load_npy(p);
  EXPECT_EQ(t.sizes(), IntArrayRef({0, 0}));
  EXPECT_TRUE(t.is_contiguous());
  io::save_npy(path("again.npy"), t);
  EXPECT_TRUE(same_tensor(io::load_npy(path("again.npy")), t));
  for (const Shape& shape : {Shape{0, 0}, Shape{2, 0}, Shape{3, 0, 4}, Shape{0}})
    EXPECT_TRUE(cohort::empty(shape).is_contiguous()) << IntArrayRef(shape);
}

// The root cause, in core: empty() itself refuses sizes whose strides overflow.
TEST_F(FuzzRegression, EmptyTensorWhoseStridesOverflowIsAnOutOfMemoryError) {
  EXPECT_THROW(empty({0, int64_t{1} << 40, int64_t{1} << 40}), OutOfMemoryError);
  EXPECT_THAT(error_of([] { empty({0, int64_t{1} << 40, int64_t{1} << 40}); }), HasSubstr("overflows int64"));
  EXPECT_EQ(empty({0, int64_t{1} << 20, int64_t{1} << 20}).numel(), 0);  // large but representable
}

// fuzz_checkpoint: an optimizer state whose "num_params" is 1e300 was refused, but formatting the
// message converted 1e300 to int64 (undefined behaviour, src/optim/optimizer.cpp).
TEST_F(FuzzRegression, CheckpointWithAbsurdParameterCount) {
  nn::Linear model(2, 2);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(0.1));
  const fs::path p = path("absurd-count.safetensors");
  io::save_checkpoint(p, *model, &optimizer, {});
  io::Metadata metadata = io::load_safetensors_metadata(p);
  nlohmann::json scalars = nlohmann::json::parse(metadata.at("cohort.scalars"));
  scalars["param_groups.0.num_params"] = 1e300;
  metadata["cohort.scalars"] = scalars.dump();
  io::save_safetensors(p, io::load_safetensors(p), metadata);
  EXPECT_THAT(error_of([&] { io::load_checkpoint(p, *model, &optimizer); }),
              AllOf(HasSubstr("load_state_dict"), HasSubstr("group 0 has 1e+300 parameters in the state")));
}

}  // namespace
}  // namespace cohort::testing
