// The Embedding layer and its functional form, over cohort::embedding (ops/embedding.h).
#include "cohort/nn/embedding.h"

#include <ostream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/embedding.h"

namespace cohort::nn {

namespace {

// padding_idx in [-V, V) made non-negative; op names the caller in the error.
std::optional<int64_t> normalize_padding_idx(const char* op, std::optional<int64_t> p, int64_t V) {
  if (!p) return p;
  COHORT_CHECK(*p >= -V && *p < V, op, ": padding_idx must be within num_embeddings (", V, "), got padding_idx=", *p);
  return *p < 0 ? *p + V : *p;
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
  // A padding_idx counts from the end here, as in F.embedding; a weight that is not 2-d is the op's to report.
  if (!options.padding_idx() || !weight.defined() || weight.dim() != 2) return cohort::embedding(weight, indices);
  const auto padding_idx = normalize_padding_idx("embedding", options.padding_idx(), weight.size(0));
  return cohort::embedding(weight, indices, *padding_idx);
}

}  // namespace functional

}  // namespace cohort::nn
