// TensorDataset: rows of two tensors as examples, views rather than copies, and the errors for
// tensors that cannot be paired.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/dataset.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

TEST(TensorDataset, ExamplesAreRowsOfTheTwoTensors) {
  Tensor inputs = arange(24, TensorOptions(kFloat32)).view({4, 2, 3});
  Tensor targets = tensor(std::vector<int64_t>{3, 1, 4, 1});
  data::TensorDataset ds(inputs, targets, {"a", "b", "c", "d", "e"});
  ASSERT_EQ(ds.size(), 4);
  for (int64_t i = 0; i < 4; ++i) {
    data::Example<> e = ds.get(i);
    EXPECT_TRUE(same_tensor(e.data, arange(6 * i, 6 * i + 6, TensorOptions(kFloat32)).view({2, 3}))) << i;
    EXPECT_EQ(e.target.dim(), 0);
    EXPECT_EQ(e.target.item<int64_t>(), std::vector<int64_t>({3, 1, 4, 1})[i]);
  }
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_TRUE(ds.inputs().is_same(inputs));
  EXPECT_TRUE(ds.targets().is_same(targets));
  EXPECT_TRUE(data::TensorDataset(inputs, targets).classes().empty());
}

TEST(TensorDataset, GetReturnsViewsIntoTheTensors) {
  Tensor inputs = zeros({3, 2});
  data::TensorDataset ds(inputs, zeros({3}, TensorOptions(kInt64)));
  EXPECT_EQ(ds.get(2).data.data_ptr<float>(), inputs.data_ptr<float>() + 4);
  EXPECT_EQ(ds.get(2).target.data_ptr<int64_t>(), ds.targets().data_ptr<int64_t>() + 2);
}

TEST(TensorDataset, GetOutsideTheRowsThrowsIndexError) {
  data::TensorDataset ds(zeros({2, 5}), zeros({2}, TensorOptions(kInt64)));
  EXPECT_THROW(ds.get(2), IndexError);
  EXPECT_THROW(ds.get(-1), IndexError);
  EXPECT_THAT(error_of([&] { ds.get(5); }),
              HasSubstr("TensorDataset::get: index 5 is out of range for a dataset of 2 examples"));
}

TEST(TensorDataset, TensorsThatCannotBePairedAreRejected) {
  EXPECT_THAT(error_of([] { data::TensorDataset ds(zeros({3, 2}), zeros({4})); }),
              HasSubstr("TensorDataset: inputs have 3 rows but targets have 4 (shapes [3, 2] and [4])"));
  EXPECT_THAT(error_of([] { data::TensorDataset ds(scalar_tensor(1.0), zeros({1})); }),
              HasSubstr("need a first (sample) dimension, got shapes [] and [1]"));
  EXPECT_THAT(error_of([] { data::TensorDataset ds(Tensor(), zeros({1})); }), HasSubstr("must be defined tensors"));
}

}  // namespace
