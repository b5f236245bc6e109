// libtorch's transform bases for datasets' .map() (torch::data::transforms), and the lambdas.
//
//   ds.map(data::transforms::Lambda<data::Example<>>([](data::Example<> e) { e.data = e.data * 2; return e; }))
//   ds.map(data::transforms::TensorLambda<>([](Tensor x) { return x.flatten(); }))   // on e.data only
//
// A BatchTransform<In, Out> maps a whole batch (apply_batch); a Transform<In, Out> maps each example
// of a std::vector batch (apply); a TensorTransform<Target> maps each example's data tensor
// (operator()). Transforms run where the batch is loaded: in a loader's worker, where the default
// generator is seeded per batch (data/batch_pipeline.h), so random draws do not depend on the worker.
// cohort's own per-sample transforms (ToTensor, RandomCrop, ... in data/transforms.h) are functions
// that take a Generator, for cohort's DataLoader.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/data/example.h"

namespace cohort::data::transforms {

template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;

  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  virtual OutputType apply(InputType input) = 0;

  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output_batch;
    output_batch.reserve(input_batch.size());
    for (auto&& input : input_batch) output_batch.push_back(apply(std::move(input)));
    return output_batch;
  }
};

// A BatchTransform from a function of the whole batch.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using typename BatchTransform<Input, Output>::InputBatchType;
  using typename BatchTransform<Input, Output>::OutputBatchType;
  using FunctionType = std::function<OutputBatchType(InputBatchType)>;

  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  OutputBatchType apply_batch(InputBatchType input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

// A Transform from a function of one example.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using typename Transform<Input, Output>::InputType;
  using typename Transform<Input, Output>::OutputType;
  using FunctionType = std::function<Output(Input)>;

  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  OutputType apply(InputType input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// Maps the data of each Example<Tensor, Target>; the target passes through.
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  using typename Transform<E, E>::InputType;
  using typename Transform<E, E>::OutputType;

  virtual Tensor operator()(Tensor input) = 0;

  OutputType apply(InputType input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;

  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

}  // namespace cohort::data::transforms
