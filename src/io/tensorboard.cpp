// TensorBoard's event files: protobuf Events (tensorflow/core/util/event.proto, Summary from
// summary.proto) in TFRecords (Note [TFRecord] in record_file.h), written with the io area's
// hand-written protobuf writer (Note [Protobuf by hand] in onnx_proto.h).
#include "cohort/io/tensorboard.h"

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/io/image.h"
#include "onnx_proto.h"
#include "record_file.h"

namespace cohort::io {

namespace {

// Field numbers of the messages written.
namespace event {
constexpr int kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5;
}
namespace summary {
constexpr int kValue = 1;
}
namespace value {
constexpr int kTag = 1, kSimpleValue = 2, kImage = 4;
}
namespace image {
constexpr int kHeight = 1, kWidth = 2, kColorspace = 3, kEncoded = 4;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string event_bytes(double wall_time, int64_t step, const proto::Writer* summary_or_null,
                        const std::string& file_version = "") {
  proto::Writer e;
  e.fixed64(event::kWallTime, std::bit_cast<uint64_t>(wall_time));
  e.int64(event::kStep, step);
  if (!file_version.empty()) e.bytes(event::kFileVersion, file_version);
  if (summary_or_null) e.message(event::kSummary, *summary_or_null);
  return e.data();
}

proto::Writer summary_of(const proto::Writer& v) {
  proto::Writer s;
  s.message(summary::kValue, v);
  return s;
}

void check_tag(const char* op, const std::string& tag) {
  COHORT_CHECK(!tag.empty(), op, ": the tag is empty; hint: name the series, e.g. \"loss/train\"");
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

SummaryWriter::SummaryWriter(const std::filesystem::path& log_dir) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  COHORT_CHECK(!ec && std::filesystem::is_directory(log_dir), "SummaryWriter: cannot create the log directory '",
               log_dir.string(), "': ", ec ? ec.message() : "it is not a directory");
  // A counter makes names unique within the process, "x" makes the open fail rather than append to a
  // file another writer owns.
  static std::atomic<int> counter{0};
  std::ostringstream name;
  name << "events.out.tfevents." << static_cast<int64_t>(now_seconds()) << "." << hostname() << "." << getpid()
       << "." << counter++;
  path_ = log_dir / name.str();
  file_ = std::fopen(path_.c_str(), "wbx");
  COHORT_CHECK(file_ != nullptr, "SummaryWriter: cannot create '", path_.string(), "': ", std::strerror(errno));
  append(event_bytes(now_seconds(), 0, nullptr, "brain.Event:2"));
  flush();
}

SummaryWriter::~SummaryWriter() {
  if (file_) std::fclose(file_);
}

void SummaryWriter::append(const std::string& event_proto) {
  COHORT_CHECK(file_ != nullptr, "SummaryWriter: '", path_.string(), "' is closed");
  const std::string record = detail::frame_record(event_proto);
  COHORT_CHECK(std::fwrite(record.data(), 1, record.size(), file_) == record.size(), "SummaryWriter: cannot write '",
               path_.string(), "': ", std::strerror(errno));
  if (++pending_ >= 10) flush();
}

void SummaryWriter::add_scalar(const std::string& tag, double value, int64_t step, std::optional<double> walltime) {
  check_tag("SummaryWriter::add_scalar", tag);
  proto::Writer v;
  v.bytes(value::kTag, tag);
  v.float32(value::kSimpleValue, static_cast<float>(value));
  const proto::Writer s = summary_of(v);
  append(event_bytes(walltime.value_or(now_seconds()), step, &s));
}

void SummaryWriter::add_image(const std::string& tag, const Tensor& img, int64_t step, std::optional<double> walltime) {
  check_tag("SummaryWriter::add_image", tag);
  const std::string png = encode_png(img);
  const bool chw = img.is_floating_point();
  proto::Writer i;
  i.int64(image::kHeight, img.size(chw ? 1 : 0));
  i.int64(image::kWidth, img.size(chw ? 2 : 1));
  i.int64(image::kColorspace, img.size(chw ? 0 : 2));
  i.bytes(image::kEncoded, png);
  proto::Writer v;
  v.bytes(value::kTag, tag);
  v.message(value::kImage, i);
  const proto::Writer s = summary_of(v);
  append(event_bytes(walltime.value_or(now_seconds()), step, &s));
}

void SummaryWriter::flush() {
  if (!file_) return;
  COHORT_CHECK(std::fflush(file_) == 0, "SummaryWriter: cannot write '", path_.string(), "': ", std::strerror(errno));
  pending_ = 0;
}

void SummaryWriter::close() {
  if (!file_) return;
  flush();
  std::fclose(file_);
  file_ = nullptr;
}

namespace {

void read_image(std::string_view bytes, const std::string& where, SummaryEvent& e) {
  for (const proto::Field& f : proto::parse(bytes, "read_summary_events", where)) {
    if (f.number == image::kHeight) e.image_height = static_cast<int64_t>(f.varint);
    else if (f.number == image::kWidth) e.image_width = static_cast<int64_t>(f.varint);
    else if (f.number == image::kColorspace) e.image_channels = static_cast<int64_t>(f.varint);
    else if (f.number == image::kEncoded) e.image_png = std::string(f.bytes);
  }
}

void read_summary(std::string_view bytes, const std::string& where, SummaryEvent& e) {
  for (const proto::Field& sv : proto::parse(bytes, "read_summary_events", where)) {
    if (sv.number != summary::kValue) continue;
    for (const proto::Field& f : proto::parse(sv.bytes, "read_summary_events", where)) {
      if (f.number == value::kTag) e.tag = std::string(f.bytes);
      else if (f.number == value::kSimpleValue) e.scalar = std::bit_cast<float>(static_cast<uint32_t>(f.varint));
      else if (f.number == value::kImage) read_image(f.bytes, where, e);
    }
  }
}

}  // namespace

std::vector<SummaryEvent> read_summary_events(const std::filesystem::path& path) {
  const std::string what = "read_summary_events: " + path.string();
  std::ifstream in(path, std::ios::binary);
  COHORT_CHECK(in.good(), what, ": cannot open the file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<SummaryEvent> events;
  for (const std::string& record : detail::read_records(bytes, what)) {
    const std::string where = path.string() + ": event " + std::to_string(events.size());
    SummaryEvent e;
    for (const proto::Field& f : proto::parse(record, "read_summary_events", where)) {
      if (f.number == event::kWallTime) e.wall_time = std::bit_cast<double>(f.varint);
      else if (f.number == event::kStep) e.step = static_cast<int64_t>(f.varint);
      else if (f.number == event::kFileVersion) e.file_version = std::string(f.bytes);
      else if (f.number == event::kSummary) read_summary(f.bytes, where, e);
    }
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace cohort::io
