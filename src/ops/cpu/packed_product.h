// A matrix product whose right operand stays the same over many calls: an RNN's recurrent weight
// over the time steps of a sequence (Note [Packed recurrent weight] in src/ops/dnnl/packed_product.cpp).
#pragma once

#include <memory>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

class PackedProduct {
 public:
  // w [k, n] (any strides) and bias [n] (or undefined), float32; `rows`: the row count of every a.
  // Packs w once; w may change or go after construction.
  PackedProduct(const Tensor& w, const Tensor& bias, int64_t rows);
  ~PackedProduct();
  PackedProduct(const PackedProduct&) = delete;
  PackedProduct& operator=(const PackedProduct&) = delete;

  // Whether this CPU's oneDNN takes the product (false: the caller computes it another way).
  static bool available(const Tensor& w);

  // c [rows, n] = a [rows, k] w + bias; c and a contiguous float32 (c may be a row block of a larger
  // contiguous tensor).
  void run(const Tensor& c, const Tensor& a);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cohort::kernel
