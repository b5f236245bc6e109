// DistributedDataParallel: one model per process, gradients averaged across processes during backward.
//
//   auto pg = distributed::init_process_group();                        // one process per rank
//   auto ddp = std::make_shared<distributed::DistributedDataParallel<Net>>(net, pg);
//   optim::SGD opt(ddp->parameters(), 0.1);                             // net's own tensors
//   data::DistributedSampler sampler(n, pg->rank(), pg->world_size());  // each rank its share
//   Tensor loss = mse_loss((*ddp)(x), y);  loss.backward();  opt.step(); // .grad() = mean over ranks
//
// Construction is collective: rank 0's parameters and buffers are broadcast to every rank. forward takes
// the module's arguments; in training under grad mode it first broadcasts rank 0's buffers
// (DistributedDataParallelOptions::broadcast_buffers). The backward of a forward run with sync on (the
// default) reduces gradients in buckets while it runs and returns with every .grad() equal to the mean
// over ranks (Note [Gradient buckets], src/distributed/reducer.cpp). So every rank must run the same
// number of forward/backward iterations (uneven.h: check_equal_batches, and data::DistributedSampler
// gives every rank the same count). To accumulate over micro-batches, run all but the last under
//   { auto guard = ddp->no_sync(); (*ddp)(x1)...backward(); }   (*ddp)(x2)...backward();  // reduces the sum
// The module may be an nn::DataParallel (several devices inside each process). The wrapper's parameters,
// buffers, children and state_dict() are the module's, without a "module." prefix.
// Errors: a parameter without gradient on some rank (unless find_unused_parameters), and any failed
// collective (distributed::CommError naming the op, the timeout and the peer), are thrown from backward().
#pragma once

#include <memory>
#include <ostream>

#include "cohort/distributed/init.h"
#include "cohort/distributed/process_group.h"
#include "cohort/distributed/reducer.h"
#include "cohort/nn/module.h"

namespace cohort::distributed {

template <class M>
class DistributedDataParallel : public nn::Module {
 public:
  explicit DistributedDataParallel(std::shared_ptr<M> module, std::shared_ptr<ProcessGroup> group = default_group(),
                                   DistributedDataParallelOptions options = {})
      : Module("DistributedDataParallel"), module_(std::move(module)), reducer_(std::move(group), module_, options) {
    for (const auto& p : module_->named_parameters(false)) register_parameter(p.key(), p.value(), p.value().requires_grad());
    for (const auto& b : module_->named_buffers(false)) register_buffer(b.key(), b.value());
    for (const auto& c : module_->named_children()) register_module(c.key(), c.value());
  }

  template <class... Args>
  auto forward(const Args&... args) {
    reducer_.before_forward();
    auto out = module_->forward(args...);
    reducer_.after_forward();
    return out;
  }
  template <class... Args>
  auto operator()(const Args&... args) { return forward(args...); }

  // While the guard lives, forwards arm no reduction: their backward only accumulates locally.
  class NoSync {
   public:
    explicit NoSync(Reducer& r) : reducer_(r), previous_(r.sync()) { r.set_sync(false); }
    ~NoSync() { reducer_.set_sync(previous_); }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    Reducer& reducer_;
    bool previous_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(reducer_); }

  const std::shared_ptr<M>& module() const { return module_; }
  const std::shared_ptr<ProcessGroup>& process_group() const { return reducer_.process_group(); }
  const std::vector<BucketInfo>& buckets() const { return reducer_.buckets(); }
  // Sums values over the ranks in the next backward's gradient all-reduce (Reducer::reduce_with_gradients).
  Reducer& reducer() { return reducer_; }

  void train(bool on = true) override { Module::train(on); module_->train(on); }
  void to(Device d, bool non_blocking = false) override { module_->to(d, non_blocking); }
  void to(DType t, bool non_blocking = false) override { module_->to(t, non_blocking); }
  void to(Device d, DType t, bool non_blocking = false) override { module_->to(d, t, non_blocking); }
  void pretty_print(std::ostream& os) const override {
    os << "DistributedDataParallel(rank=" << process_group()->rank() << ", world_size=" << process_group()->world_size()
       << ", buckets=" << buckets().size();
    if (reducer_.options().comm_hook() != CommHook::kAllReduce) os << ", comm_hook=" << reducer_.options().comm_hook();
    os << ")";
  }

 private:
  std::shared_ptr<M> module_;
  Reducer reducer_;
};

}  // namespace cohort::distributed
