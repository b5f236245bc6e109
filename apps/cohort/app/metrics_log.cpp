// The JSON-lines metrics file.
#include "app/metrics_log.h"
#include "app/json_text.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cohort/core/error.h"
#include "cohort/io/file.h"

namespace cohort::app {

MetricsLog::MetricsLog(const std::filesystem::path& dir, int64_t resume_step) : path_(dir / "metrics.jsonl") {
  std::string kept;
  if (resume_step >= 0) {
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded()) continue;  // a line torn by a crash
      if (record.value("kind", "") == "failure") continue;  // the run goes on from an earlier step
      if (record.value("kind", "") != "config" && record.value("step", int64_t{0}) > resume_step) continue;
      kept += line + "\n";
    }
  }
  // The kept lines replace the file atomically, so a crash here loses nothing.
  io::write_file(path_, kept);
  out_.open(path_, std::ios::app);
  COHORT_CHECK(out_.good(), "cohort train: cannot append to ", path_.string());
}

void MetricsLog::write(const nlohmann::json& record) {
  // Generated text and file names may hold bytes that are not UTF-8: JSON gets U+FFFD for them.
  out_ << json_text(record) << "\n";
  out_.flush();
  COHORT_CHECK(out_.good(), "cohort train: writing ", path_.string(), " failed (disk full?)");
  const std::string kind = record.value("kind", "");
  if (!tensorboard_ || (kind != "step" && kind != "epoch")) return;
  // Every number but the counters, as "<kind>/<name>" at the record's step.
  const int64_t step = record.value("step", int64_t{0});
  for (const auto& [name, value] : record.items())
    if (value.is_number() && name != "step" && name != "epoch")
      tensorboard_->add_scalar(kind + "/" + name, value.get<double>(), step);
  if (kind == "epoch") tensorboard_->flush();
}

void MetricsLog::mirror_to_tensorboard(const std::filesystem::path& dir) {
  tensorboard_ = std::make_unique<io::SummaryWriter>(dir);
}

void MetricsLog::image(const std::string& tag, const Tensor& image, int64_t step) {
  if (!tensorboard_) return;
  tensorboard_->add_image(tag, image, step);
  tensorboard_->flush();
}

}  // namespace cohort::app
