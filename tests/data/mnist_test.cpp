// IDX files and MNIST / Fashion-MNIST: small files written here in the real format (plain and gzip)
// load exactly; every malformed file throws an Error naming the file and the fault; Debian's
// dataset-fashion-mnist package loads and matches values computed by Python's gzip module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/mnist.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// An IDX file: magic 00 00 <type> <ndims>, big-endian uint32 dims, then the data.
std::string idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data, uint8_t type = 0x08) {
  std::string s = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) s += static_cast<char>((d >> shift) & 0xff);
  return s + std::string(data.begin(), data.end());
}

void write_gz(const fs::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr) << p;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::vector<uint8_t> iota_bytes(size_t n, int start) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((start + 7 * i) % 256);
  return v;
}

class IdxReader : public ScratchDir {};

// A directory holding an MNIST split: n images with pixel i of image k = (k*784 + i)*7 % 256 + start.
class MNISTFiles : public ScratchDir {
 protected:
  void write_split(const std::string& prefix, const std::vector<uint8_t>& labels, bool gz, int start = 0) {
    const auto n = static_cast<uint32_t>(labels.size());
    const std::string images = idx_bytes({n, 28, 28}, iota_bytes(n * 784, start));
    const std::string label_file = idx_bytes({n}, labels);
    if (gz) {
      write_gz(path(prefix + "-images-idx3-ubyte.gz"), images);
      write_gz(path(prefix + "-labels-idx1-ubyte.gz"), label_file);
    } else {
      write_bytes(path(prefix + "-images-idx3-ubyte"), images);
      write_bytes(path(prefix + "-labels-idx1-ubyte"), label_file);
    }
  }
  std::string root() const { return dir_.string(); }
};

TEST_F(IdxReader, ReadsPlainAndGzipFilesExactly) {
  const std::string bytes = idx_bytes({2, 3}, {0, 1, 2, 128, 254, 255});
  write_bytes(path("a.idx"), bytes);
  write_gz(path("a.idx.gz"), bytes);
  Tensor expected = tensor(std::vector<uint8_t>{0, 1, 2, 128, 254, 255}).reshape({2, 3});
  EXPECT_TRUE(same_tensor(data::read_idx(path("a.idx")), expected));
  EXPECT_TRUE(same_tensor(data::read_idx(path("a.idx.gz")), expected));
  // Two gzip members back to back are one stream (what `cat a.gz b.gz` makes).
  write_gz(path("head.gz"), bytes.substr(0, 5));
  write_gz(path("tail.gz"), bytes.substr(5));
  write_bytes(path("two.idx.gz"), read_bytes(path("head.gz")) + read_bytes(path("tail.gz")));
  EXPECT_TRUE(same_tensor(data::read_idx(path("two.idx.gz")), expected));
  // One dimension, and an empty set.
  write_bytes(path("b.idx"), idx_bytes({4}, {9, 8, 7, 6}));
  EXPECT_TRUE(same_tensor(data::read_idx(path("b.idx")), tensor(std::vector<uint8_t>{9, 8, 7, 6})));
  write_bytes(path("c.idx"), idx_bytes({0, 28, 28}, {}));
  EXPECT_EQ(data::read_idx(path("c.idx")).sizes(), (std::vector<int64_t>{0, 28, 28}));
}

TEST_F(IdxReader, MalformedFilesNameTheFileAndTheFault) {
  auto err = [&](const std::string& name, const std::string& bytes) {
    write_bytes(path(name), bytes);
    return error_of([&] { data::read_idx(path(name)); });
  };
  const std::string missing = path("missing.idx").string();
  EXPECT_THAT(error_of([&] { data::read_idx(missing); }), AllOf(HasSubstr(missing), HasSubstr("does not exist")));
  EXPECT_THAT(err("magic.idx", "\x12\x34\x08\x01xxxxyyyy"),
              AllOf(HasSubstr("magic.idx"), HasSubstr("not an IDX file"), HasSubstr("0x12340801")));
  EXPECT_THAT(err("short.idx", std::string("\0\0", 2)), AllOf(HasSubstr("short.idx"), HasSubstr("not an IDX file")));
  EXPECT_THAT(err("float.idx", idx_bytes({1}, {0, 0, 0, 0}, 0x0D)),
              AllOf(HasSubstr("float.idx"), HasSubstr("0x0D (float32) is not supported")));
  EXPECT_THAT(err("header.idx", idx_bytes({2, 3}, {}).substr(0, 9)),
              AllOf(HasSubstr("header.idx"), HasSubstr("truncated IDX header")));
  EXPECT_THAT(err("trunc.idx", idx_bytes({2, 3}, {1, 2, 3, 4, 5})),
              AllOf(HasSubstr("trunc.idx"), HasSubstr("truncated IDX data"), HasSubstr("[2, 3] (6 bytes)"),
                    HasSubstr("only 5 bytes")));
  EXPECT_THAT(err("long.idx", idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6, 7})),
              AllOf(HasSubstr("long.idx"), HasSubstr("7 bytes follow the header"), HasSubstr("disagree")));
  // Dims whose product overflows 64 bits are reported, not wrapped around.
  EXPECT_THAT(err("huge.idx", idx_bytes({0xffffffffu, 0xffffffffu, 0xffffffffu}, {1})),
              AllOf(HasSubstr("huge.idx"), HasSubstr("truncated IDX data"), HasSubstr("only 1 bytes")));
}

TEST_F(IdxReader, CorruptGzipFilesNameTheFileAndTheFault) {
  write_gz(path("good.gz"), idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6}));
  const std::string gz = read_bytes(path("good.gz"));
  auto err = [&](const std::string& name, const std::string& bytes) {
    write_bytes(path(name), bytes);
    return error_of([&] { data::read_idx(path(name)); });
  };
  std::string bad_block = gz;
  bad_block[10] = '\xff';  // first deflate block header: BTYPE 11 is reserved
  EXPECT_THAT(err("block.gz", bad_block), AllOf(HasSubstr("block.gz"), HasSubstr("corrupt gzip data")));
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 0x55;  // the trailer's CRC-32
  EXPECT_THAT(err("crc.gz", bad_crc), AllOf(HasSubstr("crc.gz"), HasSubstr("corrupt gzip data")));
  EXPECT_THAT(err("cut.gz", gz.substr(0, gz.size() - 12)), AllOf(HasSubstr("cut.gz"), HasSubstr("truncated")));
  EXPECT_THAT(err("tiny.gz", gz.substr(0, 6)), AllOf(HasSubstr("tiny.gz"), HasSubstr("truncated")));
  EXPECT_THAT(err("plain.gz", idx_bytes({1}, {1})), AllOf(HasSubstr("plain.gz"), HasSubstr("not gzip data")));
  EXPECT_THAT(err("tail.gz", gz + "junk"), AllOf(HasSubstr("tail.gz"), HasSubstr("4 bytes of trailing data")));
}

TEST_F(IdxReader, GzipThatInflatesWithoutBoundIsRefused) {
  // 256 MiB of zeros deflate to about 256 KB: refused once the buffer would pass 64 times the file
  // (plus 16 MiB), not after inflating it all.
  {
    gzFile f = gzopen(path("bomb.idx.gz").c_str(), "wb9");
    ASSERT_NE(f, nullptr);
    const std::string header = idx_bytes({1u << 28}, {});
    ASSERT_EQ(gzwrite(f, header.data(), static_cast<unsigned>(header.size())), static_cast<int>(header.size()));
    const std::string zeros(1 << 20, '\0');
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size())), static_cast<int>(zeros.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  const auto size = fs::file_size(path("bomb.idx.gz"));
  EXPECT_THAT(error_of([&] { data::read_idx(path("bomb.idx.gz")); }),
              AllOf(HasSubstr("bomb.idx.gz: the gzip data inflates to more than " +
                              std::to_string(64 * size + (16 << 20)) + " bytes (64 times the file's " +
                              std::to_string(size) + " bytes, and 16 MiB)"),
                    HasSubstr("hint: if it is real, decompress it with gunzip")));
}

TEST_F(MNISTFiles, LoadsTrainAndTestSplitsPlainOrGzipped) {
  write_split("train", {3, 0, 9}, /*gz=*/false);
  write_split("t10k", {7, 1}, /*gz=*/true, 5);
  data::MNIST train(root()), test(root(), /*train=*/false);
  ASSERT_EQ(train.size(), 3);
  ASSERT_EQ(test.size(), 2);
  EXPECT_TRUE(train.is_train());
  EXPECT_FALSE(test.is_train());
  EXPECT_TRUE(same_tensor(train.images(), tensor(iota_bytes(3 * 784, 0)).view({3, 28, 28, 1})));
  EXPECT_TRUE(same_tensor(test.images(), tensor(iota_bytes(2 * 784, 5)).view({2, 28, 28, 1})));
  EXPECT_TRUE(same_tensor(train.labels(), tensor(std::vector<int64_t>{3, 0, 9})));
  EXPECT_TRUE(same_tensor(test.labels(), tensor(std::vector<int64_t>{7, 1})));
  EXPECT_EQ(train.classes(), (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));

  data::Example<> e = train.get(2);
  EXPECT_TRUE(same_tensor(e.data, tensor(iota_bytes(3 * 784, 0)).view({3, 28, 28, 1})[2]));
  EXPECT_EQ(e.data.sizes(), (std::vector<int64_t>{28, 28, 1}));
  // A view into the loaded set, not a copy.
  EXPECT_EQ(e.data.data_ptr<uint8_t>(), train.images().data_ptr<uint8_t>() + 2 * 784);
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.dtype(), kInt64);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
}

// A data file that is not a regular file is named for what it is, and a FIFO is never opened for a
// blocking read (the test would hang).
TEST_F(MNISTFiles, AFileThatIsNotARegularFileIsNamedForWhatItIs) {
  write_split("train", {1, 2}, /*gz=*/false);
  write_split("t10k", {3}, /*gz=*/false);
  const fs::path images = path("train-images-idx3-ubyte");
  auto error_with = [&](auto make) {
    fs::remove_all(images);
    make();
    return error_of([&] { data::MNIST(root(), true); });
  };
  EXPECT_THAT(error_with([&] { fs::create_directory(images); }), AllOf(HasSubstr(images.string()), HasSubstr("is a directory")));
  EXPECT_THAT(error_with([&] { ASSERT_EQ(::mkfifo(images.c_str(), 0644), 0); }),
              AllOf(HasSubstr(images.string()), HasSubstr("is a FIFO, not a regular file")));
  EXPECT_THAT(error_with([&] { fs::create_symlink("/dev/zero", images); }), HasSubstr("is a character device"));
  EXPECT_THAT(error_with([&] { fs::create_symlink(images, images); }), HasSubstr("too many levels of symbolic links"));
  EXPECT_THAT(error_with([&] { fs::create_symlink(path("nowhere"), images); }),
              HasSubstr("is a symbolic link to a file that does not exist"));
  EXPECT_THAT(error_of([&] { data::read_idx(path("t10k-images-idx3-ubyte").string() + "/x"); }), HasSubstr("cannot read"));
}

TEST_F(MNISTFiles, PrefersThePlainFileWhenBothExist) {
  write_split("train", {1}, /*gz=*/true, 100);
  write_split("train", {2}, /*gz=*/false, 0);
  data::MNIST ds(root());
  EXPECT_EQ(ds.get(0).target.item<int64_t>(), 2);
  EXPECT_TRUE(same_tensor(ds.images(), tensor(iota_bytes(784, 0)).view({1, 28, 28, 1})));
}

TEST_F(MNISTFiles, GetOutsideTheSetThrowsIndexError) {
  write_split("train", {1, 2}, false);
  data::MNIST ds(root());
  EXPECT_THROW(ds.get(2), IndexError);
  EXPECT_THROW(ds.get(-1), IndexError);
  EXPECT_THAT(error_of([&] { ds.get(2); }), HasSubstr("MNIST::get: index 2 is out of range for a dataset of 2"));
}

TEST_F(MNISTFiles, MissingFilesNameThePath) {
  EXPECT_THAT(error_of([&] { data::MNIST ds(root()); }),
              AllOf(HasSubstr("MNIST: "), HasSubstr(path("train-images-idx3-ubyte").string()),
                    HasSubstr("does not exist"), HasSubstr(".gz")));
  write_bytes(path("t10k-images-idx3-ubyte"), idx_bytes({1, 28, 28}, iota_bytes(784, 0)));
  EXPECT_THAT(error_of([&] { data::MNIST ds(root(), false); }),
              AllOf(HasSubstr(path("t10k-labels-idx1-ubyte").string()), HasSubstr("does not exist")));
}

TEST_F(MNISTFiles, MalformedSetsNameTheFileAndTheFault) {
  auto err = [&] { return error_of([&] { data::MNIST ds(root()); }); };
  const std::string images = path("train-images-idx3-ubyte").string();
  const std::string labels = path("train-labels-idx1-ubyte").string();
  write_bytes(labels, idx_bytes({2}, {1, 2}));

  write_bytes(images, idx_bytes({2, 32, 32}, iota_bytes(2 * 1024, 0)));
  EXPECT_THAT(err(), AllOf(HasSubstr(images), HasSubstr("expected images of dims [N, 28, 28], got [2, 32, 32]")));
  write_bytes(images, idx_bytes({2, 784}, iota_bytes(2 * 784, 0)));
  EXPECT_THAT(err(), AllOf(HasSubstr(images), HasSubstr("got [2, 784]")));
  write_bytes(images, idx_bytes({2, 28, 28}, iota_bytes(2 * 784 - 1, 0)));
  EXPECT_THAT(err(), AllOf(HasSubstr("MNIST: " + images), HasSubstr("truncated IDX data")));
  write_bytes(images, idx_bytes({3, 28, 28}, iota_bytes(3 * 784, 0)));
  EXPECT_THAT(err(), AllOf(HasSubstr(images), HasSubstr("holds 3 images"), HasSubstr(labels),
                           HasSubstr("holds 2 labels")));
  write_bytes(labels, idx_bytes({3}, {1, 10, 2}));
  EXPECT_THAT(err(), AllOf(HasSubstr(labels), HasSubstr("label 10 at index 1 is not a class index in [0, 10)")));
  write_bytes(labels, idx_bytes({3, 1}, {1, 2, 3}));
  EXPECT_THAT(err(), AllOf(HasSubstr(labels), HasSubstr("expected labels of dims [N], got [3, 1]")));
  write_bytes(labels, std::string("\x08\x00\x00\x01", 4));
  EXPECT_THAT(err(), AllOf(HasSubstr(labels), HasSubstr("not an IDX file")));
  fs::remove(labels);
  write_bytes(labels + ".gz", "not gzip");
  EXPECT_THAT(err(), AllOf(HasSubstr(labels + ".gz"), HasSubstr("not gzip data")));
}

TEST_F(MNISTFiles, FashionMNISTHasClothingClassesAndItsOwnName) {
  write_split("train", {9}, false);
  data::FashionMNIST ds(root());
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                                                    "Shirt", "Sneaker", "Bag", "Ankle boot"}));
  EXPECT_EQ(ds.classes()[ds.get(0).target.item<int64_t>()], "Ankle boot");
  EXPECT_THAT(error_of([&] { ds.get(1); }), HasSubstr("FashionMNIST::get: index 1"));
  EXPECT_THAT(error_of([&] { data::FashionMNIST bad(root(), false); }), HasSubstr("FashionMNIST: "));
}

// libtorch's datasets::MNIST: the same files through cohort's reader, float32 [1, 28, 28] / 255.
TEST_F(MNISTFiles, LibtorchMNISTGivesFloatImagesAndInt64Targets) {
  write_split("train", {3, 0, 9}, /*gz=*/false);
  write_split("t10k", {7, 1}, /*gz=*/true, 5);
  data::datasets::MNIST train(root()), test(root(), data::datasets::MNIST::Mode::kTest);
  ASSERT_EQ(train.size(), std::optional<size_t>(3));
  ASSERT_EQ(test.size(), std::optional<size_t>(2));
  EXPECT_TRUE(train.is_train());
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(train.images().sizes(), (std::vector<int64_t>{3, 1, 28, 28}));
  EXPECT_EQ(train.images().dtype(), kFloat32);
  const std::vector<uint8_t> bytes = iota_bytes(2 * 784, 5);
  for (size_t i : {size_t{0}, size_t{100}, size_t{1567}})
    EXPECT_EQ(test.images().view({-1})[static_cast<int64_t>(i)].item<float>(), static_cast<float>(bytes[i]) / 255.0f) << i;
  EXPECT_TRUE(same_tensor(train.targets(), tensor(std::vector<int64_t>{3, 0, 9})));
  data::Example<> e = train.get(2);
  EXPECT_EQ(e.data.sizes(), (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
  EXPECT_THROW(train.get(3), IndexError);
  EXPECT_THAT(error_of([&] { data::datasets::MNIST(root() + "/nowhere"); }),
              AllOf(HasSubstr("train-images-idx3-ubyte"), HasSubstr("does not exist")));
}

// Integration: the Debian package dataset-fashion-mnist (always installed here). Expected values come
// from Python: gzip.open(f).read() and sums over its bytes.
TEST(FashionMNISTPackage, LoadsTheInstalledGzippedFiles) {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  data::FashionMNIST train(root), test(root, /*train=*/false);
  ASSERT_EQ(train.size(), 60000);
  ASSERT_EQ(test.size(), 10000);
  EXPECT_EQ(train.images().sizes(), (std::vector<int64_t>{60000, 28, 28, 1}));
  // Each class is exactly a tenth of each split.
  for (int64_t c = 0; c < 10; ++c) {
    EXPECT_EQ(train.labels().eq(c).sum().item<int64_t>(), 6000) << c;
    EXPECT_EQ(test.labels().eq(c).sum().item<int64_t>(), 1000) << c;
  }
  EXPECT_TRUE(same_tensor(train.labels().slice(0, 0, 10), tensor(std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5})));
  EXPECT_TRUE(same_tensor(test.labels().slice(0, 0, 10), tensor(std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7})));
  EXPECT_EQ(train.images().sum(kInt64).item<int64_t>(), 3431114169);
  EXPECT_EQ(test.images().sum(kInt64).item<int64_t>(), 573469082);
  EXPECT_EQ(train.get(0).data.sum(kInt64).item<int64_t>(), 76247);
  EXPECT_EQ(test.get(0).data.sum(kInt64).item<int64_t>(), 33456);
}

}  // namespace
