// CSV text into rows of fields, and CsvDataset on top (see cohort/data/csv.h).
#include "cohort/data/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/file_reader.h"

namespace cohort::data {

namespace {

// The parser: hands each row's fields to on_row, reusing their strings from row to row, so a big
// file is read without a string per field alive at once.
void for_each_csv_row(std::string_view text, char delimiter, const std::string& where,
                      const std::function<void(std::vector<std::string>& row)>& on_row) {
  COHORT_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r', where,
               ": the delimiter cannot be a quote or a line break, got ", escape_text(std::string(1, delimiter)));
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<std::string> row;
  size_t used = 0;  // fields of the current row in `row`
  std::string field;
  int64_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto end_field = [&] {
    if (used == row.size()) row.emplace_back();
    row[used++].swap(field);
    field.clear();
  };
  auto end_row = [&] {
    end_field();
    row.resize(used);
    on_row(row);
    used = 0;
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
      const size_t start = i;
      while (i < n && text[i] != delimiter && text[i] != '\n' && text[i] != '\r') ++i;
      field.append(text.data() + start, i - start);
    }
    if (i == n) {
      end_row();
      break;
    }
    if (text[i] == delimiter) {
      end_field();
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
}

}  // namespace

std::vector<std::vector<std::string>> parse_csv(std::string_view text, char delimiter, const std::string& where) {
  std::vector<std::vector<std::string>> rows;
  for_each_csv_row(text, delimiter, where, [&](std::vector<std::string>& row) { rows.push_back(row); });
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

// Note [Tables row by row]
// A table is parsed one row at a time into the float buffer that becomes the tensor: the fields of a
// row reuse the previous row's strings, so reading a file costs its bytes and its floats, not a
// string per field (some ten times the file for a table of short numbers).
//
// Reads a table: the header, trimmed, to on_header, then each
// data row to on_row with its index r (the header's is 0; messages say row r + 1). Blank lines at the
// end are not rows; a row whose width differs from the header's is an error, as are an empty file
// and one without data rows.
void read_table(const std::string& op, const std::string& file, char delimiter,
                const std::function<void(std::vector<std::string>& header)>& on_header,
                const std::function<void(const std::vector<std::string>& row, size_t r)>& on_row) {
  const std::vector<uint8_t> bytes = detail::read_file(file, op);
  size_t r = 0;        // rows seen, the header included
  size_t blank = 0;    // blank lines not passed on yet: rows only if a row follows them
  size_t width = 0;
  auto pass = [&](const std::vector<std::string>& row, size_t at) {
    COHORT_CHECK(row.size() == width, op, ": ", escape_text(file), ": row ", at + 1, ": expected ", width,
                 " fields as in the header, got ", row.size());
    on_row(row, at);
  };
  for_each_csv_row(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), delimiter,
                   op + ": " + escape_text(file), [&](std::vector<std::string>& row) {
                     if (r == 0) {
                       for (auto& name : row) name = trimmed(name);
                       width = row.size();
                       on_header(row);
                     } else if (row.size() == 1 && trimmed(row[0]).empty()) {
                       ++blank;
                     } else {
                       const std::vector<std::string> empty_row{""};
                       for (size_t k = 0; k < blank; ++k) pass(empty_row, r - blank + k);
                       blank = 0;
                       pass(row, r);
                     }
                     ++r;
                   });
  COHORT_CHECK(r > 0, op, ": ", escape_text(file), ": the file is empty; hint: the first row names the columns");
  COHORT_CHECK(r - blank >= 2, op, ": ", escape_text(file), ": no data rows after the header");
}

// "<op>: <file>: row <r + 1>, column '<name>'": where a field's error is.
std::string field_where(const std::string& op, const std::string& file, const std::vector<std::string>& header,
                        size_t r, size_t c) {
  return cohort::detail::str(op, ": ", escape_text(file), ": row ", r + 1, ", column '", escape_text(header[c]), "'");
}

// Where a field is: the file, the header, the row and its index.
struct Field {
  const std::string& op;
  const std::string& file;
  const std::vector<std::string>& header;
  const std::vector<std::string>& row;
  size_t r;
  std::string where(size_t c) const { return field_where(op, file, header, r, c); }
};

// Field c of data row r (r >= 1), trimmed; a missing value is an error naming the file, row and column.
std::string value_at(const Field& f, size_t c) {
  std::string v = trimmed(f.row[c]);
  COHORT_CHECK(!is_missing(v), f.where(c), ": missing value '", escape_text(v),
               "'; hint: fill in or drop rows with missing values");
  return v;
}

// Field c of data row r as a finite number; else the error names the file, row and column.
double number_at(const Field& f, size_t c) {
  const std::string v = value_at(f, c);
  const std::optional<double> number = number_of(v);
  COHORT_CHECK(number && std::isfinite(*number), f.where(c), ": expected a finite number, got '",
               escape_text(v), "'");
  return *number;
}

// Field c of data row r as a float32: a finite number that float32 holds (beyond about 3.4e38 it
// would become infinity, and the NaN it leads to would be blamed on training).
float float_at(const Field& f, size_t c) {
  const double x = number_at(f, c);
  constexpr double kMax = std::numeric_limits<float>::max();
  COHORT_CHECK(std::abs(x) <= kMax, f.where(c), ": ", escape_text(trimmed(f.row[c])),
               " is outside float32's range (", -kMax, " to ", kMax, "), which cohort computes in; hint: rescale "
               "the column (e.g. to other units) so its values fit");
  return static_cast<float>(x);
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
  std::vector<std::string> header;
  std::vector<size_t> columns;
  std::vector<float> values;
  size_t rows = 0;
  read_table(op, file, delimiter,
             [&](std::vector<std::string>& names_row) {
               header = names_row;
               for (const std::string& name : names) {
                 auto it = std::find(header.begin(), header.end(), name);
                 COHORT_CHECK(it != header.end(), op, ": ", escape_text(file), ": no column named '", escape_text(name),
                              "'; the header has ", header_names(header));
                 COHORT_CHECK(std::count(header.begin(), header.end(), name) == 1, op, ": ", escape_text(file),
                              ": the column '", escape_text(name), "' that the model reads appears more than once, at "
                              "columns ", positions_of(header, name), " (counting from 1, as a spreadsheet does); "
                              "hint: keep one of them");
                 columns.push_back(static_cast<size_t>(it - header.begin()));
               }
             },
             [&](const std::vector<std::string>& row, size_t r) {
               const Field f{op, file, header, row, r};
               for (size_t c : columns) values.push_back(float_at(f, c));
               ++rows;
             });
  return from_blob(values.data(), {static_cast<int64_t>(rows), static_cast<int64_t>(names.size())},
                   TensorOptions(kFloat32))
      .clone();
}

CsvDataset::CsvDataset(const std::filesystem::path& path, const CsvOptions& options) : task_(options.task()) {
  const std::string op = "CsvDataset";
  const std::string file = path.string();
  std::vector<std::string> header;
  size_t target = 0;
  std::vector<float> features;
  std::map<std::string, int64_t> label_ids;  // each distinct label, numbered in order of appearance
  std::vector<int64_t> labels;               // per row
  std::vector<float> values;
  int64_t count = 0;
  read_table(
      op, file, options.delimiter(),
      [&](std::vector<std::string>& names) {
        header = names;
        auto target_it = std::find(header.begin(), header.end(), options.target());
        COHORT_CHECK(target_it != header.end(), op, ": ", escape_text(file), ": no column named '",
                     escape_text(options.target()), "'; the header has ", header_names(header));
        // Training takes the columns by position, predicting finds them by name: a duplicate name would
        // give a model that evaluates well and predicts from the wrong column.
        if (const std::string* dup = first_duplicate(header))
          throw Error(cohort::detail::str(
              op, ": ", escape_text(file), ": ", *dup == options.target() ? "the target column '" : "the column name '",
              escape_text(*dup), "' appears more than once, at columns ", positions_of(header, *dup),
              " (counting from 1, as a spreadsheet does); hint: give each column its own name "
              "(a model finds its columns by name when it predicts)"));
        target = static_cast<size_t>(target_it - header.begin());
        for (size_t c = 0; c < header.size(); ++c)
          if (c != target) feature_names_.push_back(header[c]);
      },
      [&](const std::vector<std::string>& row, size_t r) {
        const Field f{op, file, header, row, r};
        for (size_t c = 0; c < header.size(); ++c) {
          if (c == target && task_ == CsvTask::Classification)
            labels.push_back(label_ids.emplace(value_at(f, c), static_cast<int64_t>(label_ids.size())).first->second);
          else if (c == target) values.push_back(float_at(f, c));
          else features.push_back(float_at(f, c));
        }
        ++count;
      });
  features_ = from_blob(features.data(), {count, static_cast<int64_t>(feature_names_.size())}, TensorOptions(kFloat32))
                  .clone();
  features = {};

  if (task_ == CsvTask::Regression) {
    targets_ = from_blob(values.data(), {count, 1}, TensorOptions(kFloat32)).clone();
    return;
  }
  for (const auto& [label, id] : label_ids) classes_.push_back(label);  // sorted, distinct
  const bool numeric = std::all_of(classes_.begin(), classes_.end(), [](const std::string& s) { return number_of(s); });
  if (numeric)
    std::stable_sort(classes_.begin(), classes_.end(),
                     [](const std::string& a, const std::string& b) { return *number_of(a) < *number_of(b); });
  COHORT_CHECK(classes_.size() >= 2, op, ": ", escape_text(file), ": the target column '", escape_text(options.target()),
               "' has a single value, '", escape_text(classes_.front()), "'; a classifier needs at least two classes");
  std::vector<int64_t> class_of_id(label_ids.size());
  for (size_t k = 0; k < classes_.size(); ++k) class_of_id[static_cast<size_t>(label_ids.at(classes_[k]))] = static_cast<int64_t>(k);
  targets_ = empty({count}, kInt64);
  int64_t* t = targets_.data_ptr<int64_t>();
  for (int64_t id : labels) *t++ = class_of_id[static_cast<size_t>(id)];
}

Example<> CsvDataset::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "CsvDataset::get: index ", index,
                  " is out of range for a dataset of ", size(), " rows");
  return {features_[index], targets_[index]};
}

}  // namespace cohort::data
