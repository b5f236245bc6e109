// The Embedding layer and its functional form: index_select on the flattened indices, with a
// backward that scatters the gradient rows (skipping padding_idx).
#include "cohort/nn/embedding.h"

#include <ostream>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/record.h"
#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"

namespace cohort::nn {

namespace {

// padding_idx in [-V, V) made non-negative; op names the caller in the error.
std::optional<int64_t> normalize_padding_idx(const char* op, std::optional<int64_t> p, int64_t V) {
  if (!p) return p;
  COHORT_CHECK(*p >= -V && *p < V, op, ": padding_idx must be within num_embeddings (", V, "), got padding_idx=", *p);
  return *p < 0 ? *p + V : *p;
}

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

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options_) : options(options_) {
  options.padding_idx(normalize_padding_idx("Embedding", options.padding_idx(), options.num_embeddings()));
  reset();
}

void EmbeddingImpl::reset() {
  COHORT_CHECK(options.num_embeddings() >= 0 && options.embedding_dim() >= 0,
               "Embedding: sizes must be non-negative, got num_embeddings=", options.num_embeddings(),
               " embedding_dim=", options.embedding_dim());
  weight = register_parameter("weight", cohort::empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight.select(0, *options.padding_idx()).zero_();
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return functional::embedding(indices, weight, functional::EmbeddingFuncOptions().padding_idx(options.padding_idx()));
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) os << ", padding_idx=" << *options.padding_idx();
  os << ")";
}

namespace functional {

Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options) {
  COHORT_CHECK(indices.defined() && weight.defined(), "embedding: indices and weight must be defined");
  COHORT_CHECK_AS(TypeError, indices.dtype() == kInt64 || indices.dtype() == kInt32,
                  "embedding: expected int64 or int32 indices, got ", indices.dtype());
  COHORT_CHECK(weight.dim() == 2, "embedding: expected a 2-d weight [num_embeddings, embedding_dim], got weight of shape ",
               weight.sizes());
  const int64_t V = weight.size(0), D = weight.size(1);
  const auto padding_idx = normalize_padding_idx("embedding", options.padding_idx(), V);
  Tensor flat = indices.to(kInt64).reshape({-1}).contiguous();
  const int64_t* idx = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i)
    COHORT_CHECK(idx[i] >= 0 && idx[i] < V, "embedding: index ", idx[i], " is out of range for ", V,
                 " embeddings (weight ", weight.sizes(), "), at position ", position_string(indices.sizes(), i),
                 " of indices of shape ", indices.sizes());
  Tensor rows = index_select(weight.detach(), 0, flat);
  rows = autograd::record("EmbeddingBackward0", rows, {weight},
                          [flat, padding_idx, V, D, dtype = weight.dtype()](const Tensor& g) {
    Tensor grad = g;
    if (padding_idx) grad = masked_fill(grad, eq(flat, *padding_idx).unsqueeze(1), 0);
    Tensor index = flat.unsqueeze(1).expand({flat.numel(), D}).contiguous();
    return std::vector<Tensor>{scatter_add(zeros({V, D}, dtype), 0, index, grad)};
  });
  Shape out_sizes = indices.sizes().vec();
  out_sizes.push_back(D);
  return rows.reshape(out_sizes);
}

}  // namespace functional

}  // namespace cohort::nn
