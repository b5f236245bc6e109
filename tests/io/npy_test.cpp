// .npy: files written by numpy.save (tests/fixtures/generate_io.py) load with the right values and
// cohort writes them back byte for byte; Fortran order, big-endian and version 2.0 files; round trips;
// one corrupted file per validation rule; atomic saves.
//
// The reverse direction, numpy loading cohort's files, is verified outside this binary:
//   COHORT_IO_CHECK_DIR=/tmp/io-check ./cohort_tests --gtest_filter='*ExportForPythonCheck*'
//   /usr/bin/python3 tests/fixtures/generate_io.py --check /tmp/io-check
// (Without COHORT_IO_CHECK_DIR, ExportForPythonCheck writes into a scratch directory and reads back.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include <cstdlib>

#include "cohort/io/npy.h"
#include "cohort/io/safetensors.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace {

class Npy : public ScratchDir {};

// File name (without .npy) -> reference tensor, as npy_cases() in generate_io.py.
std::map<std::string, Tensor> npy_cases() {
  auto t = reference_tensors();
  return {{"f4", t["f32"]}, {"f4_t", t["f32_t"]}, {"f8", t["f64"]}, {"i8", t["i64"]},
          {"i4", t["i32"]}, {"u1", t["u8"]},      {"b1", t["bool"]}, {"empty", t["empty"]}};
}

TEST_F(Npy, LoadsNumpyFiles) {
  for (const auto& [name, t] : npy_cases()) {
    Tensor got = io::load_npy(io_fixture(name + ".npy"));
    EXPECT_TRUE(same_tensor(got, t.contiguous())) << name;
    EXPECT_TRUE(got.is_contiguous()) << name;
  }
}

TEST_F(Npy, WritesNumpyBytes) {
  for (const auto& [name, t] : npy_cases()) {
    io::save_npy(path(name + ".npy"), t);
    EXPECT_EQ(read_bytes(path(name + ".npy")), read_bytes(io_fixture(name + ".npy"))) << name;
  }
}

TEST_F(Npy, LoadsFortranOrderBigEndianAndVersion2) {
  // np.asfortranarray(f8.repeat(2).reshape(2, 3)), loaded as the same logical array.
  Tensor f8 = reference_tensors()["f64"];
  Tensor expected = f8.unsqueeze(1).expand({3, 2}).reshape({2, 3});
  Tensor fortran = io::load_npy(io_fixture("fortran.npy"));
  EXPECT_TRUE(same_tensor(fortran, expected));
  EXPECT_TRUE(fortran.is_contiguous());
  EXPECT_TRUE(same_tensor(io::load_npy(io_fixture("big_endian.npy")), tensor(std::vector<int32_t>{1, -2, 70000})));
  EXPECT_TRUE(same_tensor(io::load_npy(io_fixture("v2.npy")), reference_tensors()["f32"]));
}

TEST_F(Npy, RoundTripsEveryDtypeAndLayout) {
  Tensor base = arange(60, TensorOptions(kFloat64)).reshape({3, 4, 5});
  std::vector<Tensor> cases = {base.permute({2, 0, 1}),
                               base.slice(1, 1, 4, 2).to(kInt64),
                               arange(5, TensorOptions(kInt32)).expand({2, 5}),
                               scalar_tensor(3.5),
                               scalar_tensor(true, TensorOptions(kBool)),
                               empty({0}, TensorOptions(kUInt8)),
                               empty({2, 0, 3}, TensorOptions(kBool)),
                               ones({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
                               ones({3}).requires_grad_()};
  for (size_t i = 0; i < cases.size(); ++i) {
    io::save_npy(path("x.npy"), cases[i]);
    EXPECT_TRUE(same_tensor(io::load_npy(path("x.npy")), cases[i].detach())) << i;
  }
}

// Writes the files that generate_io.py --check verifies with numpy: into $COHORT_IO_CHECK_DIR when it
// is set, else into the scratch directory. Either way they must load back to the same values.
TEST_F(Npy, ExportForPythonCheck) {
  const char* env = std::getenv("COHORT_IO_CHECK_DIR");
  fs::path dir = env ? fs::path(env) : path("export");
  fs::create_directories(dir);
  for (const auto& [name, t] : npy_cases()) {
    io::save_npy(dir / (name + ".npy"), t);
    Tensor back = io::load_npy(dir / (name + ".npy"));
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_TRUE(back.equal(t)) << name;
  }
  io::save_safetensors(dir / "reference.safetensors", reference_tensors(), {{"source", "generate_io.py"}, {"format", "pt"}});
  EXPECT_EQ(io::load_safetensors(dir / "reference.safetensors").size(), reference_tensors().size());
}

// ---- Corrupted files -------------------------------------------------------------------------------

// numpy's header for a float32 (2, 2) (version 1.0, 128 bytes) followed by `data`.
std::string npy_file(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  const size_t len_bytes = major == 1 ? 2 : 4;
  header.append(64 - (8 + len_bytes + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>(header.size() >> (8 * i));
  return out + header + data;
}

class NpyCorrupt : public ScratchDir {
 protected:
  void SetUp() override {
    ScratchDir::SetUp();
    io::save_npy(path("good.npy"), ones({2, 2}));
    good_ = read_bytes(path("good.npy"));
  }
  std::string load_error(const std::string& bytes) {
    write_bytes(path("bad.npy"), bytes);
    std::string e = error_of([&] { io::load_npy(path("bad.npy")); });
    EXPECT_THAT(e, HasSubstr("load_npy: " + path("bad.npy").string() + ": "));
    return e;
  }
  // The good file with `from` replaced by `to` (same length keeps the header length valid).
  std::string edit(const std::string& from, const std::string& to) {
    std::string bytes = good_;
    const size_t at = bytes.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) bytes.replace(at, from.size(), to);
    return load_error(bytes);
  }
  std::string dict_error(const std::string& dict, const std::string& data = std::string(16, '\0')) {
    return load_error(npy_file(dict, data));
  }
  std::string good_;
};

TEST_F(NpyCorrupt, GoodFileLoads) {
  EXPECT_EQ(good_.size(), 128u + 16u);
  EXPECT_TRUE(same_tensor(io::load_npy(path("good.npy")), ones({2, 2})));
  // npy_file() builds the same bytes, so the dict_error() cases differ from a good file only where they say.
  EXPECT_EQ(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }" + std::string(20, ' '),
                     good_.substr(128)),
            good_);
}
TEST_F(NpyCorrupt, TooShort) {
  EXPECT_THAT(load_error(good_.substr(0, 7)), HasSubstr("the file is 7 bytes, too short for a .npy header"));
}
TEST_F(NpyCorrupt, BadMagic) {
  EXPECT_THAT(edit("NUMPY", "NUMPI"), HasSubstr("not a .npy file (the magic string \\x93NUMPY is missing)"));
  EXPECT_THAT(load_error("PK\x03\x04 a zip file, maybe .npz"), HasSubstr("not a .npy file"));
}
TEST_F(NpyCorrupt, BadVersion) {
  std::string bytes = good_;
  bytes[6] = 4;
  EXPECT_THAT(load_error(bytes), HasSubstr("unsupported format version 4.0 (cohort reads 1.0, 2.0 and 3.0)"));
  bytes[6] = 1, bytes[7] = 1;
  EXPECT_THAT(load_error(bytes), HasSubstr("unsupported format version 1.1"));
}
TEST_F(NpyCorrupt, HeaderLengthBeyondFile) {
  std::string bytes = good_;
  bytes[8] = '\xff', bytes[9] = '\xff';
  EXPECT_THAT(load_error(bytes), HasSubstr("header length 65535 exceeds the file size (144 bytes)"));
  EXPECT_THAT(load_error(good_.substr(0, 60)), HasSubstr("header length 118 exceeds the file size (60 bytes)"));
}
TEST_F(NpyCorrupt, MalformedDict) {
  EXPECT_THAT(edit("{'descr'", "['descr'"), HasSubstr("malformed header dict at character 0: expected '{'"));
  EXPECT_THAT(edit("'shape': (2, 2), }", "'shape': (2, 2), ]"), HasSubstr("expected a quoted string"));
  EXPECT_THAT(edit("'fortran_order': False", "'fortran_order': Nope!"), HasSubstr("expected a string, True, False or a tuple"));
  EXPECT_THAT(edit("'descr': '<f4'", "'descr': '<f4 "), HasSubstr("malformed header dict"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), } x"),
              HasSubstr("unexpected text after the closing '}'"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
              HasSubstr("the key 'descr' appears twice"));
  EXPECT_THAT(edit("False", "\x80\x80\x80\x80\x80"), HasSubstr("must be ASCII"));
}
TEST_F(NpyCorrupt, MissingOrUnexpectedKeys) {
  EXPECT_THAT(dict_error("{'descr': '<f4', 'shape': (2, 2), }"), HasSubstr("the header lacks the key 'fortran_order'"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': True}"),
              HasSubstr("unexpected key 'x' in the header"));
}
TEST_F(NpyCorrupt, BadDescr) {
  EXPECT_THAT(edit("<f4", "<i2"), HasSubstr("unsupported dtype '<i2' (cohort reads <f4 <f8 <f2 <i8 <i4 |u1 |b1)"));
  EXPECT_THAT(edit("<f4", "|f4"), HasSubstr("unsupported dtype '|f4'"));
  EXPECT_THAT(edit("'<f4'", "True "), HasSubstr("'descr' must be a string (structured dtypes are not supported)"));
  EXPECT_THAT(dict_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 2), }"),
              HasSubstr("expected a string, True, False or a tuple"));
}
TEST_F(NpyCorrupt, BadFortranOrderAndShape) {
  EXPECT_THAT(edit("'fortran_order': False", "'fortran_order': 'no' "), HasSubstr("'fortran_order' must be True or False"));
  EXPECT_THAT(edit("(2, 2)", "'2, 2'"), HasSubstr("'shape' must be a tuple of integers"));
  EXPECT_THAT(edit("(2, 2)", "(2, -2"), HasSubstr("expected a non-negative integer in the shape"));
  EXPECT_THAT(edit("(2, 2)", "(2.,2)"), HasSubstr("expected ',' or ')' in the shape"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4), }"), HasSubstr("(n) is not a tuple, (n,) is"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
              HasSubstr("shape entry too large"));
  EXPECT_THAT(dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
              HasSubstr("has too many elements (overflow)"));
  EXPECT_THAT(dict_error("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }"),
              HasSubstr("has too many bytes (overflow)"));
}
TEST_F(NpyCorrupt, DataSize) {
  EXPECT_THAT(load_error(good_.substr(0, good_.size() - 1)),
              HasSubstr("the data is 15 bytes, but (2, 2) of float32 needs 16 (truncated file)"));
  EXPECT_THAT(load_error(good_ + "x"), HasSubstr("the data is 17 bytes, but (2, 2) of float32 needs 16 (trailing bytes)"));
}
TEST_F(NpyCorrupt, BoolBytesOtherThanZeroOrOne) {
  EXPECT_THAT(dict_error("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x01\x00\x07", 3)),
              HasSubstr("bool element 2 is the byte 7, not 0 or 1"));
}

// ---- Atomic saves ----------------------------------------------------------------------------------

TEST_F(Npy, FailedSavesLeaveThePreviousFileAndNoTempFile) {
  EXPECT_THAT(error_of([&] { io::save_npy(path("missing/x.npy"), ones({2})); }),
              HasSubstr("save_npy: cannot create '" + path("missing/x.npy").string() + ".tmp."));
  EXPECT_THAT(others(""), IsEmpty());
  fs::create_directories(path("x.npy/inside"));
  EXPECT_THAT(error_of([&] { io::save_npy(path("x.npy"), ones({2})); }),
              HasSubstr("save_npy: " + path("x.npy").string() + " is a directory, not a regular file"));
  EXPECT_TRUE(fs::is_directory(path("x.npy/inside")));
  EXPECT_THAT(others("x.npy"), IsEmpty());
  EXPECT_THAT(error_of([&] { io::save_npy(path("y.npy"), Tensor()); }), HasSubstr("save_npy: the tensor is undefined"));
  // A successful save replaces the old file.
  io::save_npy(path("z.npy"), ones({2}));
  io::save_npy(path("z.npy"), zeros({3}, TensorOptions(kInt64)));
  EXPECT_TRUE(same_tensor(io::load_npy(path("z.npy")), zeros({3}, TensorOptions(kInt64))));
  EXPECT_THAT(others("x.npy").size(), 1u);
}

}  // namespace
