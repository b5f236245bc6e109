// data::parse_csv and data::CsvDataset (header, target column, numbers, missing values, classes).
// What parses must parse again to the same rows after writing them back with full quoting.
#include <cstdlib>
#include <string_view>

#include "cohort/core/error.h"
#include "cohort/data/csv.h"
#include "fuzz_util.h"

namespace {

std::string quoted(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += c ? ",\"" : "\"";
      for (char ch : row[c]) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      out += '"';
    }
    out += '\n';
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto rows = cohort::data::parse_csv(text);
    // The rows, written back quoted, parse to themselves (a BOM is not part of the rows).
    if (!text.starts_with("\xEF\xBB\xBF") && cohort::data::parse_csv(quoted(rows)) != rows) std::abort();
  } catch (const cohort::Error&) {
  }
  const auto path = cohort::fuzz::write_input("input.csv", data, size);
  for (auto task : {cohort::data::CsvTask::Classification, cohort::data::CsvTask::Regression}) {
    try {
      cohort::data::CsvDataset ds(path, cohort::data::CsvOptions("y").task(task));
      if (ds.size() < 1 || ds.features().size(0) != ds.size()) std::abort();
      ds.get(ds.size() - 1);
    } catch (const cohort::Error&) {
    }
  }
  return 0;
}
