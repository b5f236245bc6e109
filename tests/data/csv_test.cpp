// CSV text (RFC 4180: quotes, doubled quotes, CRLF, a byte order mark) and CsvDataset: features and
// targets for both tasks, class order, and an error naming the file, row and column for every
// check the reader makes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/csv.h"
#include "cohort/data/dataloader.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using Rows = std::vector<std::vector<std::string>>;

namespace {

TEST(ParseCsv, FieldsQuotesAndLineEnds) {
  EXPECT_EQ(data::parse_csv("a,b\n1,2\n"), (Rows{{"a", "b"}, {"1", "2"}}));
  EXPECT_EQ(data::parse_csv("a,b\r\n1,2"), (Rows{{"a", "b"}, {"1", "2"}}));  // CRLF, no final line break
  EXPECT_EQ(data::parse_csv("\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n"),
            (Rows{{"x, y", "say \"hi\"", "two\nlines"}}));
  EXPECT_EQ(data::parse_csv("a,,\n,\n"), (Rows{{"a", "", ""}, {"", ""}}));
  EXPECT_EQ(data::parse_csv("\xEF\xBB\xBFid\n7\n"), (Rows{{"id"}, {"7"}}));
  EXPECT_EQ(data::parse_csv(" a ;b\n", ';'), (Rows{{" a ", "b"}}));
  EXPECT_EQ(data::parse_csv(""), Rows{});
}

TEST(ParseCsv, MalformedQuotesNameTheLine) {
  EXPECT_THAT(error_of([] { data::parse_csv("a\nb\n\"open, field\n", ',', "t.csv"); }),
              HasSubstr("t.csv: line 3: a quoted field is not closed before the end of the text"));
  EXPECT_THAT(error_of([] { data::parse_csv("a\n\"x\"y,2\n", ',', "t.csv"); }),
              HasSubstr("t.csv: line 2: text after a closing quote, got 'y'"));
  EXPECT_THAT(error_of([] { data::parse_csv("a", '"'); }), HasSubstr("the delimiter cannot be a quote"));
}

class CsvDatasetTest : public ScratchDir {
 protected:
  std::string file(const std::string& text) {
    write_bytes(path("t.csv"), text);
    return path("t.csv").string();
  }
};

TEST_F(CsvDatasetTest, ClassificationFeaturesTargetsAndClassNames) {
  data::CsvDataset ds(file("petal_length, species ,petal_width\n1.4,setosa,0.2\n4.7,versicolor,1.4\n"
                           "5.9,virginica,2.1\n1.3,setosa,0.3\n\n"),
                      data::CsvOptions("species"));
  EXPECT_EQ(ds.size(), 4);
  EXPECT_EQ(ds.feature_names(), (std::vector<std::string>{"petal_length", "petal_width"}));
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
  EXPECT_TRUE(ds.features().equal(tensor({{1.4f, 0.2f}, {4.7f, 1.4f}, {5.9f, 2.1f}, {1.3f, 0.3f}})));
  EXPECT_TRUE(ds.targets().equal(tensor(std::vector<int64_t>{0, 1, 2, 0})));
  data::Example<> e = ds.get(2);
  EXPECT_TRUE(e.data.equal(tensor({5.9f, 2.1f})));
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 2);
  EXPECT_THAT(error_of([&] { ds.get(4); }), HasSubstr("CsvDataset::get: index 4 is out of range for a dataset of 4 rows"));

  // Batches like any dataset: data [B, F], target [B].
  data::DataLoader loader(std::make_shared<data::CsvDataset>(ds), data::DataLoaderOptions().batch_size(3));
  for (const data::Batch& b : loader) {
    EXPECT_EQ(b.data.size(1), 2);
    break;
  }
}

TEST_F(CsvDatasetTest, NumericClassesSortAsNumbers) {
  data::CsvDataset ds(file("x,y\n0,10\n1,2\n2,9\n3,2\n"), data::CsvOptions("y"));
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"2", "9", "10"}));
  EXPECT_TRUE(ds.targets().equal(tensor(std::vector<int64_t>{2, 0, 1, 0})));
}

TEST_F(CsvDatasetTest, RegressionTargetsAreFloatRows) {
  data::CsvDataset ds(file("rooms,price,age\n3,250000.5,12\n5,+4.1e5,3\n"),
                      data::CsvOptions("price").task(data::CsvTask::Regression));
  EXPECT_TRUE(ds.classes().empty());
  EXPECT_EQ(ds.feature_names(), (std::vector<std::string>{"rooms", "age"}));
  EXPECT_TRUE(ds.targets().equal(tensor({{250000.5f}, {410000.f}})));
  EXPECT_EQ(ds.get(1).target.sizes().vec(), (std::vector<int64_t>{1}));
}

TEST_F(CsvDatasetTest, EveryFaultNamesTheFileRowAndColumn) {
  const data::CsvOptions opts("y");
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,b\n1,2\n"), opts); }),
              HasSubstr("t.csv: no column named 'y'; the header has a, b"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\n2\n"), opts); }),
              HasSubstr("t.csv: row 3: expected 2 fields as in the header, got 1"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\nNA,1\n"), opts); }),
              HasSubstr("t.csv: row 3, column 'a': missing value 'NA'; hint: fill in or drop rows"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\n,1\n"), opts); }), HasSubstr("row 3, column 'a': missing value"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,\n"), opts); }), HasSubstr("row 2, column 'y': missing value"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\n2x,1\n"), opts); }),
              HasSubstr("row 3, column 'a': expected a finite number, got '2x'"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\ninf,0\n"), opts); }), HasSubstr("expected a finite number, got 'inf'"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,cat\n"), data::CsvOptions("y").task(data::CsvTask::Regression)); }),
              HasSubstr("row 2, column 'y': expected a finite number, got 'cat'"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\n2,0\n"), opts); }),
              HasSubstr("the target column 'y' has a single value, '0'; a classifier needs at least two classes"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n"), opts); }), HasSubstr("t.csv: no data rows after the header"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file(""), opts); }), HasSubstr("t.csv: the file is empty"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n\"1,0\n"), opts); }), HasSubstr("t.csv: line 2: a quoted field"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(path("missing.csv"), opts); }), HasSubstr("missing.csv"));
  // Text from the file reaches the message escaped, never raw.
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n\x1b[2J,0\n"), opts); }), HasSubstr("got '\\x1b[2J'"));
}

TEST_F(CsvDatasetTest, DuplicateColumnNamesAreRefusedWithTheirPositions) {
  // Training takes columns by position, predicting by name: `f1,f1,label` would train on both columns
  // and predict from the first one twice.
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("f1,f1,label\n1,2,a\n3,4,b\n"), data::CsvOptions("label")); }),
              HasSubstr("CsvDataset: " + path("t.csv").string() + ": the column name 'f1' appears more than once, at "
                        "columns 1 and 2 (counting from 1, as a spreadsheet does); hint: give each column its own name"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("label,x,label,y,label\n" "a,1,a,2,a\nb,3,b,4,b\n"), data::CsvOptions("label")); }),
              HasSubstr("the target column 'label' appears more than once, at columns 1, 3 and 5"));
  // Names are trimmed first, as the reader trims them.
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("x, x,y\n1,2,a\n3,4,b\n"), data::CsvOptions("y")); }),
              HasSubstr("the column name 'x' appears more than once, at columns 1 and 2"));
}

TEST_F(CsvDatasetTest, ReadColumnsRefusesAmbiguousNames) {
  // A column the model reads, twice in the new rows: which one is meant cannot be told.
  EXPECT_THAT(error_of([&] { data::read_csv_columns(file("a,b,a\n1,2,3\n"), {"a", "b"}); }),
              HasSubstr("read_csv_columns: " + path("t.csv").string() + ": the column 'a' that the model reads "
                        "appears more than once, at columns 1 and 3"));
  // A column it does not read may repeat.
  Tensor x = data::read_csv_columns(file("a,note,note,b\n1,x,y,2\n"), {"a", "b"});
  EXPECT_TRUE(x.equal(tensor({{1.f, 2.f}})));
  // A model whose own columns repeat a name (trained before such tables were refused).
  EXPECT_THAT(error_of([&] { data::read_csv_columns(file("f1,label\n1,a\n"), {"f1", "f1"}); }),
              HasSubstr("read_csv_columns: the model's input columns name 'f1' more than once (at 1 and 2 of its 2 "
                        "inputs, counting from 1)"));
}

TEST_F(CsvDatasetTest, ValuesBeyondFloat32AreRefusedNamingRowColumnAndRange) {
  // 1e39 fits a double but not a float32: it would become infinity, then NaN losses.
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,0\n1e39,1\n"), data::CsvOptions("y")); }),
              HasSubstr("CsvDataset: " + path("t.csv").string() + ": row 3, column 'a': 1e39 is outside float32's range "
                        "(-3.40282e+38 to 3.40282e+38)"));
  EXPECT_THAT(error_of([&] { data::CsvDataset(file("a,y\n1,-4e38\n"), data::CsvOptions("y").task(data::CsvTask::Regression)); }),
              HasSubstr("row 2, column 'y': -4e38 is outside float32's range"));
  EXPECT_THAT(error_of([&] { data::read_csv_columns(file("a\n2e40\n"), {"a"}); }),
              HasSubstr("read_csv_columns: " + path("t.csv").string() + ": row 2, column 'a': 2e40 is outside float32's range"));
  // The largest float32 and tiny values (which round to zero or a subnormal) are fine.
  data::CsvDataset ok(file("a,y\n3.4028234e38,0\n1e-50,1\n"), data::CsvOptions("y"));
  EXPECT_EQ(ok.features()[0].item<float>(), std::numeric_limits<float>::max());
}

TEST_F(CsvDatasetTest, ReadColumnsPicksNamedColumnsInOrder) {
  Tensor x = data::read_csv_columns(file("b,label,a\n2,cat,1\n4,,3\n"), {"a", "b"});
  EXPECT_TRUE(x.equal(tensor({{1.f, 2.f}, {3.f, 4.f}})));  // the unused column may be empty
  EXPECT_THAT(error_of([&] { data::read_csv_columns(file("a\n1\n"), {"a", "b"}); }),
              HasSubstr("read_csv_columns: " + path("t.csv").string() + ": no column named 'b'; the header has a"));
  EXPECT_THAT(error_of([&] { data::read_csv_columns(file("a,b\n1,x\n"), {"a", "b"}); }),
              HasSubstr("row 2, column 'b': expected a finite number, got 'x'"));
}

}  // namespace
