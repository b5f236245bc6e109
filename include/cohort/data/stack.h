// Collating a batch of examples into one (libtorch's transforms::Stack and Collation).
//
//   MNIST(root).map(Stack<>())        // a batch becomes Example<>{data [B, 1, 28, 28], target [B]}
//
// Stack<Example<>> stacks data and targets along a new first dimension; Stack<TensorExample> stacks
// the data. Stack<T> for another T is left for the user to specialise (as in libtorch), e.g.
//   template <> struct data::transforms::Stack<MyExample> : data::transforms::Collation<MyExample> {...};
// Throws cohort::Error naming the two examples (by position in the batch) whose shapes or dtypes
// differ, an empty batch, or examples of which only some have a target.
#pragma once

#include <vector>

#include "cohort/data/batch_transforms.h"
#include "cohort/data/example.h"

namespace cohort::data::transforms {

// A BatchTransform that turns a std::vector<T> batch into one T.
template <typename T, typename BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;

// A Collation from a function.
template <typename T, typename BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

template <typename T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override;
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override;
};

}  // namespace cohort::data::transforms
