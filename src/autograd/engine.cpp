// The backward engine.
//
// Note [Backward engine]
// backward() first counts, for every node reachable from the roots, how many edges lead into it.
// A node is ready when all of them have delivered their gradient (summed in its input buffer).
// Ready nodes run on their device's thread. The calling thread stands for one device: on a device
// executor's thread (a hook or a replica calling backward) that executor's device, on any other
// thread the device of the first root. Nodes on that device run on the calling thread; nodes on
// other devices run on their device's executor (Note [Device executor] in src/core/
// device_executor.cpp), the thread that also runs that device's parallel_apply replicas, so the parts
// of a graph on different devices (data-parallel replicas) run their backward at the same time and
// each device keeps one OpenMP pool. Among ready nodes the one created last runs first (PyTorch's
// order), which lets gradients of the last layers finish early. The first error stops scheduling; it
// is rethrown on the calling thread once the nodes in flight are done, so nothing hangs. Callbacks
// queued during the pass run on the calling thread at its end. Executors run with their device's
// share of the intra-op threads, and so does the calling thread while a graph spans several devices
// (Note [Threads per device] in src/core/threads.cpp), so a data-parallel backward never starts more
// threads than cores.
// A pass started on an executor's thread queues its own device's nodes on that executor and waits in
// run_ranked_until, which keeps running them (and the device's other ready nodes): waiting for work
// queued to its own thread cannot block it.
//
// Note [Freeing the graph as it runs]
// Without retain_graph a pass frees each node's saved tensors (Node::release) right after the node
// has run, as PyTorch's engine does, not when the whole pass ends: the activations of the layers
// already back-propagated are gone while the earlier layers' backward runs, so backward's peak memory
// is the forward's saved tensors falling, not all of them plus backward's temporaries. Activation
// checkpointing depends on it: a recomputed segment replaces the saved tensors already freed. The
// nodes a grad() call does not run are freed at the end of the pass, with everything else.
//
// grad() runs only the nodes on a path from the roots to one of its inputs, as PyTorch's engine does:
// other branches, the AccumulateGrad of other leaves and their hooks are skipped. Besides saving the
// work, this keeps a grad() inside a data-parallel replica off the other devices' threads (the
// module's parameters live on cpu:0, whose thread may be running replica 0's forward).
#include "cohort/autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/engine_state.h"
#include "autograd/function_node.h"
#include "autograd/meta.h"
#include "core/device_executor.h"
#include "core/wait_policy.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/profiling.h"
#include "cohort/core/threads.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::autograd {

namespace {

struct GraphTask;

// A ready node of the calling thread's device. The task is owned by the thread that called
// backward(), which waits until every scheduled node has finished; executors hold a plain pointer
// and never touch the task after their last decrement.
struct ReadyItem {
  uint64_t sequence_nr;
  Node* node;
  bool operator<(const ReadyItem& o) const { return sequence_nr < o.sequence_nr; }
};

struct GraphTask {
  std::mutex mutex;
  std::condition_variable cv;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, Tensor> buffers;
  std::priority_queue<ReadyItem> local_ready;  // the calling thread's nodes, unless it is an executor's
  int outstanding = 0;                         // scheduled and not yet finished
  // Counts the notifications of cv (under mutex): the calling thread watches it while it spins
  // before sleeping on cv (Note [Hand-off wait] in src/core/threads.cpp).
  std::atomic<uint64_t> signals{0};
  std::exception_ptr error;
  Device owner_device;
  // Set when backward() was called on an executor's thread: the owner's nodes are queued there, and
  // the owner waits in run_ranked_until(finished) instead of on cv.
  detail::DeviceExecutor* owner_executor = nullptr;
  std::atomic<bool> finished{false};
  bool create_graph = false;
  // Without retain_graph, each node frees its saved tensors as soon as it has run (Note [Freeing the
  // graph as it runs]).
  bool release_as_run = false;
  // The caller's autocast state: a node runs as it would on the caller's thread, wherever it runs.
  autocast::State autocast_state;
  // For grad(): gradients arriving at these nodes are captured instead of applied, and only the
  // nodes in `needed` run (Note [Backward engine]).
  bool grad_call = false;
  std::unordered_map<Node*, size_t> captures;
  std::unordered_set<Node*> needed;
  std::vector<Tensor> captured;
  std::vector<std::function<void()>> callbacks;
};

thread_local GraphTask* t_current_task = nullptr;
thread_local Node* t_current_node = nullptr;

void schedule(GraphTask* task, Node* node);  // task->mutex held

// The nodes reachable from `roots` from which one of `targets` is reachable (targets included):
// the ones a grad() call must run. Iterative, since graphs can be deeper than the stack.
std::unordered_set<Node*> nodes_reaching(const std::vector<std::shared_ptr<Node>>& roots,
                                         const std::unordered_map<Node*, size_t>& targets) {
  std::unordered_set<Node*> reaching, visited;
  std::vector<std::pair<Node*, size_t>> stack;  // a node and the next of its edges to look at
  for (const auto& r : roots)
    if (visited.insert(r.get()).second) stack.emplace_back(r.get(), 0);
  while (!stack.empty()) {
    auto& [node, edge] = stack.back();
    const auto& next = node->next_functions();
    if (edge < next.size()) {
      Node* child = next[edge++].get();
      if (child && visited.insert(child).second) stack.emplace_back(child, 0);
      continue;
    }
    bool reaches = targets.count(node) > 0;
    for (const auto& child : next) reaches = reaches || (child && reaching.count(child.get()));
    if (reaches) reaching.insert(node);
    stack.pop_back();
  }
  return reaching;
}

void check_anomaly(const Node& node, const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() || !grads[i].is_floating_point()) continue;
    if (!isfinite(grads[i]).logical_not().sum().item<int64_t>()) continue;
    throw AutogradError(detail::str("anomaly detected: ", node.name(), " returned NaN or Inf in its gradient #", i,
                                    " (shape ", grads[i].sizes(), "); the op that produced it in forward is ",
                                    node.forward_op().empty() ? node.name() : node.forward_op()));
  }
}

bool same_autocast_state(const autocast::State& a, const autocast::State& b) {
  return a.enabled == b.enabled && a.dtype == b.dtype && a.cache_enabled == b.cache_enabled &&
         a.inside_cast_op == b.inside_cast_op;
}

// Runs one ready node and delivers its gradients. Never throws: errors are stored in the task.
void execute(GraphTask* task, Node* node) {
  GraphTask* previous_task = t_current_task;
  t_current_task = task;
  std::vector<Tensor> grads;
  bool failed = false;
  try {
    Tensor grad;
    bool stopped;
    {
      std::lock_guard<std::mutex> l(task->mutex);
      stopped = task->error != nullptr;
      auto it = task->buffers.find(node);
      if (it != task->buffers.end()) {
        grad = std::move(it->second);
        task->buffers.erase(it);
      }
    }
    if (!stopped && grad.defined()) {
      AutoGradMode mode(task->create_graph);
      // The caller's autocast state, set only where it differs from this thread's: on the calling
      // thread, and on an executor outside any autocast region, the state is already the task's, and
      // a guard there would only count the nesting up and down (and empty the cast cache) per node.
      std::optional<autocast::StateGuard> autocast_scope;
      if (!same_autocast_state(task->autocast_state, autocast::current_state()))
        autocast_scope.emplace(task->autocast_state);
      grad = node->run_pre_hooks(std::move(grad));
      auto capture = task->captures.find(node);
      if (capture != task->captures.end()) task->captured[capture->second] = grad;
      // grad() leaves every .grad untouched, of its inputs and of any other leaf, as PyTorch's does.
      if (task->grad_call && dynamic_cast<AccumulateGrad*>(node)) grad = Tensor();
      if (grad.defined()) {
        Node* previous_node = t_current_node;
        t_current_node = node;
        try {
          profiling::Scope profile(node->name(), profiling::Kind::Backward);
          if (profile) profile.inputs({grad});
          grads = node->apply(std::move(grad));
          if (task->release_as_run) node->release();
        } catch (...) {
          t_current_node = previous_node;
          throw;
        }
        t_current_node = previous_node;
        if (AnomalyMode::is_enabled()) check_anomaly(*node, grads);
      }
    }
  } catch (...) {
    failed = true;
    std::lock_guard<std::mutex> l(task->mutex);
    if (!task->error) task->error = std::current_exception();
  }
  t_current_task = previous_task;
  // Delivery. A gradient for a node whose buffer already holds one is summed outside the task's
  // lock: the master parameters of a data-parallel module each receive one gradient per replica,
  // and summing megabytes under the lock would stall every other device's thread at its next
  // delivery. The node is not scheduled before its sum is stored (its dependency count is
  // decremented after), and this node's own count in `outstanding` keeps the pass open meanwhile.
  struct PendingSum {
    Node* next;
    std::vector<Tensor> terms;  // summed left to right: the order of arrival
  };
  std::vector<PendingSum> sums;
  detail::DeviceExecutor* owner = nullptr;
  auto finish = [&] {  // task->mutex held
    grads.clear();     // nothing of this node's outlives the decrement below
    if (--task->outstanding == 0) {
      task->finished.store(true, std::memory_order_release);
      owner = task->owner_executor;
      task->signals.fetch_add(1, std::memory_order_release);
      task->cv.notify_all();
    }
  };
  {
    std::lock_guard<std::mutex> l(task->mutex);
    const auto& next = node->next_functions();
    for (size_t i = 0; i < next.size(); ++i) {
      Node* n = next[i].get();
      if (!n || (task->grad_call && !task->needed.count(n))) continue;
      if (!failed && i < grads.size() && grads[i].defined()) {
        auto pending = std::find_if(sums.begin(), sums.end(), [n](const PendingSum& p) { return p.next == n; });
        if (pending != sums.end()) {  // a second edge of this node into n (x * x)
          pending->terms.push_back(std::move(grads[i]));
          --task->dependencies[n];  // not to 0: the pending sum still holds one
          continue;
        }
        Tensor& buffer = task->buffers[n];
        if (buffer.defined()) {
          sums.push_back(PendingSum{n, {}});
          sums.back().terms.push_back(std::move(buffer));
          sums.back().terms.push_back(std::move(grads[i]));
          buffer = Tensor();
          continue;  // its dependency is counted down once the sum is stored
        }
        buffer = std::move(grads[i]);
      }
      if (--task->dependencies[n] == 0) schedule(task, n);
    }
    if (sums.empty()) finish();
  }
  if (!sums.empty()) {
    std::exception_ptr error;
    std::vector<Tensor> summed(sums.size());
    for (size_t k = 0; k < sums.size(); ++k) {
      try {
        Tensor sum = sums[k].terms[0];
        for (size_t t = 1; t < sums[k].terms.size(); ++t) sum = sum + sums[k].terms[t];
        summed[k] = std::move(sum);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      sums[k].terms.clear();
    }
    std::lock_guard<std::mutex> l(task->mutex);
    if (error && !task->error) task->error = error;
    for (size_t k = 0; k < sums.size(); ++k) {
      Node* n = sums[k].next;
      Tensor& buffer = task->buffers[n];
      if (summed[k].defined()) {
        if (buffer.defined()) {  // another thread delivered meanwhile (more than two devices)
          try {
            buffer = buffer + summed[k];
          } catch (...) {
            if (!task->error) task->error = std::current_exception();
          }
        } else {
          buffer = std::move(summed[k]);
        }
      }
      if (--task->dependencies[n] == 0) schedule(task, n);
    }
    sums.clear();
    finish();
  }
  if (owner) owner->wake();  // the task may be gone; the executor lives for the process
}

void schedule(GraphTask* task, Node* node) {
  ++task->outstanding;
  if (node->device() == task->owner_device && !task->owner_executor) {
    task->local_ready.push(ReadyItem{node->sequence_nr(), node});
    task->signals.fetch_add(1, std::memory_order_release);
    task->cv.notify_all();
  } else {
    detail::DeviceExecutor::of(node->device()).post_ranked(node->sequence_nr(), [task, node] { execute(task, node); });
  }
}

std::vector<Tensor> run_backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
                                 std::optional<bool> retain_graph, bool create_graph,
                                 const std::vector<Tensor>* inputs, bool allow_unused) {
  COHORT_CHECK(!outputs.empty(), "backward: expected at least one tensor, got none");
  COHORT_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "backward: got ", outputs.size(),
               " tensors but ", grad_outputs.size(), " gradients");
  auto task = std::make_shared<GraphTask>();
  task->create_graph = create_graph;
  task->autocast_state = autocast::current_state();
  bool keep_graph = retain_graph.value_or(create_graph);
  task->release_as_run = !keep_graph;

  std::vector<std::shared_ptr<Node>> roots;
  std::vector<Tensor> root_grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    COHORT_CHECK(out.defined(), "backward: tensor ", i, " is undefined");
    COHORT_CHECK_AS(AutogradError, out.requires_grad(), "backward: element ", i,
                    " of tensors does not require grad and does not have a grad_fn; hint: create the leaves "
                    "with requires_grad(true), and do not compute the loss under NoGradGuard");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      COHORT_CHECK_AS(AutogradError, out.numel() == 1, "backward: grad can be implicitly created only for "
                      "outputs with one element, got shape ", out.sizes(),
                      "; hint: pass a gradient of that shape (backward(gradient)), or reduce the output first");
      g = ones_like(out);
    } else {
      COHORT_CHECK(g.sizes() == out.sizes(), "backward: the gradient for tensor ", i, " has shape ", g.sizes(),
                   " but the tensor has shape ", out.sizes());
    }
    roots.push_back(gradient_edge(out));
    root_grads.push_back(g);
  }
  task->owner_executor = detail::DeviceExecutor::current();
  task->owner_device = task->owner_executor ? task->owner_executor->device() : roots[0]->device();

  // Count the edges into every reachable node.
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (auto& r : roots)
    if (seen.insert(r.get()).second) stack.push_back(r.get());
  bool multi_device = false;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    multi_device = multi_device || n->device() != task->owner_device;
    for (const auto& next : n->next_functions()) {
      if (!next) continue;
      ++task->dependencies[next.get()];
      if (seen.insert(next.get()).second) stack.push_back(next.get());
    }
  }

  if (inputs) {
    task->grad_call = true;
    task->captured.resize(inputs->size());
    for (size_t i = 0; i < inputs->size(); ++i) {
      const Tensor& in = (*inputs)[i];
      COHORT_CHECK_AS(AutogradError, in.defined() && in.requires_grad(), "grad: input ", i,
                      " does not require grad");
      std::shared_ptr<Node> edge = gradient_edge(in);
      COHORT_CHECK_AS(AutogradError, allow_unused || seen.count(edge.get()), "grad: input ", i,
                      " (shape ", in.sizes(), ") was not used to compute the outputs; hint: pass allow_unused=true");
      task->captures[edge.get()] = i;
    }
    task->needed = nodes_reaching(roots, task->captures);
  }

  // The calling thread works for the owner device in this pass; see Note [Threads per device].
  const int caller_threads = get_num_threads();
  if (multi_device) set_num_threads(device_num_threads(task->owner_device));
  {
    std::unique_lock<std::mutex> l(task->mutex);
    for (size_t i = 0; i < roots.size(); ++i) {
      Tensor& buffer = task->buffers[roots[i].get()];
      buffer = buffer.defined() ? buffer + root_grads[i] : root_grads[i];
    }
    std::unordered_set<Node*> scheduled;
    for (auto& r : roots)
      if (task->dependencies[r.get()] == 0 && (!inputs || task->needed.count(r.get())) &&
          scheduled.insert(r.get()).second)
        schedule(task.get(), r.get());

    // The calling thread works the queue of its own device until the whole graph is done.
    if (task->owner_executor) {
      if (task->outstanding == 0) task->finished.store(true, std::memory_order_release);
      l.unlock();
      task->owner_executor->run_ranked_until(task->finished);
      l.lock();
    }
    while (task->outstanding > 0) {
      if (task->local_ready.empty()) {
        const uint64_t seen = task->signals.load(std::memory_order_relaxed);
        l.unlock();
        detail::spin_until([&] { return task->signals.load(std::memory_order_acquire) != seen; });
        l.lock();
      }
      task->cv.wait(l, [&] { return task->outstanding == 0 || !task->local_ready.empty(); });
      if (task->local_ready.empty()) continue;
      ReadyItem item = task->local_ready.top();
      task->local_ready.pop();
      l.unlock();
      execute(task.get(), item.node);
      l.lock();
    }
  }
  if (multi_device) set_num_threads(caller_threads);

  if (!keep_graph) {
    for (Node* n : seen) n->release();
  }
  if (task->error) std::rethrow_exception(task->error);

  // Callbacks may queue more callbacks.
  GraphTask* previous = t_current_task;
  t_current_task = task.get();
  for (size_t i = 0; i < task->callbacks.size(); ++i) {
    auto cb = task->callbacks[i];
    cb();
  }
  t_current_task = previous;
  return task->captured;
}

}  // namespace

Node* current_node() { return t_current_node; }

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              std::optional<bool> retain_graph, bool create_graph) {
  run_backward(outputs, grad_outputs, retain_graph, create_graph, nullptr, false);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  return run_backward(outputs, grad_outputs, retain_graph, create_graph, &inputs, allow_unused);
}

void queue_callback(std::function<void()> callback) {
  COHORT_CHECK_AS(AutogradError, t_current_task != nullptr,
                  "queue_callback: called outside a backward pass; hint: call it from a hook during backward()");
  std::lock_guard<std::mutex> l(t_current_task->mutex);
  t_current_task->callbacks.push_back(std::move(callback));
}

}  // namespace cohort::autograd
