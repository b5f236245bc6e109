// Recurrent layers and cells, spelled as libtorch's: RNN (tanh or relu), LSTM (with an optional
// projection), GRU, and RNNCell, LSTMCell, GRUCell. Parameters have PyTorch's names, shapes and gate
// order (LSTM: i, f, g, o; GRU: r, z, n), so a PyTorch state_dict loads one to one; every
// parameter is initialised uniform in +-1/sqrt(hidden_size).
//
// Shapes (L = num_layers, D = 2 if bidirectional else 1, Hout = proj_size if set else hidden_size):
//   input  [T, N, input_size] ([N, T, input_size] with batch_first), or unbatched [T, input_size]
//   h0     [L*D, N, Hout] (unbatched [L*D, Hout]); LSTM's c0 [L*D, N, hidden_size]; zeros when absent
//   output [T, N, D*Hout] (batch_first: [N, T, D*Hout]; unbatched [T, D*Hout]); h_n like h0
//
//   nn::LSTM lstm(nn::LSTMOptions(10, 20).num_layers(2).batch_first(true));
//   auto [out, state] = lstm->forward(x);  // state = (h_n, c_n)
//
// Packed input (nn/utils/rnn.h): forward_with_packed_input(packed, hx) runs each sequence for its own
// length and returns a PackedSequence of the outputs (same batch_sizes and order) and the final
// states of each sequence at its own last step (reverse direction: at step 0), in the batch's
// original order; hx is in the original order too.
//
// The time loop is made of differentiable ops (one input-projection matmul per layer and direction,
// then one hidden-projection matmul per step), so autograd differentiates it to any order.
// Errors name the layer, what it expected and what it got.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "cohort/core/enum.h"  // kTanh, kReLU
#include "cohort/nn/module_holder.h"
#include "cohort/nn/utils/rnn.h"

namespace cohort {

namespace nn {

namespace detail {

// The options every recurrent layer has; Self is the options type the setters return.
template <class Self>
struct RecurrentOptions {
  RecurrentOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  Self& num_layers(int64_t v) { num_layers_ = v; return self(); }
  Self& bias(bool v) { bias_ = v; return self(); }
  Self& batch_first(bool v) { batch_first_ = v; return self(); }
  Self& dropout(double v) { dropout_ = v; return self(); }
  Self& bidirectional(bool v) { bidirectional_ = v; return self(); }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  int64_t input_size_, hidden_size_, num_layers_ = 1;
  bool bias_ = true, batch_first_ = false;
  double dropout_ = 0.0;
  bool bidirectional_ = false;
};

// The options every recurrent cell has.
template <class Self>
struct CellOptions {
  CellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  Self& bias(bool v) { bias_ = v; return static_cast<Self&>(*this); }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bias() const { return bias_; }

 private:
  int64_t input_size_, hidden_size_;
  bool bias_ = true;
};

}  // namespace detail

struct RNNOptions : detail::RecurrentOptions<RNNOptions> {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  using RecurrentOptions::RecurrentOptions;
  RNNOptions& nonlinearity(nonlinearity_t v) { nonlinearity_ = v; return *this; }
  nonlinearity_t nonlinearity() const { return nonlinearity_; }

 private:
  nonlinearity_t nonlinearity_ = kTanh;
};

struct LSTMOptions : detail::RecurrentOptions<LSTMOptions> {
  using RecurrentOptions::RecurrentOptions;
  LSTMOptions& proj_size(int64_t v) { proj_size_ = v; return *this; }  // 0: no projection
  int64_t proj_size() const { return proj_size_; }

 private:
  int64_t proj_size_ = 0;
};

struct GRUOptions : detail::RecurrentOptions<GRUOptions> {
  using RecurrentOptions::RecurrentOptions;
};

struct RNNCellOptions : detail::CellOptions<RNNCellOptions> {
  using nonlinearity_t = RNNOptions::nonlinearity_t;
  using CellOptions::CellOptions;
  RNNCellOptions& nonlinearity(nonlinearity_t v) { nonlinearity_ = v; return *this; }
  nonlinearity_t nonlinearity() const { return nonlinearity_; }

 private:
  nonlinearity_t nonlinearity_ = kTanh;
};

struct LSTMCellOptions : detail::CellOptions<LSTMCellOptions> {
  using CellOptions::CellOptions;
};

struct GRUCellOptions : detail::CellOptions<GRUCellOptions> {
  using CellOptions::CellOptions;
};

namespace detail {

enum class RNNMode { RNNTanh, RNNReLU, LSTM, GRU };

// The options of any recurrent layer or cell, in one shape (cells: one layer, one direction).
struct RNNConfig {
  RNNMode mode;
  int64_t input_size, hidden_size, num_layers = 1;
  bool bias = true, batch_first = false;
  double dropout = 0;
  bool bidirectional = false;
  int64_t proj_size = 0;
  bool cell = false;
};

// Checks the options, registers the parameters on `m` in PyTorch's order and returns them.
std::vector<Tensor> register_rnn_weights(Module& m, const RNNConfig& c);
void reset_rnn_parameters(const RNNConfig& c, const std::vector<Tensor>& weights);
void print_rnn(std::ostream& os, const RNNConfig& c);
// The whole layer: output and the final states (h_n, and c_n for an LSTM). hx: empty, or h0
// (and c0 for an LSTM), possibly undefined.
std::pair<Tensor, std::vector<Tensor>> rnn_forward(const RNNConfig& c, const std::vector<Tensor>& weights,
                                                   bool training, const Tensor& input, std::vector<Tensor> hx);
// The same over a PackedSequence (always batched): output rows in the input's packed layout.
std::pair<utils::rnn::PackedSequence, std::vector<Tensor>> rnn_forward_packed(const RNNConfig& c,
                                                                            const std::vector<Tensor>& weights,
                                                                            bool training,
                                                                            const utils::rnn::PackedSequence& input,
                                                                            std::vector<Tensor> hx);
// One step of a cell: the new h (and c for an LSTM cell).
std::vector<Tensor> rnn_cell_forward(const RNNConfig& c, const std::vector<Tensor>& weights, const Tensor& input,
                                     std::vector<Tensor> hx);

// What RNN, LSTM and GRU share: their parameters, kept also in `flat_weights()` in the order of
// `flat_weights_names()` (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, [weight_hr_l0],
// then _reverse, then the next layer).
template <class Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  void reset() override { flat_weights_ = register_rnn_weights(*this, config()); reset_parameters(); }
  void reset_parameters() { reset_rnn_parameters(config(), flat_weights_); }
  void pretty_print(std::ostream& os) const override { print_rnn(os, config()); }
  std::vector<Tensor> all_weights() const { return flat_weights_; }
  // The tensors forward reads (the registered parameters), to be swapped by tests that need to.
  std::vector<Tensor>& flat_weights() { return flat_weights_; }
  std::vector<std::string> flat_weights_names() const {
    std::vector<std::string> names;
    for (const auto& item : this->named_parameters(false)) names.push_back(item.key());
    return names;
  }

 protected:
  virtual RNNConfig config() const = 0;
  std::vector<Tensor> flat_weights_;
};

// What the three cells share: weight_ih [G, input_size], weight_hh [G, hidden_size], bias_ih and
// bias_hh [G] (undefined without bias), G = hidden_size times 1, 4 or 3.
template <class Derived>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  void reset() override {
    auto w = register_rnn_weights(*this, config());
    weight_ih = w[0];
    weight_hh = w[1];
    bias_ih = w.size() > 2 ? w[2] : Tensor();
    bias_hh = w.size() > 2 ? w[3] : Tensor();
    reset_parameters();
  }
  void reset_parameters() { reset_rnn_parameters(config(), weights()); }
  void pretty_print(std::ostream& os) const override { print_rnn(os, config()); }

  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  virtual RNNConfig config() const = 0;
  std::vector<Tensor> weights() const {
    return bias_ih.defined() ? std::vector<Tensor>{weight_ih, weight_hh, bias_ih, bias_hh}
                             : std::vector<Tensor>{weight_ih, weight_hh};
  }
};

}  // namespace detail

// Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu). Returns (output, h_n).
class RNNImpl : public detail::RNNImplBase<RNNImpl> {
 public:
  explicit RNNImpl(const RNNOptions& options);
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                           Tensor hx = {});
  RNNOptions options;

 protected:
  detail::RNNConfig config() const override;
};

// LSTM: returns (output, (h_n, c_n)); with proj_size, h is projected by weight_hr each step.
class LSTMImpl : public detail::RNNImplBase<LSTMImpl> {
 public:
  explicit LSTMImpl(const LSTMOptions& options);
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx = {});
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx = {});
  LSTMOptions options;

 protected:
  detail::RNNConfig config() const override;
};

// GRU: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h. Returns (output, h_n).
class GRUImpl : public detail::RNNImplBase<GRUImpl> {
 public:
  explicit GRUImpl(const GRUOptions& options);
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                           Tensor hx = {});
  GRUOptions options;

 protected:
  detail::RNNConfig config() const override;
};

// Cells: input [N, input_size] or unbatched [input_size]; hx [N, hidden_size] or [hidden_size],
// zeros when undefined. RNNCell and GRUCell return h'; LSTMCell returns (h', c').
class RNNCellImpl : public detail::RNNCellImplBase<RNNCellImpl> {
 public:
  explicit RNNCellImpl(const RNNCellOptions& options);
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, Tensor hx = {});
  RNNCellOptions options;

 protected:
  detail::RNNConfig config() const override;
};

class LSTMCellImpl : public detail::RNNCellImplBase<LSTMCellImpl> {
 public:
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx = {});
  LSTMCellOptions options;

 protected:
  detail::RNNConfig config() const override;
};

class GRUCellImpl : public detail::RNNCellImplBase<GRUCellImpl> {
 public:
  explicit GRUCellImpl(const GRUCellOptions& options);
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, Tensor hx = {});
  GRUCellOptions options;

 protected:
  detail::RNNConfig config() const override;
};

using RNN = ModuleHolder<RNNImpl>;
using LSTM = ModuleHolder<LSTMImpl>;
using GRU = ModuleHolder<GRUImpl>;
using RNNCell = ModuleHolder<RNNCellImpl>;
using LSTMCell = ModuleHolder<LSTMCellImpl>;
using GRUCell = ModuleHolder<GRUCellImpl>;

}  // namespace nn
}  // namespace cohort
