// libtorch's batch transforms: Stack, Lambda, TensorLambda, BatchLambda, Collate and a user's own
// Stack specialisation, applied to hand-made batches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/stack.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"

using namespace cohort;
using namespace cohort::data;
using cohort::testing::error_of;
using cohort::testing::same_tensor;
using ::testing::HasSubstr;

// A user's example type and their Stack for it, as a libtorch program writes one.
struct Pair {
  Tensor a, b;
};
namespace cohort::data::transforms {
template <>
struct Stack<Pair> : Collation<Pair> {
  Pair apply_batch(std::vector<Pair> pairs) override {
    std::vector<Tensor> as, bs;
    for (Pair& p : pairs) as.push_back(p.a), bs.push_back(p.b);
    return {cohort::stack(as), cohort::cat(bs)};
  }
};
}  // namespace cohort::data::transforms

namespace {

std::vector<Example<>> examples(int64_t n) {
  std::vector<Example<>> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({full({2, 3}, static_cast<double>(i)), tensor(i)});
  return out;
}

TEST(Stack, StacksDataAndTargetsAlongANewFirstDimension) {
  Example<> b = transforms::Stack<>().apply_batch(examples(4));
  EXPECT_EQ(b.data.sizes(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(b.target.sizes(), (std::vector<int64_t>{4}));
  EXPECT_TRUE(same_tensor(b.target, arange(4)));
  EXPECT_EQ(b.data[3].sum().item<float>(), 18.0f);

  std::vector<TensorExample> rows = {TensorExample(ones({3})), TensorExample(zeros({3}))};
  TensorExample t = transforms::Stack<TensorExample>().apply_batch(rows);
  EXPECT_EQ(t.data.sizes(), (std::vector<int64_t>{2, 3}));
  const Tensor& as_tensor = t;  // a TensorExample converts to its data
  EXPECT_EQ(as_tensor.sum().item<float>(), 3.0f);
}

TEST(Stack, NamesTheExamplesWhoseShapesDiffer) {
  std::vector<Example<>> b = examples(3);
  b[2].data = zeros({2, 4});
  EXPECT_THAT(error_of([&] { transforms::Stack<>().apply_batch(b); }),
              HasSubstr("Stack<Example<>>: cannot stack the data of the batch: example 0 has float32 [2, 3] but "
                        "example 2 has float32 [2, 4]"));
  b = examples(2);
  b[1].target = Tensor();
  EXPECT_THAT(error_of([&] { transforms::Stack<>().apply_batch(b); }),
              HasSubstr("example 1 of the batch has an undefined target tensor"));
  EXPECT_THAT(error_of([&] { transforms::Stack<>().apply_batch({}); }), HasSubstr("the batch is empty"));
}

TEST(Stack, AUserSpecialisationIsUsed) {
  Pair p = transforms::Stack<Pair>().apply_batch({{ones({2}), ones({1})}, {zeros({2}), zeros({1})}});
  EXPECT_EQ(p.a.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(p.b.sizes(), (std::vector<int64_t>{2}));
}

TEST(Lambdas, ApplyPerExamplePerTensorOrPerBatch) {
  transforms::Lambda<Example<>> twice([](Example<> e) { return Example<>{e.data * 2, e.target}; });
  std::vector<Example<>> b = twice.apply_batch(examples(3));
  EXPECT_EQ(b[2].data.sum().item<float>(), 24.0f);

  transforms::Lambda<Example<>, Tensor> only_data([](Example<> e) { return e.data; });
  EXPECT_EQ(only_data.apply_batch(examples(2)).size(), 2u);

  transforms::TensorLambda<> plus_one([](Tensor x) { return x + 1; });
  Example<> e = plus_one.apply({zeros({2}), tensor(int64_t{5})});
  EXPECT_EQ(e.data.sum().item<float>(), 2.0f);
  EXPECT_EQ(e.target.item<int64_t>(), 5);

  transforms::BatchLambda<std::vector<Example<>>, size_t> count([](std::vector<Example<>> v) { return v.size(); });
  EXPECT_EQ(count.apply_batch(examples(5)), 5u);

  transforms::Collate<Example<>> first([](std::vector<Example<>> v) { return v.front(); });
  EXPECT_EQ(first.apply_batch(examples(3)).target.item<int64_t>(), 0);
}

}  // namespace
