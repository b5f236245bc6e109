// CSV text into rows of fields, and CsvDataset on top (see cohort/data/csv.h).
#include "cohort/data/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/file_reader.h"

namespace cohort::data {

std::vector<std::vector<std::string>> parse_csv(std::string_view text, char delimiter, const std::string& where) {
  COHORT_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r', where,
               ": the delimiter cannot be a quote or a line break, got ", escape_text(std::string(1, delimiter)));
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  int64_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto end_row = [&] {
    row.push_back(std::move(field));
    field.clear();
    rows.push_back(std::move(row));
    row.clear();
  };
  while (i < n) {
    // One field per pass, starting at i.
    if (text[i] == '"') {
      const int64_t opened = line;
      ++i;
      for (;;) {
        COHORT_CHECK(i < n, where, ": line ", opened, ": a quoted field is not closed before the end of the text");
        if (text[i] == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i++];
      }
      COHORT_CHECK(i == n || text[i] == delimiter || text[i] == '\n' || text[i] == '\r', where, ": line ", line,
                   ": text after a closing quote, got '", escape_text(std::string(1, text[i])),
                   "'; hint: a quote inside a quoted field is written \"\"");
    } else {
      while (i < n && text[i] != delimiter && text[i] != '\n' && text[i] != '\r') field += text[i++];
    }
    if (i == n) {
      end_row();
      break;
    }
    if (text[i] == delimiter) {
      row.push_back(std::move(field));
      field.clear();
      ++i;
      if (i == n) end_row();  // a trailing delimiter ends with an empty field
      continue;
    }
    // A line break: CRLF or LF (a lone CR too).
    if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
    ++i;
    ++line;
    end_row();
  }
  return rows;
}

namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool is_missing(const std::string& v) {
  std::string lower(v);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.empty() || lower == "na" || lower == "n/a" || lower == "nan" || lower == "null" || lower == "?";
}

// The number v spells, when all of it is one (finite or not).
std::optional<double> number_of(const std::string& v) {
  const char* first = v.data();
  const char* last = first + v.size();
  if (first != last && *first == '+') ++first;
  double x = 0;
  auto [end, ec] = std::from_chars(first, last, x);
  if (ec != std::errc() || end != last || first == last) return std::nullopt;
  return x;
}

// The file's rows, header first, without blank lines at the end; throws for an empty file or one
// without data rows.
std::vector<std::vector<std::string>> read_table(const std::string& op, const std::string& file, char delimiter) {
  const std::vector<uint8_t> bytes = detail::read_file(file, op);
  auto rows = parse_csv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), delimiter,
                        op + ": " + escape_text(file));
  COHORT_CHECK(!rows.empty(), op, ": ", escape_text(file), ": the file is empty; hint: the first row names the columns");
  // A blank line at the end of a file is not a row.
  while (rows.size() > 1 && rows.back().size() == 1 && trimmed(rows.back()[0]).empty()) rows.pop_back();
  COHORT_CHECK(rows.size() >= 2, op, ": ", escape_text(file), ": no data rows after the header");
  for (auto& name : rows[0]) name = trimmed(name);
  return rows;
}

// "<op>: <file>: row <r + 1>, column '<name>'": where a field's error is.
std::string field_where(const std::string& op, const std::string& file, const std::vector<std::vector<std::string>>& rows,
                        size_t r, size_t c) {
  return cohort::detail::str(op, ": ", escape_text(file), ": row ", r + 1, ", column '", escape_text(rows[0][c]), "'");
}

// Field c of data row r (r >= 1), trimmed; a missing value is an error naming the file, row and column.
std::string value_at(const std::string& op, const std::string& file, const std::vector<std::vector<std::string>>& rows,
                     size_t r, size_t c) {
  std::string v = trimmed(rows[r][c]);
  COHORT_CHECK(!is_missing(v), field_where(op, file, rows, r, c), ": missing value '", escape_text(v),
               "'; hint: fill in or drop rows with missing values");
  return v;
}

// Field c of data row r as a finite number; else the error names the file, row and column.
double number_at(const std::string& op, const std::string& file, const std::vector<std::vector<std::string>>& rows,
                 size_t r, size_t c) {
  const std::string v = value_at(op, file, rows, r, c);
  const std::optional<double> number = number_of(v);
  COHORT_CHECK(number && std::isfinite(*number), field_where(op, file, rows, r, c), ": expected a finite number, got '",
               escape_text(v), "'");
  return *number;
}

// Field c of data row r as a float32: a finite number that float32 holds (beyond about 3.4e38 it
// would become infinity, and the NaN it leads to would be blamed on training).
float float_at(const std::string& op, const std::string& file, const std::vector<std::vector<std::string>>& rows,
               size_t r, size_t c) {
  const double x = number_at(op, file, rows, r, c);
  constexpr double kMax = std::numeric_limits<float>::max();
  COHORT_CHECK(std::abs(x) <= kMax, field_where(op, file, rows, r, c), ": ", escape_text(trimmed(rows[r][c])),
               " is outside float32's range (", -kMax, " to ", kMax, "), which cohort computes in; hint: rescale "
               "the column (e.g. to other units) so its values fit");
  return static_cast<float>(x);
}

void check_width(const std::string& op, const std::string& file, const std::vector<std::vector<std::string>>& rows) {
  for (size_t r = 1; r < rows.size(); ++r)
    COHORT_CHECK(rows[r].size() == rows[0].size(), op, ": ", escape_text(file), ": row ", r + 1, ": expected ",
                 rows[0].size(), " fields as in the header, got ", rows[r].size());
}

// "1, 3 and 4": 1-based positions, as a spreadsheet numbers its columns.
std::string positions_of(const std::vector<std::string>& header, const std::string& name) {
  std::vector<size_t> at;
  for (size_t c = 0; c < header.size(); ++c)
    if (header[c] == name) at.push_back(c + 1);
  std::string out;
  for (size_t i = 0; i < at.size(); ++i)
    out += (i == 0 ? "" : i + 1 == at.size() ? " and " : ", ") + std::to_string(at[i]);
  return out;
}

// The first name that the header holds more than once, or nullptr. Columns are matched by name
// when a model meets new rows, so two columns of one name would silently be read as one.
const std::string* first_duplicate(const std::vector<std::string>& header) {
  std::map<std::string, size_t> seen;
  for (const std::string& name : header)
    if (++seen[name] == 2) return &name;
  return nullptr;
}

std::string header_names(const std::vector<std::string>& header) {
  std::string names;
  for (const auto& h : header) names += (names.empty() ? "" : ", ") + escape_text(h);
  return names;
}

}  // namespace

Tensor read_csv_columns(const std::filesystem::path& path, const std::vector<std::string>& names, char delimiter) {
  const std::string op = "read_csv_columns";
  const std::string file = path.string();
  // A model trained before duplicate names were refused may name a column twice; its columns were
  // taken by position then, which names cannot reproduce.
  if (const std::string* dup = first_duplicate(names))
    throw Error(cohort::detail::str(op, ": the model's input columns name '", escape_text(*dup), "' more than once (at ",
                                    positions_of(names, *dup), " of its ", names.size(), " inputs, counting from 1), so "
                                    "rows cannot be matched to them by name; hint: rename the training table's columns "
                                    "and train again"));
  const auto rows = read_table(op, file, delimiter);
  check_width(op, file, rows);
  std::vector<size_t> columns;
  for (const std::string& name : names) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    COHORT_CHECK(it != rows[0].end(), op, ": ", escape_text(file), ": no column named '", escape_text(name),
                 "'; the header has ", header_names(rows[0]));
    COHORT_CHECK(std::count(rows[0].begin(), rows[0].end(), name) == 1, op, ": ", escape_text(file), ": the column '",
                 escape_text(name), "' that the model reads appears more than once, at columns ",
                 positions_of(rows[0], name), " (counting from 1, as a spreadsheet does); hint: keep one of them");
    columns.push_back(static_cast<size_t>(it - rows[0].begin()));
  }
  Tensor out = empty({static_cast<int64_t>(rows.size()) - 1, static_cast<int64_t>(names.size())});
  float* x = out.data_ptr<float>();
  for (size_t r = 1; r < rows.size(); ++r)
    for (size_t c : columns) *x++ = float_at(op, file, rows, r, c);
  return out;
}

CsvDataset::CsvDataset(const std::filesystem::path& path, const CsvOptions& options) : task_(options.task()) {
  const std::string op = "CsvDataset";
  const std::string file = path.string();
  const auto rows = read_table(op, file, options.delimiter());
  const std::vector<std::string>& header = rows[0];
  auto target_it = std::find(header.begin(), header.end(), options.target());
  COHORT_CHECK(target_it != header.end(), op, ": ", escape_text(file), ": no column named '",
               escape_text(options.target()), "'; the header has ", header_names(header));
  // Training takes the columns by position, predicting finds them by name: a duplicate name would
  // give a model that evaluates well and predicts from the wrong column.
  if (const std::string* dup = first_duplicate(header))
    throw Error(cohort::detail::str(op, ": ", escape_text(file), ": ", *dup == options.target() ? "the target column '" : "the column name '",
                                    escape_text(*dup), "' appears more than once, at columns ", positions_of(header, *dup),
                                    " (counting from 1, as a spreadsheet does); hint: give each column its own name "
                                    "(a model finds its columns by name when it predicts)"));
  const auto target = static_cast<size_t>(target_it - header.begin());
  for (size_t c = 0; c < header.size(); ++c)
    if (c != target) feature_names_.push_back(header[c]);
  check_width(op, file, rows);

  const auto count = static_cast<int64_t>(rows.size()) - 1;
  features_ = empty({count, static_cast<int64_t>(feature_names_.size())});
  float* x = features_.data_ptr<float>();
  std::vector<std::string> labels;
  std::vector<float> values;
  for (size_t r = 1; r < rows.size(); ++r) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (c == target && task_ == CsvTask::Classification) {
        labels.push_back(value_at(op, file, rows, r, c));
      } else if (c == target) {
        values.push_back(float_at(op, file, rows, r, c));
      } else {
        *x++ = float_at(op, file, rows, r, c);
      }
    }
  }

  if (task_ == CsvTask::Regression) {
    targets_ = from_blob(values.data(), {count, 1}, TensorOptions(kFloat32)).clone();
    return;
  }
  classes_ = labels;
  std::sort(classes_.begin(), classes_.end());
  classes_.erase(std::unique(classes_.begin(), classes_.end()), classes_.end());
  const bool numeric = std::all_of(classes_.begin(), classes_.end(), [](const std::string& s) { return number_of(s); });
  if (numeric)
    std::stable_sort(classes_.begin(), classes_.end(),
                     [](const std::string& a, const std::string& b) { return *number_of(a) < *number_of(b); });
  COHORT_CHECK(classes_.size() >= 2, op, ": ", escape_text(file), ": the target column '", escape_text(options.target()),
               "' has a single value, '", escape_text(classes_.front()), "'; a classifier needs at least two classes");
  std::map<std::string, int64_t> index;
  for (size_t k = 0; k < classes_.size(); ++k) index[classes_[k]] = static_cast<int64_t>(k);
  targets_ = empty({count}, kInt64);
  int64_t* t = targets_.data_ptr<int64_t>();
  for (const std::string& label : labels) *t++ = index.at(label);
}

Example<> CsvDataset::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "CsvDataset::get: index ", index,
                  " is out of range for a dataset of ", size(), " rows");
  return {features_[index], targets_[index]};
}

}  // namespace cohort::data
