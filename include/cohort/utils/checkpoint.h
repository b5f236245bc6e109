// Activation checkpointing, as PyTorch's torch.utils.checkpoint with use_reentrant=False: trade compute
// for memory by keeping a function's inputs instead of its activations, and running it again in
// backward.
//
//   Tensor h = utils::checkpoint(block, x);  // a module, as PyTorch's checkpoint(self.block, x)
//   Tensor g = utils::checkpoint([&](const Tensor& a, const Tensor& b) { return f(a) * b; }, a, b);
//   Tensor y = utils::checkpoint_sequential(seq, 4, x);  // 4 segments, the last one not checkpointed
//
// Note [Checkpoint]
// Forward runs fn once without keeping its graph; the outputs get one node (CheckpointBackward)
// whose edges are fn's tensor inputs and the tensors fn used that require grad (its parameters).
// Its backward runs fn again with grad mode on, on detached copies of the inputs, with the random
// state fn started with (the calling thread's default generator and BatchSlice, so dropout masks are
// the same) and the same autocast state, then differentiates the recomputed outputs by the incoming
// gradients w.r.t. those copies and the parameters (autograd::grad, which accumulates nothing), and
// hands the gradients to the engine as the node's. So each parameter's gradient is accumulated once,
// by the backward pass that reached the node, and its hooks (DDP's, DataParallel's gradient capture)
// run in that pass, as in PyTorch's non-reentrant checkpoint.
// - Finding the parameters: checkpoint(module, ...) and checkpoint_sequential take them from the
//   modules and run forward under no-grad. checkpoint(fn, ...) cannot see inside fn, so its forward
//   runs with grad mode on, reads the leaves the graph reached (autograd/graph.h), and drops the graph
//   when fn returns: the activations of one call live during that call only, which the recompute
//   needs again anyway. It cannot find computed parameters (a DataParallel replica's in forward()):
//   that is an error whose hint is checkpoint(module, ...).
// - Inputs need not require grad (a data batch): the parameters still get their gradients. If
//   neither an input nor a parameter requires grad, the outputs do not either.
// - Modules run twice: forward hooks run again, and BatchNorm's running statistics are updated
//   twice in training mode (PyTorch's behaviour too).
// - Autocast's weight cast cache is off inside fn (each use casts again, same values): a cast cached
//   before fn would hide the parameter behind an older node.
// Errors (cohort::AutogradError, "checkpoint: ..."): fn uses a tensor that requires grad, was
// computed outside fn and is not an input (its gradient would be lost: pass it as an input); the
// recompute reaches a leaf that the forward did not (a module member that is not a parameter); an
// input modified in place between forward and backward; backward with create_graph=true (double
// backward through a checkpoint is not supported: the recomputed graph starts at detached copies);
// fn returning no tensor, or an undefined one. fn returning something other than a Tensor or a
// std::vector<Tensor> does not compile.
// With grad mode off checkpoint just calls fn.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/container.h"

namespace cohort::utils {

namespace detail {

using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Runs fn as Note [Checkpoint] says. `parameters`: the tensors fn uses besides its inputs, when the
// caller knows them (then forward runs under no-grad); nullopt: found by running fn with grad on.
std::vector<Tensor> run_checkpoint(CheckpointFn fn, std::vector<Tensor> inputs,
                                   std::optional<std::vector<Tensor>> parameters);

template <class F, size_t... I>
auto call_with(F& fn, const std::vector<Tensor>& in, std::index_sequence<I...>) {
  return fn(in[I]...);
}

template <class F, class... Args>
auto checkpoint_with(F fn, std::optional<std::vector<Tensor>> parameters, const Args&... inputs) {
  static_assert(sizeof...(Args) > 0, "utils::checkpoint: pass fn's tensor inputs after fn");
  static_assert((std::is_same_v<std::decay_t<Args>, Tensor> && ...),
                "utils::checkpoint: every input after fn must be a Tensor; capture other values in fn");
  using Result = std::decay_t<decltype(fn(inputs...))>;
  static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, std::vector<Tensor>>,
                "utils::checkpoint: fn must return a Tensor or a std::vector<Tensor>");
  CheckpointFn call = [fn](const std::vector<Tensor>& in) mutable -> std::vector<Tensor> {
    auto out = call_with(fn, in, std::index_sequence_for<Args...>{});
    if constexpr (std::is_same_v<Result, Tensor>) {
      return {std::move(out)};
    } else {
      return out;
    }
  };
  std::vector<Tensor> out = run_checkpoint(std::move(call), {inputs...}, std::move(parameters));
  if constexpr (std::is_same_v<Result, Tensor>) {
    return out[0];
  } else {
    return out;
  }
}

// A module holder (nn::Linear, nn::Sequential, ...), or a std::shared_ptr to a module.
template <class F, class = void>
struct is_module_holder : std::false_type {};
template <class F>
struct is_module_holder<F, std::void_t<typename std::decay_t<decltype(std::declval<const F&>().ptr())>::element_type>>
    : std::is_base_of<nn::Module,
                      typename std::decay_t<decltype(std::declval<const F&>().ptr())>::element_type> {};
template <class F, class = void>
struct is_module_pointer : std::false_type {};
template <class F>
struct is_module_pointer<F, std::void_t<typename F::element_type>>
    : std::bool_constant<std::is_base_of_v<nn::Module, typename F::element_type> &&
                         std::is_same_v<F, std::shared_ptr<typename F::element_type>>> {};

}  // namespace detail

// fn(inputs...) with its activations recomputed in backward. Each input is a Tensor; fn returns a
// Tensor or a std::vector<Tensor>, and checkpoint returns the same. fn is copied and kept until the
// graph is released; capture other values in it.
// fn may be a module (a holder such as nn::Sequential, or a std::shared_ptr to a module), as in
// PyTorch's checkpoint(self.block, x): it is called with its forward hooks (a holder's) and its
// parameters are the module's, so forward runs under no-grad. Checkpoint a module this way where its
// parameters are computed tensors (a DataParallel replica's in forward()), which a lambda hides.
template <class F, class... Args>
auto checkpoint(F fn, const Args&... inputs) {
  if constexpr (detail::is_module_holder<F>::value) {
    std::vector<Tensor> parameters = fn->parameters();
    return detail::checkpoint_with([fn](const auto&... in) mutable { return fn(in...); }, std::move(parameters),
                                   inputs...);
  } else if constexpr (detail::is_module_pointer<F>::value) {
    std::vector<Tensor> parameters = fn->parameters();
    return detail::checkpoint_with([fn](const auto&... in) { return fn->forward(in...); }, std::move(parameters),
                                   inputs...);
  } else {
    return detail::checkpoint_with(std::move(fn), std::nullopt, inputs...);
  }
}

// PyTorch's checkpoint_sequential: splits the modules into `segments` runs of size()/segments
// modules (the last one takes the rest) and checkpoints every run but the last, which runs as usual
// (its activations are needed at once by backward). So segments == 1 checkpoints nothing. Each
// module runs with its forward hooks, as Sequential::forward runs it. Throws cohort::Error unless
// 1 <= segments <= size().
Tensor checkpoint_sequential(const nn::Sequential& functions, int64_t segments, const Tensor& input);

}  // namespace cohort::utils
