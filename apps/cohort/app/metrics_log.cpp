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
}

}  // namespace cohort::app
