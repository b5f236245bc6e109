// Custom autograd functions (Function<T>::apply): the node that calls T::backward, the relay nodes
// that give each of several outputs its own grad_fn, and the checks on what backward returns.
#include "cohort/autograd/function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <mutex>

#include "autograd/engine_state.h"
#include "autograd/meta.h"
#include "autograd/output_relay.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"

namespace cohort::autograd {

namespace custom {

std::string demangle(const char* mangled) {
  int status = 0;
  char* plain = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && plain ? plain : mangled;
  std::free(plain);
  return name;
}

namespace {

struct Meta {
  bool defined = false;
  Shape sizes;
  DType dtype = kFloat32;
  Device device;
};

Meta meta_of(const Tensor& t) {
  if (!t.defined()) return {};
  return {true, t.sizes().vec(), t.dtype(), t.device()};
}

// Whether a tensor of `shape` broadcasts to `to` (then the gradient is summed back, as libtorch does).
bool expandable(IntArrayRef shape, IntArrayRef to) {
  if (shape.size() > to.size()) return false;
  for (size_t i = 1; i <= shape.size(); ++i) {
    const int64_t a = shape[shape.size() - i], b = to[to.size() - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

void set_history(const Tensor& t, std::shared_ptr<Node> node) {
  AutogradMeta& meta = t.unsafe_impl()->ensure_autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = std::move(node);
}

}  // namespace

// Note [Custom function nodes]
// The engine's nodes have one output. A function with one differentiable output makes that
// output's grad_fn its CustomNode, whose next_functions are the tensor inputs' edges (as libtorch's
// CppNode). With several, each differentiable output k gets an OutputRelay as grad_fn, whose only
// edge is the CustomNode: the relay parks its gradient in the node's slot k and passes on a 0-d
// zero, so the engine runs the node once every relay that had a gradient has delivered it; the
// node then calls backward with the parked gradients (zeros, or undefined, for outputs that got
// none). Under create_graph a saved output is re-linked to its own grad_fn: the node itself when it
// is direct (SavedTensor's is_output), its relay otherwise.
class CustomNode : public Node {
 public:
  CustomNode(std::string name, std::vector<std::shared_ptr<Node>> next, Device device, CustomBackwardFn backward,
             std::vector<bool> is_input, std::vector<Meta> inputs)
      : Node(std::move(name), std::move(next), device), backward_(backward), is_input_(std::move(is_input)),
        inputs_(std::move(inputs)) {}

  std::vector<Tensor> apply(Tensor grad_output) override;
  void release() override {
    std::lock_guard<std::mutex> l(mutex_);
    ctx.saved_.clear();
    ctx.saved_freed_ = true;
  }
  void deliver(size_t output, Tensor grad) {
    std::lock_guard<std::mutex> l(mutex_);
    slots_[output] = std::move(grad);
  }

  AutogradContext ctx;
  std::vector<Meta> outputs;
  int direct = -1;  // the one differentiable output this node is the grad_fn of; -1: relays
  std::vector<std::weak_ptr<Node>> relays;  // per output, when relayed
  std::vector<Tensor> slots_;

 private:
  CustomBackwardFn backward_;
  std::vector<bool> is_input_;  // per forward argument
  std::vector<Meta> inputs_;    // per tensor input (edge)
  std::mutex mutex_;
};

using OutputRelay = detail::OutputRelay<CustomNode>;

std::vector<Tensor> CustomNode::apply(Tensor grad_output) {
  std::lock_guard<std::mutex> l(mutex_);
  variable_list grads(outputs.size());
  if (direct >= 0) {
    grads[static_cast<size_t>(direct)] = std::move(grad_output);
  } else {
    for (size_t i = 0; i < grads.size(); ++i) grads[i] = std::move(slots_[i]), slots_[i] = Tensor();
  }
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined() && ctx.materialize_grads_ && outputs[i].defined)
      grads[i] = zeros(outputs[i].sizes, TensorOptions(outputs[i].dtype).device(outputs[i].device));

  variable_list results = backward_(&ctx, std::move(grads));

  const size_t arguments = is_input_.size();
  if (results.size() > arguments) {
    bool extras_undefined = true;
    for (size_t i = arguments; i < results.size(); ++i) extras_undefined = extras_undefined && !results[i].defined();
    if (extras_undefined) results.resize(arguments);
  }
  if (results.size() != arguments)
    throw AutogradError(cohort::detail::str(
        name(), ": backward returned ", results.size(), " gradients, expected ", arguments,
        " (one per argument of forward); hint: return an undefined Tensor() for an argument that is not a tensor "
        "or needs no gradient"));
  std::vector<Tensor> edges;
  edges.reserve(inputs_.size());
  for (size_t i = 0, e = 0; i < arguments; ++i) {
    Tensor g = std::move(results[i]);
    if (!is_input_[i]) {
      if (g.defined())
        throw AutogradError(cohort::detail::str(
            name(), ": backward returned a gradient for argument ", i, " of forward, which is not a tensor input; hint: "
            "return an undefined Tensor() there"));
      continue;
    }
    const Meta& input = inputs_[e];
    if (!g.defined() || !next_functions()[e]) {
      edges.emplace_back();
      ++e;
      continue;
    }
    if (g.sizes() != IntArrayRef(input.sizes)) {
      if (!expandable(input.sizes, g.sizes()))
        throw AutogradError(cohort::detail::str(
            name(), ": backward returned a gradient of shape ", g.sizes(), " for argument ", i,
            " of forward (tensor input ", e, "), which has shape ", IntArrayRef(input.sizes)));
      g = sum_to(g, input.sizes);
    }
    if (g.dtype() != input.dtype) g = g.to(input.dtype);
    edges.push_back(std::move(g));
    ++e;
  }
  return edges;
}

CustomCall::CustomCall(std::string name, CustomBackwardFn backward) : name_(std::move(name)), backward_(backward) {}
CustomCall::~CustomCall() = default;

void CustomCall::add(const Tensor* t) {
  is_input_.push_back(t != nullptr);
  if (t) inputs_.push_back(*t);
}

AutogradContext* CustomCall::begin() {
  if (!needs_grad(inputs_)) {
    unattached_ = std::make_unique<AutogradContext>();
    unattached_->needs_input_grad_.assign(inputs_.size(), false);
    return unattached_.get();
  }
  std::vector<std::shared_ptr<Node>> next;
  std::vector<Meta> metas;
  std::vector<bool> needs;
  Device device;
  bool device_set = false;
  for (const Tensor& in : inputs_) {
    const bool tracked = in.defined() && in.requires_grad();
    next.push_back(tracked ? gradient_edge(in) : nullptr);
    needs.push_back(tracked);
    metas.push_back(meta_of(in));
    if (tracked && !device_set) device = in.device(), device_set = true;
  }
  node_ = std::make_shared<CustomNode>(name_, std::move(next), device, backward_, is_input_, std::move(metas));
  node_->ctx.needs_input_grad_ = std::move(needs);
  node_->ctx.node_ = node_;
  return &node_->ctx;
}

variable_list CustomCall::finish(variable_list outputs) {
  AutogradContext& ctx = node_ ? node_->ctx : *unattached_;
  std::vector<const void*> original(outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].defined()) original[i] = outputs[i].unsafe_impl();
  for (const void* d : ctx.dirty_) {
    bool returned = false;
    for (const void* o : original) returned = returned || o == d;
    if (!returned)
      throw AutogradError(cohort::detail::str(
          name_, ": a tensor marked dirty (mark_dirty) is not among forward's outputs; hint: return the input that "
          "forward modified in place"));
  }
  // Inputs modified in place: a leaf that requires grad cannot take a history (as for any in-place op).
  for (const Tensor& in : inputs_) {
    if (!in.defined() || !ctx.dirty_.count(in.unsafe_impl())) continue;
    if (node_ && in.is_leaf() && in.requires_grad())
      throw AutogradError(cohort::detail::str(
          name_, ": a leaf tensor that requires grad (", in.dtype(), " ", in.sizes(), ") was modified in place by "
          "forward (mark_dirty); hint: call the function on a clone(), or under NoGradGuard"));
    // As for cohort's own in-place ops: the view's base would not learn its new history.
    if (node_ && in.unsafe_impl()->is_view())
      throw AutogradError(cohort::detail::str(
          name_, ": a view (", in.sizes(), ") was modified in place by forward (mark_dirty) while recording gradients, "
          "which is not supported; hint: clone() the view first"));
    in.unsafe_impl()->storage()->bump_version();
  }
  if (!node_) return outputs;

  std::vector<size_t> differentiable;
  node_->outputs.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    if (!out.defined()) continue;
    const void* impl = original[i];
    bool is_input = false;
    for (const Tensor& in : inputs_) is_input = is_input || (in.defined() && in.unsafe_impl() == impl);
    // An input returned unchanged, or a tensor with a history of its own, is returned as an alias
    // that takes this function's history (the tensor itself keeps its own).
    if (!ctx.dirty_.count(impl) && (is_input || out.requires_grad())) out = out.detach();
    node_->outputs[i] = meta_of(out);
    if (out.is_floating_point() && !ctx.non_differentiable_.count(impl)) differentiable.push_back(i);
  }
  node_->slots_.resize(outputs.size());
  node_->relays.resize(outputs.size());
  if (differentiable.size() == 1) {
    node_->direct = static_cast<int>(differentiable[0]);
    set_history(outputs[differentiable[0]], node_);
  } else {
    for (size_t k : differentiable) {
      auto relay = std::make_shared<OutputRelay>(node_, k);
      node_->relays[k] = relay;
      set_history(outputs[k], relay);
    }
  }

  // Saved tensors, after the version bumps above: an output is kept detached (it would otherwise
  // hold its own node) and re-linked when unpacked under create_graph.
  for (const Tensor& t : ctx.to_save_) {
    int output = -1;
    for (size_t k : differentiable)
      if (t.defined() && original[k] == t.unsafe_impl()) output = static_cast<int>(k);
    if (output >= 0 && node_->direct == output) {
      ctx.saved_.emplace_back(t, /*is_output=*/true);
      output = -1;  // SavedTensor re-links it to the running node, which is its grad_fn
    } else {
      ctx.saved_.emplace_back(output >= 0 ? t.detach() : t);
    }
    ctx.saved_output_.push_back(output);
  }
  ctx.to_save_.clear();
  return outputs;
}

}  // namespace custom

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

variable_list AutogradContext::get_saved_variables() const {
  if (saved_freed_)
    throw AutogradError(
        "get_saved_variables: trying to backward through the graph a second time (the saved tensors were freed "
        "after the first backward); hint: pass retain_graph=true to the first backward() if you need to call it twice");
  variable_list out;
  out.reserve(saved_.size());
  auto node = node_.lock();
  for (size_t i = 0; i < saved_.size(); ++i) {
    Tensor t = saved_[i].unpack();
    const int output = saved_output_[i];
    if (output >= 0 && t.defined() && GradMode::is_enabled() && node && current_node() == node.get()) {
      if (auto relay = node->relays[static_cast<size_t>(output)].lock()) {
        t = t.detach();
        custom::set_history(t, std::move(relay));
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined()) dirty_.insert(t.unsafe_impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.unsafe_impl());
}

bool AutogradContext::needs_input_grad(size_t input_index) const {
  return input_index < needs_input_grad_.size() && needs_input_grad_[input_index];
}

}  // namespace cohort::autograd
