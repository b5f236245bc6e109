// embedding: index_select on the flattened indices, with a backward that scatters the gradient rows
// (skipping padding_idx).
#include "cohort/ops/embedding.h"

#include <sstream>

#include "cohort/autograd/trace.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "ops/internal.h"

namespace cohort {

namespace {

std::string position_string(IntArrayRef sizes, int64_t flat) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  std::ostringstream os;
  os << IntArrayRef(index);
  return os.str();
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  trace::OpScope trace("embedding");
  COHORT_CHECK(indices.defined() && weight.defined(), "embedding: indices and weight must be defined");
  COHORT_CHECK(!sparse, "embedding: sparse=true asks for a sparse gradient, and cohort has no sparse tensors; hint: "
               "pass sparse=false (the gradient is then dense, with the same values)");
  COHORT_CHECK_AS(TypeError, indices.dtype() == kInt64 || indices.dtype() == kInt32,
                  "embedding: expected int64 or int32 indices, got ", indices.dtype());
  COHORT_CHECK(weight.dim() == 2, "embedding: expected a 2-d weight [num_embeddings, embedding_dim], got weight of shape ",
               weight.sizes());
  const int64_t V = weight.size(0), D = weight.size(1);
  COHORT_CHECK(padding_idx < V, "embedding: padding_idx must be within num_embeddings (", V, "), got padding_idx=",
               padding_idx);
  Tensor flat = indices.to(kInt64).reshape({-1}).contiguous();
  const int64_t* idx = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i)
    COHORT_CHECK_AS(IndexError, idx[i] >= 0 && idx[i] < V, "embedding: index ", idx[i], " is out of range for ", V,
                    " embeddings (weight ", weight.sizes(), "), at position ", position_string(indices.sizes(), i),
                    " of indices of shape ", indices.sizes());
  Tensor rows = index_select(weight.detach(), 0, flat);
  rows = autograd::record("EmbeddingBackward0", rows, {weight},
                          [flat, padding_idx, scale_grad_by_freq, V, D, dtype = weight.dtype()](const Tensor& g) {
    Tensor grad = g;
    if (padding_idx >= 0) grad = masked_fill(grad, eq(flat, padding_idx).unsqueeze(1), 0);
    if (scale_grad_by_freq) {  // each row's gradient divided by how often its index occurs in the batch
      Tensor counts = scatter_add(zeros({V}, TensorOptions(dtype).device(g.device())), 0, flat,
                                  ones({flat.numel()}, TensorOptions(dtype).device(g.device())));
      grad = grad / index_select(counts, 0, flat).unsqueeze(1);
    }
    Tensor index = flat.unsqueeze(1).expand({flat.numel(), D}).contiguous();
    return std::vector<Tensor>{scatter_add(zeros({V, D}, TensorOptions(dtype).device(g.device())), 0, index, grad)};
  });
  Shape out_sizes = indices.sizes().vec();
  out_sizes.push_back(D);
  Tensor out = rows.reshape(out_sizes);
  // padding_idx and the frequency scaling change the backward only: the forward is a row lookup.
  if (trace) trace.record({weight, indices}, out);
  return out;
}

}  // namespace cohort
