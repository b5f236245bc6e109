// Embedding: a lookup table of num_embeddings rows of embedding_dim values (libtorch's torch::nn::Embedding):
//   nn::Embedding emb(nn::EmbeddingOptions(10000, 256).padding_idx(0));
//   Tensor y = emb(tokens);   // tokens int64/int32 [*] -> [*, 256]
// weight [num_embeddings, embedding_dim], initialised normal(0, 1); the padding_idx row (negative:
// counted from the end) is zeroed and gets no gradient. Prints like PyTorch: Embedding(10, 3, padding_idx=0).
// functional::embedding(indices, weight, options) is the forward: cohort::embedding
// (cohort/ops/embedding.h, which gives the gradient and the errors) with the padding_idx counted from
// the end when negative.
#pragma once

#include <optional>

#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingOptions& padding_idx(std::optional<int64_t> p) { padding_idx_ = p; return *this; }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  const std::optional<int64_t>& padding_idx() const { return padding_idx_; }

 private:
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;
};

class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& indices);
  void pretty_print(std::ostream& os) const override;

  EmbeddingOptions options;  // padding_idx made non-negative by the constructor
  Tensor weight;             // [num_embeddings, embedding_dim]
};

using Embedding = ModuleHolder<EmbeddingImpl>;

namespace functional {

struct EmbeddingFuncOptions {
  EmbeddingFuncOptions& padding_idx(std::optional<int64_t> p) { padding_idx_ = p; return *this; }
  const std::optional<int64_t>& padding_idx() const { return padding_idx_; }

 private:
  std::optional<int64_t> padding_idx_;
};

// weight rows picked by indices: indices [*] (int64 or int32), weight [V, D] -> [*, D].
Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options = {});

}  // namespace functional

}  // namespace cohort::nn
