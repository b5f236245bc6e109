// Tables in CSV files: a parser for RFC 4180 text and a dataset of numeric columns for the MLP.
//
//   data::CsvDataset iris("iris.csv", data::CsvOptions("species"));    // classification by name
//   data::Example<> e = iris.get(0);   // data float32 [4] (the other columns), target int64 0-d
//   data::CsvDataset houses("houses.csv", data::CsvOptions("price").task(data::CsvTask::Regression));
//   // target float32 [1]
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/data/dataset.h"

namespace cohort::data {

// The fields of CSV text, row by row (RFC 4180): fields separated by `delimiter`, rows by LF or
// CRLF; a field in double quotes may hold delimiters, line breaks and "" for a quote. Surrounding
// spaces of unquoted fields are kept (the caller trims). A UTF-8 byte order mark at the start is
// skipped, and a final line break does not start an empty row. Throws cohort::Error starting with
// `where` and naming the line for an unterminated quote or text after a closing quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, char delimiter = ',',
                                                const std::string& where = "parse_csv");

enum class CsvTask {
  Classification,  // the target column's distinct values are the classes (sorted; numerically when all are numbers)
  Regression,      // the target column is a number
};

struct CsvOptions {
  explicit CsvOptions(std::string target) : target_(std::move(target)) {}
  CsvOptions& target(std::string v) { target_ = std::move(v); return *this; }
  CsvOptions& task(CsvTask v) { task_ = v; return *this; }
  CsvOptions& delimiter(char v) { delimiter_ = v; return *this; }
  const std::string& target() const { return target_; }
  CsvTask task() const { return task_; }
  char delimiter() const { return delimiter_; }

 private:
  std::string target_;
  CsvTask task_ = CsvTask::Classification;
  char delimiter_ = ',';
};

// A CSV file with a header row: the column named options.target() is the target, every other
// column a float32 feature. The whole file is read and checked in the constructor. Throws
// cohort::Error naming the file (and the row and column, counting the header as row 1) when the
// file cannot be read, has no header or no data rows, the target column does not exist, two columns
// share a name (with their 1-based positions: new rows are matched to a model by name), a row
// has more or fewer fields than the header, a value is missing (empty, NA, NaN) or is not a finite
// number (features; a regression target), or a classification target has a single class.
class CsvDataset : public IndexedDataset {
 public:
  CsvDataset(const std::filesystem::path& path, const CsvOptions& options);

  int64_t size() const override { return features_.size(0); }
  // data: float32 [features], a view into features(); target: int64 0-d (classification) or
  // float32 [1] (regression). Throws cohort::IndexError outside [0, size()).
  Example<> get(int64_t index) const override;
  // The class names (classification; empty for regression): index i is classes()[i].
  std::vector<std::string> classes() const override { return classes_; }

  const std::vector<std::string>& feature_names() const { return feature_names_; }
  const Tensor& features() const { return features_; }  // float32 [N, F]
  const Tensor& targets() const { return targets_; }    // int64 [N] or float32 [N, 1]
  CsvTask task() const { return task_; }

 private:
  CsvTask task_;
  std::vector<std::string> feature_names_, classes_;
  Tensor features_, targets_;
};

// The columns `names` (in that order) of a CSV file with a header row, as float32 [rows, names.size()]:
// new rows for a model trained on a CsvDataset (other columns, such as the target, are ignored). The
// same checks and errors as CsvDataset: a missing column, a missing value or a non-number names the
// file, row and column; a name in `names` that the file's header (or `names` itself) holds twice is
// refused with the columns' 1-based positions.
Tensor read_csv_columns(const std::filesystem::path& path, const std::vector<std::string>& names, char delimiter = ',');

}  // namespace cohort::data
