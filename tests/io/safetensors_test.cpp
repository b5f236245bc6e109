// safetensors: files written by a spec-following Python writer (tests/fixtures/generate_io.py) load
// with the right values and cohort writes them back byte for byte; round trips of every dtype, 0-d,
// empty and non-contiguous tensors; one corrupted file per validation rule; atomic saves.
// The reverse direction (cohort's files read by Python) is checked by running the generator with
// --check on the output of ExportForPythonCheck (see tests/io/npy_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include <cstring>

#include "cohort/io/safetensors.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace {

class Safetensors : public ScratchDir {};

const io::Metadata kMetadata = {{"source", "generate_io.py"}, {"format", "pt"}};

TEST_F(Safetensors, LoadsPythonReference) {
  auto loaded = io::load_safetensors(io_fixture("reference.safetensors"));
  auto expected = reference_tensors();
  ASSERT_EQ(loaded.size(), expected.size());
  for (const auto& [name, t] : expected) {
    ASSERT_TRUE(loaded.contains(name)) << name;
    EXPECT_TRUE(same_tensor(loaded[name], t.contiguous())) << name;
    EXPECT_TRUE(loaded[name].is_contiguous());
  }
  // File order: I64, F64, F32 (by name), I32, U8, BOOL.
  EXPECT_EQ(loaded.keys(), (std::vector<std::string>{"i64", "f64", "empty", "f32", "f32_t", "i32", "u8", "bool"}));
  EXPECT_EQ(io::load_safetensors_metadata(io_fixture("reference.safetensors")), kMetadata);
}

TEST_F(Safetensors, WritesPythonReferenceBytes) {
  const std::string expected = read_bytes(io_fixture("reference.safetensors"));
  io::save_safetensors(path("map.safetensors"), reference_tensors(), kMetadata);
  EXPECT_EQ(read_bytes(path("map.safetensors")), expected);
  // An OrderedDict in another order gives the same bytes.
  OrderedDict<std::string, Tensor> dict;
  auto ref = reference_tensors();
  for (auto it = ref.rbegin(); it != ref.rend(); ++it) dict.insert(it->first, it->second);
  io::save_safetensors(path("dict.safetensors"), dict, kMetadata);
  EXPECT_EQ(read_bytes(path("dict.safetensors")), expected);
}

TEST_F(Safetensors, LoadsUnsortedUnpaddedFileWithoutMetadata) {
  auto loaded = io::load_safetensors(io_fixture("unsorted.safetensors"));
  auto expected = reference_tensors();
  EXPECT_EQ(loaded.keys(), (std::vector<std::string>{"f64", "i32", "u8"}));  // insertion order of the writer
  for (const auto& item : loaded) EXPECT_TRUE(same_tensor(item.value(), expected[item.key()])) << item.key();
  EXPECT_THAT(io::load_safetensors_metadata(io_fixture("unsorted.safetensors")), IsEmpty());
}

TEST_F(Safetensors, RoundTripsEveryDtypeAndLayout) {
  Tensor base = arange(24, TensorOptions(kFloat64)).reshape({2, 3, 4});
  std::map<std::string, Tensor> tensors = reference_tensors();
  tensors["permuted"] = base.permute({2, 0, 1});
  tensors["strided"] = base.slice(2, 0, 4, 3);
  tensors["expanded"] = arange(3, TensorOptions(kInt32)).expand({4, 3});  // stride 0
  tensors["offset_view"] = base.select(0, 1).to(kInt64);
  tensors["requires_grad"] = ones({2}).requires_grad_();
  tensors["scalar_bool"] = scalar_tensor(true, TensorOptions(kBool));
  tensors["empty_u8"] = empty({3, 0, 2}, TensorOptions(kUInt8));
  tensors["weird name/with.dots \"quotes\" \xc3\xa9"] = ones({1}, TensorOptions(kUInt8));
  io::save_safetensors(path("t.safetensors"), tensors, {{"k", "v\n\"x\""}});
  auto loaded = io::load_safetensors(path("t.safetensors"));
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, t] : tensors) EXPECT_TRUE(same_tensor(loaded[name], t.detach())) << name;
  EXPECT_FALSE(loaded["requires_grad"].requires_grad());
  EXPECT_EQ(io::load_safetensors_metadata(path("t.safetensors")), (io::Metadata{{"k", "v\n\"x\""}}));
  EXPECT_EQ(read_bytes(path("t.safetensors")).substr(8, 1), "{");
}

TEST_F(Safetensors, RoundTripsNoTensors) {
  io::save_safetensors(path("e.safetensors"), std::map<std::string, Tensor>{});
  EXPECT_EQ(read_bytes(path("e.safetensors")), std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  EXPECT_TRUE(io::load_safetensors(path("e.safetensors")).is_empty());
}

TEST_F(Safetensors, SaveErrors) {
  EXPECT_THAT(error_of([&] { io::save_safetensors(path("x"), {{"a", Tensor()}}); }),
              HasSubstr("save_safetensors: tensor 'a' is undefined"));
  EXPECT_THAT(error_of([&] { io::save_safetensors(path("x"), {{"__metadata__", ones({1})}}); }),
              HasSubstr("'__metadata__' is reserved"));
  EXPECT_THAT(error_of([&] { io::save_safetensors(path("x"), {{"bad\xff", ones({1})}}); }), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(others(""), IsEmpty());
}

// ---- Corrupted files -------------------------------------------------------------------------------

// b: I64 [2] at [0, 16), a: F32 [2, 2] at [16, 32).
std::string good_file(const fs::path& p) {
  io::save_safetensors(p, {{"a", ones({2, 2})}, {"b", tensor(std::vector<int64_t>{1, 2})}}, {{"m", "v"}});
  return read_bytes(p);
}
std::string header_of(const std::string& file) {
  uint64_t n;
  std::memcpy(&n, file.data(), 8);
  return file.substr(8, n);
}
std::string with_length(uint64_t n, const std::string& rest) { return std::string(reinterpret_cast<char*>(&n), 8) + rest; }
// The good file with `from` replaced by `to` in its header (the length prefix rewritten to match).
std::string edit_header(const std::string& file, const std::string& from, const std::string& to) {
  std::string header = header_of(file);
  const size_t at = header.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in " << header;
  if (at != std::string::npos) header.replace(at, from.size(), to);
  return with_length(header.size(), header) + file.substr(8 + header_of(file).size());
}

class SafetensorsCorrupt : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    good_ = good_file(path("good.safetensors"));
  }
  // The error of loading these bytes; the message must name the file.
  std::string load_error(const std::string& bytes) {
    write_bytes(path("bad.safetensors"), bytes);
    std::string e = error_of([&] { io::load_safetensors(path("bad.safetensors")); });
    EXPECT_THAT(e, HasSubstr("load_safetensors: " + path("bad.safetensors").string() + ": "));
    return e;
  }
  std::string edit(const std::string& from, const std::string& to) { return load_error(edit_header(good_, from, to)); }
  std::string good_;
};

TEST_F(SafetensorsCorrupt, GoodFileLoads) {
  EXPECT_EQ(header_of(good_).substr(0, 25), R"({"__metadata__":{"m":"v"})");
  EXPECT_EQ(io::load_safetensors(path("good.safetensors")).size(), 2u);
}
TEST_F(SafetensorsCorrupt, MissingFile) {
  EXPECT_THAT(error_of([&] { io::load_safetensors(path("nope")); }), HasSubstr("cannot open"));
  EXPECT_THAT(error_of([&] { io::load_safetensors(dir_); }), HasSubstr("is a directory"));
}
TEST_F(SafetensorsCorrupt, ShorterThanEightBytes) {
  EXPECT_THAT(load_error(good_.substr(0, 5)), HasSubstr("the file is 5 bytes, shorter than the 8-byte header length"));
  EXPECT_THAT(load_error(""), HasSubstr("the file is 0 bytes"));
}
TEST_F(SafetensorsCorrupt, HeaderLengthLargerThanFile) {
  EXPECT_THAT(load_error(with_length(100000, good_.substr(8))), HasSubstr("header length 100000 exceeds the file size"));
  EXPECT_THAT(load_error(good_.substr(0, 20)), HasSubstr("exceeds the file size (20 bytes)"));
}
TEST_F(SafetensorsCorrupt, AbsurdHeaderLength) {
  EXPECT_THAT(load_error(with_length(uint64_t{1} << 40, good_.substr(8))), HasSubstr("header length 1099511627776 is absurd"));
  EXPECT_THAT(load_error(with_length(~uint64_t{0}, good_.substr(8))), HasSubstr("is absurd"));
}
TEST_F(SafetensorsCorrupt, InvalidJson) {
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[2"), HasSubstr("the header is not valid JSON"));
  EXPECT_THAT(edit("{\"__metadata__\"", "[\"__metadata__\""), HasSubstr("does not start with '{'"));
  EXPECT_THAT(load_error(with_length(0, "")), HasSubstr("does not start with '{'"));
  EXPECT_THAT(edit("\"m\":\"v\"", "\"m\":\"\xff\""), HasSubstr("not valid JSON"));
}
TEST_F(SafetensorsCorrupt, NonObjectEntries) {
  EXPECT_THAT(edit(R"({"dtype":"I64","shape":[2],"data_offsets":[0,16]})", "[0,16]"),
              HasSubstr("tensor 'b': expected an object {dtype, shape, data_offsets}, got [0,16]"));
  EXPECT_THAT(edit(R"({"m":"v"})", R"("m")"), HasSubstr("__metadata__ must be an object of strings"));
  EXPECT_THAT(edit(R"({"m":"v"})", R"({"m":1})"), HasSubstr("__metadata__ value of 'm' must be a string, got 1"));
  EXPECT_THAT(edit("\"shape\":[2],", ""), HasSubstr("tensor 'b': missing field 'shape'"));
  EXPECT_THAT(edit("\"shape\":[2],", "\"shape\":[2],\"x\":1,"), HasSubstr("tensor 'b': unexpected field 'x'"));
  EXPECT_THAT(edit(R"("dtype":"I64")", R"("dtype":64)"), HasSubstr("tensor 'b': unsupported dtype 64"));
}
TEST_F(SafetensorsCorrupt, UnknownDtype) {
  EXPECT_THAT(edit("\"I64\"", "\"I16\""),
              HasSubstr("tensor 'b': unsupported dtype \"I16\" (cohort reads F32, F64, BF16, F16, I64, I32, U8, BOOL)"));
}
TEST_F(SafetensorsCorrupt, BadShape) {
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[-2]"), HasSubstr("tensor 'b': shape must hold non-negative integers, got [-2]"));
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[2.0]"), HasSubstr("non-negative integers, got [2.0]"));
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[\"2\"]"), HasSubstr("non-negative integers"));
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[18446744073709551615]"), HasSubstr("non-negative integers"));
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":2"), HasSubstr("shape must be an array of integers, got 2"));
}
TEST_F(SafetensorsCorrupt, ShapeProductOverflow) {
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[4294967296,4294967296]"), HasSubstr("has too many elements (overflow)"));
  EXPECT_THAT(edit("\"shape\":[2]", "\"shape\":[4611686018427387904]"), HasSubstr("has too many bytes (overflow)"));
}
TEST_F(SafetensorsCorrupt, OffsetsNotMatchingDtypeSize) {
  EXPECT_THAT(edit("[0,16]", "[0,8]"), HasSubstr("tensor 'b': data_offsets [0,8] span 8 bytes, but I64 [2] needs 16"));
  EXPECT_THAT(edit("[0,16]", "[16,0]"), HasSubstr("data_offsets [16,0] end before they begin"));
  EXPECT_THAT(edit("[0,16]", "[0,-16]"), HasSubstr("data_offsets must be [begin, end] with non-negative integers"));
  EXPECT_THAT(edit("[0,16]", "[0,16,32]"), HasSubstr("data_offsets must be [begin, end]"));
}
TEST_F(SafetensorsCorrupt, OffsetsOutOfRange) {
  EXPECT_THAT(edit(R"("shape":[2,2],"data_offsets":[16,32])", R"("shape":[2,4],"data_offsets":[16,48])"),
              HasSubstr("tensor 'a': data_offsets [16,48] run past the end of the byte buffer (32 bytes)"));
}
TEST_F(SafetensorsCorrupt, OverlappingRanges) {
  EXPECT_THAT(edit("[16,32]", "[8,24]"), HasSubstr("tensors 'b' [0, 16) and 'a' [8, 24) overlap"));
}
TEST_F(SafetensorsCorrupt, Holes) {
  EXPECT_THAT(edit(R"("shape":[2],"data_offsets":[0,16])", R"("shape":[1],"data_offsets":[0,8])"),
              HasSubstr("bytes [8, 16) of the byte buffer belong to no tensor (a hole before 'a')"));
  EXPECT_THAT(load_error(good_ + std::string(8, '\0')),
              HasSubstr("bytes [32, 40) at the end of the byte buffer belong to no tensor"));
  EXPECT_THAT(load_error(good_.substr(0, good_.size() - 4)), HasSubstr("run past the end of the byte buffer (28 bytes)"));
}
TEST_F(SafetensorsCorrupt, DuplicateKeys) {
  EXPECT_THAT(edit("\"a\":", "\"b\":"), HasSubstr("the header has the key 'b' twice"));
  EXPECT_THAT(edit("\"shape\":[2],", "\"shape\":[2],\"shape\":[2],"), HasSubstr("the key 'shape' twice"));
}
TEST_F(SafetensorsCorrupt, BoolBytesOtherThanZeroOrOne) {
  io::save_safetensors(path("b.safetensors"), {{"m", tensor({true, false})}});
  std::string bytes = read_bytes(path("b.safetensors"));
  bytes.back() = 2;
  EXPECT_THAT(load_error(bytes), HasSubstr("tensor 'm': BOOL element 1 is the byte 2, not 0 or 1"));
}

// ---- Atomic saves ----------------------------------------------------------------------------------

TEST_F(Safetensors, FailedSaveToMissingDirectoryLeavesNothing) {
  const std::string e = error_of([&] { io::save_safetensors(path("no/such/dir/w.safetensors"), {{"a", ones({1})}}); });
  EXPECT_THAT(e, HasSubstr("save_safetensors: cannot create '" + path("no/such/dir/w.safetensors").string() + ".tmp."));
  EXPECT_THAT(e, HasSubstr("No such file or directory"));
  EXPECT_THAT(others(""), IsEmpty());
}

TEST_F(Safetensors, DirectoryTargetIsRefusedAndLeftAlone) {
  // A rename that fails after the check is tested in tests/io/file_test.cpp.
  fs::create_directories(path("w.safetensors/inside"));
  const std::string e = error_of([&] { io::save_safetensors(path("w.safetensors"), {{"a", ones({1})}}); });
  EXPECT_THAT(e, HasSubstr("save_safetensors: " + path("w.safetensors").string() + " is a directory, not a regular file"));
  EXPECT_TRUE(fs::is_directory(path("w.safetensors/inside")));
  EXPECT_THAT(others("w.safetensors"), IsEmpty());
}

TEST_F(Safetensors, FailedWriteKeepsThePreviousFile) {
  // A full disk, simulated by a file-size limit: the write of the temp file fails half way.
  io::save_safetensors(path("w.safetensors"), {{"old", ones({4})}});
  const std::string before = read_bytes(path("w.safetensors"));
  rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old_limit;
  limit.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const std::string e = error_of([&] { io::save_safetensors(path("w.safetensors"), {{"new", zeros({1 << 18})}}); });
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);
  EXPECT_THAT(e, HasSubstr("write failed: File too large"));
  EXPECT_EQ(read_bytes(path("w.safetensors")), before);
  EXPECT_THAT(others("w.safetensors"), IsEmpty());
  EXPECT_TRUE(same_tensor(io::load_safetensors(path("w.safetensors"))["old"], ones({4})));
}

}  // namespace
