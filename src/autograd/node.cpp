// Node bookkeeping: creation order and pre-hooks.
#include "cohort/autograd/node.h"

#include <atomic>
#include <ostream>

#include "cohort/autograd/graph.h"

namespace cohort::autograd {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}

uint64_t next_sequence_nr() { return g_next_sequence_nr.load(std::memory_order_relaxed); }

Node::Node(std::string name, std::vector<std::shared_ptr<Node>> next_functions, Device device)
    : name_(std::move(name)), next_(std::move(next_functions)), device_(device),
      sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

unsigned Node::add_pre_hook(Hook hook) {
  pre_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Node::remove_pre_hook(unsigned handle) {
  std::erase_if(pre_hooks_, [handle](const auto& h) { return h.first == handle; });
}

Tensor Node::run_pre_hooks(Tensor grad) const {
  for (const auto& [id, hook] : pre_hooks_) {
    Tensor replaced = hook(grad);
    if (replaced.defined()) grad = std::move(replaced);
  }
  return grad;
}

std::ostream& operator<<(std::ostream& os, const Node& node) { return os << "<" << node.name() << ">"; }

}  // namespace cohort::autograd
