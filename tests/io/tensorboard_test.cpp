// TensorBoard event files: CRC-32C against its published check value, the TFRecord framing, scalars
// and images written and read back (by io::read_summary_events and, where PyPI is reachable, by
// TensorBoard's own loader), one file per writer, truncated and corrupt files, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cohort/io/image.h"
#include "cohort/io/tensorboard.h"
#include "cohort/ops/creation.h"
#include "io/record_file.h"
#include "io_test_util.h"
#include "support/error_of.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "support/test_peers.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using TensorBoard = ScratchDir;

TEST(TfRecord, Crc32cAndFraming) {
  // The check value of CRC-32C (Castagnoli) for "123456789".
  EXPECT_EQ(io::detail::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(io::detail::crc32c(""), 0u);
  const std::string record = io::detail::frame_record("hello");
  EXPECT_EQ(record.size(), 8u + 4u + 5u + 4u);
  const auto records = io::detail::read_records(record + io::detail::frame_record(""), "test");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], "hello");
  EXPECT_EQ(records[1], "");
}

TEST(TfRecord, CorruptRecordsAreNamedAndTruncatedOnesEndTheList) {
  const std::string two = io::detail::frame_record("first") + io::detail::frame_record("second");
  // A writer that died mid-record: the complete records are read.
  EXPECT_EQ(io::detail::read_records(two.substr(0, two.size() - 3), "test").size(), 1u);
  std::string bad_data = two;
  bad_data[14] ^= 1;
  EXPECT_THAT(error_of([&] { io::detail::read_records(bad_data, "test"); }),
              HasSubstr("test: record 0 at byte 0 has corrupt data"));
  std::string bad_length = two;
  bad_length[21 + 2] ^= 1;
  EXPECT_THAT(error_of([&] { io::detail::read_records(bad_length, "test"); }),
              HasSubstr("test: record 1 at byte 21 has a corrupt length"));
}

TEST_F(TensorBoard, ScalarsAndImagesReadBack) {
  fs::path file;
  {
    io::SummaryWriter tb(dir_ / "run");
    file = tb.path();
    for (int64_t step = 0; step < 12; ++step) tb.add_scalar("loss/train", 1.0 / (step + 1), step, 1000.0 + step);
    tb.add_scalar("lr", 0.1, 3);
    tb.add_image("grid", full({3, 4, 5}, 0.5), 7);
    tb.add_image("mask", zeros({6, 2, 1}, kUInt8), 8);
  }
  EXPECT_THAT(file.filename().string(), StartsWith("events.out.tfevents."));
  const auto events = io::read_summary_events(file);
  ASSERT_EQ(events.size(), 1u + 12 + 1 + 2);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  for (int64_t step = 0; step < 12; ++step) {
    const auto& e = events[1 + step];
    EXPECT_EQ(e.tag, "loss/train");
    EXPECT_EQ(e.step, step);
    EXPECT_EQ(e.wall_time, 1000.0 + step);
    ASSERT_TRUE(e.scalar);
    EXPECT_EQ(*e.scalar, static_cast<float>(1.0 / (step + 1)));
  }
  EXPECT_EQ(events[13].tag, "lr");
  const auto& grid = events[14];
  EXPECT_EQ(grid.tag, "grid");
  EXPECT_EQ(grid.step, 7);
  EXPECT_EQ(grid.image_height, 4);
  EXPECT_EQ(grid.image_width, 5);
  EXPECT_EQ(grid.image_channels, 3);
  EXPECT_EQ(grid.image_png, io::encode_png(full({3, 4, 5}, 0.5)));
  EXPECT_EQ(events[15].image_height, 6);
  EXPECT_EQ(events[15].image_channels, 1);
}

TEST_F(TensorBoard, EachWriterHasItsOwnFileAndFlushesAsItGoes) {
  io::SummaryWriter a(dir_), b(dir_);
  EXPECT_NE(a.path(), b.path());
  a.add_scalar("x", 1, 0);
  a.flush();
  EXPECT_EQ(io::read_summary_events(a.path()).size(), 2u);
  a.close();
  EXPECT_THAT(error_of([&] { a.add_scalar("x", 2, 1); }), HasSubstr("is closed"));
}

TEST_F(TensorBoard, Errors) {
  write_bytes(path("file"), "not a directory");
  EXPECT_THAT(error_of([&] { io::SummaryWriter(path("file")); }),
              HasSubstr("SummaryWriter: cannot create the log directory"));
  io::SummaryWriter tb(dir_);
  EXPECT_THAT(error_of([&] { tb.add_scalar("", 1, 0); }), HasSubstr("SummaryWriter::add_scalar: the tag is empty"));
  EXPECT_THAT(error_of([&] { tb.add_image("img", zeros({5, 4}), 0); }), HasSubstr("write_png: "));
  tb.close();
  std::string bytes = read_bytes(tb.path());
  bytes[bytes.size() - 6] ^= 1;
  write_bytes(path("corrupt"), bytes);
  EXPECT_THAT(error_of([&] { io::read_summary_events(path("corrupt")); }), HasSubstr("has corrupt data"));
}

// TensorBoard's own reader (from PyPI) reads the same events.
TEST_F(TensorBoard, TensorBoardsLoaderReadsTheFile) {
  const auto& [python, unavailable] = test_peers_python();
  if (python.empty()) GTEST_SKIP() << "no tensorboard: " << unavailable;
  fs::path file;
  {
    io::SummaryWriter tb(dir_);
    file = tb.path();
    tb.add_scalar("loss/train", 0.25, 5);
    tb.add_scalar("accuracy", 0.875, 6);
    tb.add_image("grid", full({3, 8, 9}, 0.25), 7);
  }
  const Finished f = run_process({python, cohort::testing::fixtures_dir() + "/check_tensorboard.py", file.string()},
                                 dir_, "tensorboard", std::chrono::seconds(120));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto got = nlohmann::json::parse(f.out);
  EXPECT_EQ(got.at("file_version"), "brain.Event:2");
  EXPECT_EQ(got.at("scalars"), nlohmann::json::parse(R"([["loss/train", 5, 0.25], ["accuracy", 6, 0.875]])"));
  const auto& image = got.at("images").at(0);
  EXPECT_EQ(image.at(0), "grid");
  EXPECT_EQ(image.at(1), 7);
  EXPECT_EQ(image.at(2), 8);
  EXPECT_EQ(image.at(3), 9);
  EXPECT_EQ(image.at(4), 3);
  EXPECT_EQ(image.at(5).get<size_t>(), io::encode_png(full({3, 8, 9}, 0.25)).size());
}

}  // namespace
}  // namespace cohort::testing
