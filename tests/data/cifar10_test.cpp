// CIFAR-10 binary batches: small batches written here load in order with their CHW planes turned into
// HWC pixels; the archive's subdirectory and gzipped batches are found; every bad file throws an Error
// naming the file and the fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/cifar10.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// The value of channel c at (h, w) of record r: distinct across channels and neighbouring pixels.
uint8_t pixel(int r, int c, int h, int w) { return static_cast<uint8_t>(r * 31 + c * 85 + h * 7 + w * 3); }

// Records with the given labels, numbered from `first`: label byte, then R, G, B planes of 32x32.
std::string batch(const std::vector<uint8_t>& labels, int first) {
  std::string s;
  for (size_t i = 0; i < labels.size(); ++i) {
    s += static_cast<char>(labels[i]);
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 32; ++h)
        for (int w = 0; w < 32; ++w) s += static_cast<char>(pixel(first + static_cast<int>(i), c, h, w));
  }
  return s;
}

void write_gz(const fs::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr) << p;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// The expected HWC images of records [first, first + n), built with tensor ops rather than loops.
Tensor expected_images(int first, int n) {
  std::vector<uint8_t> v;
  for (int r = first; r < first + n; ++r)
    for (int h = 0; h < 32; ++h)
      for (int w = 0; w < 32; ++w)
        for (int c = 0; c < 3; ++c) v.push_back(pixel(r, c, h, w));
  return tensor(v).view({n, 32, 32, 3});
}

class CIFAR10Files : public ScratchDir {
 protected:
  // data_batch_1..5 with 2, 1, 3, 1, 2 records (9 in all) and labels 0..8 in order.
  void write_train(const fs::path& dir) {
    fs::create_directories(dir);
    const int counts[] = {2, 1, 3, 1, 2};
    int first = 0;
    for (int b = 0; b < 5; ++b) {
      std::vector<uint8_t> labels;
      for (int i = 0; i < counts[b]; ++i) labels.push_back(static_cast<uint8_t>(first + i));
      write_bytes(dir / ("data_batch_" + std::to_string(b + 1) + ".bin"), batch(labels, first));
      first += counts[b];
    }
  }
  std::string root() const { return dir_.string(); }
};

TEST_F(CIFAR10Files, LoadsTheFiveTrainBatchesInOrderAsHwc) {
  write_train(dir_);
  data::CIFAR10 ds(root());
  ASSERT_EQ(ds.size(), 9);
  EXPECT_TRUE(ds.is_train());
  EXPECT_TRUE(same_tensor(ds.images(), expected_images(0, 9)));
  EXPECT_TRUE(same_tensor(ds.labels(), arange(9)));
  // R, G, B of pixel (h=1, w=2) of record 4, spelled out.
  EXPECT_TRUE(same_tensor(ds.images()[4][1][2], tensor(std::vector<uint8_t>{pixel(4, 0, 1, 2), pixel(4, 1, 1, 2),
                                                                             pixel(4, 2, 1, 2)})));
  data::Example<> e = ds.get(5);
  EXPECT_EQ(e.data.sizes(), (std::vector<int64_t>{32, 32, 3}));
  EXPECT_EQ(e.data.data_ptr<uint8_t>(), ds.images().data_ptr<uint8_t>() + 5 * 3072);  // a view
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 5);
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                                                    "horse", "ship", "truck"}));
  EXPECT_THROW(ds.get(9), IndexError);
  EXPECT_THAT(error_of([&] { ds.get(-1); }), HasSubstr("CIFAR10::get: index -1 is out of range for a dataset of 9"));
}

TEST_F(CIFAR10Files, FindsTheArchiveSubdirectoryAndGzippedBatches) {
  const fs::path sub = dir_ / "cifar-10-batches-bin";
  fs::create_directories(sub);
  write_gz(sub / "test_batch.bin.gz", batch({9, 3}, 20));
  data::CIFAR10 test(root(), /*train=*/false);
  EXPECT_FALSE(test.is_train());
  EXPECT_TRUE(same_tensor(test.images(), expected_images(20, 2)));
  EXPECT_TRUE(same_tensor(test.labels(), tensor(std::vector<int64_t>{9, 3})));
  // root itself may be the subdirectory, too.
  EXPECT_EQ(data::CIFAR10(sub.string(), false).size(), 2);
}

TEST_F(CIFAR10Files, MissingFilesNameThePath) {
  EXPECT_THAT(error_of([&] { data::CIFAR10 ds(root()); }),
              AllOf(HasSubstr("CIFAR10: "), HasSubstr(path("data_batch_1.bin").string()),
                    HasSubstr(path("cifar-10-batches-bin/data_batch_1.bin").string()), HasSubstr("does not exist")));
  write_train(dir_);
  fs::remove(path("data_batch_3.bin"));
  EXPECT_THAT(error_of([&] { data::CIFAR10 ds(root()); }),
              AllOf(HasSubstr(path("data_batch_3.bin").string()), HasSubstr("does not exist")));
  EXPECT_THAT(error_of([&] { data::CIFAR10 ds(root(), false); }), HasSubstr("test_batch.bin"));
}

TEST_F(CIFAR10Files, MalformedBatchesNameTheFileAndTheFault) {
  write_train(dir_);
  const std::string b2 = path("data_batch_2.bin").string();
  auto err = [&] { return error_of([&] { data::CIFAR10 ds(root()); }); };
  write_bytes(b2, batch({1, 2}, 0).substr(0, 2 * 3073 - 100));
  EXPECT_THAT(err(), AllOf(HasSubstr(b2), HasSubstr("6046 bytes, not a whole number of 3073-byte records"),
                           HasSubstr("1 records and 2973 bytes left over")));
  write_bytes(b2, batch({1}, 0) + "x");
  EXPECT_THAT(err(), AllOf(HasSubstr(b2), HasSubstr("3074 bytes")));
  write_bytes(b2, "");
  EXPECT_THAT(err(), AllOf(HasSubstr(b2), HasSubstr("empty")));
  write_bytes(b2, batch({1, 10}, 0));
  EXPECT_THAT(err(), AllOf(HasSubstr(b2), HasSubstr("label 10 of record 1 is not a class index")));
  fs::remove(b2);
  write_bytes(b2 + ".gz", "\x1f\x8b but not really gzip at all");
  EXPECT_THAT(err(), AllOf(HasSubstr(b2 + ".gz"), HasSubstr("corrupt gzip data")));
}

}  // namespace
