// Activation checkpointing (Note [Checkpoint] in include/cohort/utils/checkpoint.h).
#include "cohort/utils/checkpoint.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/engine.h"
#include "cohort/autograd/graph.h"
#include "cohort/autograd/record.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"

namespace cohort::utils {

namespace {

// What the node's backward needs to run fn again: the inputs, not fn's activations.
struct Checkpoint {
  detail::CheckpointFn fn;
  std::vector<Tensor> inputs;  // detached from the caller's graph
  std::vector<bool> input_requires_grad;
  std::vector<uint32_t> input_versions;
  std::vector<Tensor> parameters;  // what fn used that requires grad, besides its inputs
  Generator rng;                   // the calling thread's default generator as fn started
  std::optional<BatchSlice> slice;
  autocast::State autocast;
  size_t num_outputs = 0;

  std::mutex mutex;  // the outputs' relay nodes may run on several threads
  std::vector<Tensor> grad_outputs;

  std::vector<Tensor> backward();
};

// The autocast state fn runs under: the caller's, without the weight cast cache (Note [Checkpoint]).
autocast::State run_state(const autocast::State& caller) {
  autocast::State s = caller;
  s.cache_enabled = false;
  return s;
}

std::vector<Tensor> checked_outputs(std::vector<Tensor> outputs) {
  COHORT_CHECK_AS(AutogradError, !outputs.empty(), "checkpoint: fn returned no tensor, expected at least one");
  for (size_t i = 0; i < outputs.size(); ++i)
    COHORT_CHECK_AS(AutogradError, outputs[i].defined(), "checkpoint: fn returned an undefined tensor as output ", i,
                    " of ", outputs.size());
  return outputs;
}

bool contains(const std::unordered_set<const TensorImpl*>& set, const Tensor& t) {
  return set.count(t.impl().get()) > 0;
}

std::vector<Tensor> Checkpoint::backward() {
  COHORT_CHECK_AS(AutogradError, !GradMode::is_enabled(),
                  "checkpoint: backward with create_graph=true through a checkpointed function is not supported "
                  "(the recomputed graph starts at detached copies of the inputs); hint: do not checkpoint the part "
                  "that needs double backward");
  for (size_t i = 0; i < inputs.size(); ++i)
    COHORT_CHECK_AS(AutogradError, inputs[i]._version() == input_versions[i], "checkpoint: input ", i, " (shape ",
                    inputs[i].sizes(), ") was modified in place after the checkpointed forward, so fn cannot be run "
                    "again on it; hint: modify a clone");
  std::vector<Tensor> grads;
  {
    std::lock_guard<std::mutex> l(mutex);
    grads.swap(grad_outputs);
  }
  grads.resize(num_outputs);

  std::vector<Tensor> copies, targets;
  std::unordered_set<const TensorImpl*> known;
  for (size_t i = 0; i < inputs.size(); ++i) {
    copies.push_back(inputs[i].detach());
    if (input_requires_grad[i]) {
      copies.back().requires_grad_(true);
      targets.push_back(copies.back());
    }
    known.insert(copies.back().impl().get());
  }
  for (const Tensor& p : parameters) {
    targets.push_back(p);
    known.insert(p.impl().get());
  }

  const uint64_t since = autograd::next_sequence_nr();
  std::vector<Tensor> outputs;
  {
    EnableGradGuard grad_on;
    ThreadGeneratorScope same_rng(rng);
    std::optional<BatchSliceScope> same_slice;
    if (slice) same_slice.emplace(*slice);
    autocast::StateGuard same_autocast(run_state(autocast));
    outputs = checked_outputs(fn(copies));
  }
  COHORT_CHECK_AS(AutogradError, outputs.size() == num_outputs, "checkpoint: fn returned ", outputs.size(),
                  " tensors when run again in backward, but ", num_outputs, " in forward");

  std::vector<Tensor> roots, root_grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].requires_grad() || !grads[i].defined()) continue;
    roots.push_back(outputs[i]);
    root_grads.push_back(grads[i]);
  }
  // Everything the recomputed graph reaches must be one of the node's edges, or its gradient is lost.
  std::unordered_set<const autograd::Node*> known_nodes;  // non-leaf parameters (a replica's)
  for (const Tensor& p : parameters)
    if (auto fn = p.grad_fn()) known_nodes.insert(fn.get());
  autograd::GraphBoundary boundary = autograd::graph_boundary(roots, since);
  for (const auto& node : boundary.older_nodes)
    COHORT_CHECK_AS(AutogradError, known_nodes.count(node.get()), "checkpoint: when run again in backward, fn used "
                    "a tensor that requires grad and was computed outside fn (its grad_fn is ", node->name(),
                    ") and is neither an input nor a parameter of the checkpointed modules; hint: pass it as an input");
  for (const Tensor& leaf : boundary.leaves)
    COHORT_CHECK_AS(AutogradError, contains(known, leaf), "checkpoint: when run again in backward, fn used a tensor "
                    "of shape ", leaf.sizes(), " that requires grad and is neither an input nor a parameter of the "
                    "checkpointed modules, so its gradient would be lost; hint: register it as a parameter, or pass it "
                    "as an input");

  std::vector<Tensor> result(inputs.size() + parameters.size());
  if (roots.empty() || targets.empty()) return result;
  // retain_graph: the pass reaches past computed parameters into the caller's graph, which it must not free
  // (the recomputed graph dies with `outputs`).
  std::vector<Tensor> g = autograd::grad(roots, targets, root_grads, /*retain_graph=*/true,
                                         /*create_graph=*/false, /*allow_unused=*/true);
  size_t k = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (input_requires_grad[i]) result[i] = g[k++];
  for (size_t j = 0; j < parameters.size(); ++j) result[inputs.size() + j] = g[k++];
  return result;
}

}  // namespace

namespace detail {

std::vector<Tensor> run_checkpoint(CheckpointFn fn, std::vector<Tensor> inputs,
                                   std::optional<std::vector<Tensor>> parameters) {
  for (size_t i = 0; i < inputs.size(); ++i)
    COHORT_CHECK(inputs[i].defined(), "checkpoint: input ", i, " of ", inputs.size(), " is undefined");
  if (!GradMode::is_enabled()) return checked_outputs(fn(inputs));

  auto state = std::make_shared<Checkpoint>();
  state->rng = default_generator();
  if (const BatchSlice* s = BatchSliceScope::current()) state->slice = *s;
  state->autocast = autocast::current_state();

  std::vector<Tensor> copies;
  for (const Tensor& in : inputs) copies.push_back(in.detach());
  std::vector<Tensor> outputs;
  if (parameters) {
    NoGradGuard no_grad;
    autocast::StateGuard autocast_state(run_state(state->autocast));
    outputs = checked_outputs(fn(copies));
    for (const Tensor& p : *parameters)
      if (p.defined() && p.requires_grad()) state->parameters.push_back(p);
  } else {
    // Find the parameters: run with grad on from copies that require grad where the inputs do.
    std::unordered_set<const TensorImpl*> own;
    for (size_t i = 0; i < copies.size(); ++i) {
      if (inputs[i].requires_grad()) copies[i].requires_grad_(true);
      own.insert(copies[i].impl().get());
    }
    const uint64_t since = autograd::next_sequence_nr();
    {
      autocast::StateGuard autocast_state(run_state(state->autocast));
      outputs = checked_outputs(fn(copies));
    }
    autograd::GraphBoundary boundary = autograd::graph_boundary(outputs, since);
    COHORT_CHECK_AS(AutogradError, boundary.older_nodes.empty(), "checkpoint: fn used a tensor that requires grad "
                    "and was computed outside fn (its grad_fn is ", boundary.older_nodes.empty() ? ""
                    : boundary.older_nodes[0]->name(), ") without taking it as an input, so its gradient would be "
                    "lost; hint: pass it to checkpoint as an input, or, for a module's parameters (a data-parallel "
                    "replica's are computed), checkpoint the module itself: utils::checkpoint(module, x)");
    for (const Tensor& leaf : boundary.leaves)
      if (!contains(own, leaf)) state->parameters.push_back(leaf);
    for (Tensor& out : outputs) out = out.detach();  // drops the graph, and with it the activations
    for (Tensor& c : copies) c = c.detach();
  }

  std::vector<Tensor> edges = inputs;
  edges.insert(edges.end(), state->parameters.begin(), state->parameters.end());
  if (!autograd::needs_grad(edges)) return outputs;

  state->fn = std::move(fn);
  state->inputs = std::move(copies);
  for (const Tensor& in : inputs) {
    state->input_requires_grad.push_back(in.requires_grad());
    state->input_versions.push_back(in._version());
  }
  state->num_outputs = outputs.size();

  // One node for the call; each differentiable output reaches it through a relay that hands over
  // its gradient (the engine's nodes have one output each). The anchor is the node's empty output.
  const Device device = outputs[0].device();
  Tensor anchor = autograd::attach("CheckpointBackward", empty({0}, TensorOptions().device(device)), edges,
                                   [state](const Tensor&) { return state->backward(); });
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_floating_point()) continue;
    outputs[i] = autograd::attach("CheckpointOutputBackward", outputs[i].detach(), {anchor},
                                  [state, i, device](const Tensor& g) {
                                    {
                                      std::lock_guard<std::mutex> l(state->mutex);
                                      state->grad_outputs.resize(state->num_outputs);
                                      state->grad_outputs[i] = g;
                                    }
                                    return std::vector<Tensor>{empty({0}, TensorOptions().device(device))};
                                  });
  }
  return outputs;
}

}  // namespace detail

Tensor checkpoint_sequential(const nn::Sequential& functions, int64_t segments, const Tensor& input) {
  const int64_t n = static_cast<int64_t>(functions->size());
  COHORT_CHECK(segments >= 1 && segments <= n, "checkpoint_sequential: segments must be between 1 and the number of "
               "modules (", n, "), got ", segments);
  std::vector<nn::AnyModule> modules(functions->begin(), functions->end());
  auto run = [modules](int64_t begin, int64_t end, const Tensor& x) {
    Tensor out = x;
    for (int64_t m = begin; m < end; ++m) {
      const nn::AnyModule& module = modules[static_cast<size_t>(m)];
      Tensor in = out;
      out = module.ptr()->call_with_hooks({in}, [&](const std::vector<Tensor>& args) { return module.forward(args[0]); });
    }
    return out;
  };
  const int64_t size = n / segments;
  Tensor out = input;
  int64_t begin = 0;
  for (int64_t s = 0; s + 1 < segments; ++s, begin += size) {
    std::vector<Tensor> parameters;
    for (int64_t m = begin; m < begin + size; ++m)
      for (const Tensor& p : modules[static_cast<size_t>(m)].ptr()->parameters()) parameters.push_back(p);
    const int64_t end = begin + size;
    out = detail::run_checkpoint([run, begin, end](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{run(begin, end, in[0])};
    }, {out}, std::move(parameters))[0];
  }
  return run(begin, n, out);
}

}  // namespace cohort::utils
