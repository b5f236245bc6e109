// nn::DataParallel and parallel::data_parallel: one forward split over several CPU devices.
//
//   auto net = std::make_shared<Net>();                       // on cpu:0
//   auto dp = std::make_shared<nn::DataParallel<Net>>(net);  // all devices; or a list: {"cpu:0", "cpu:1"}
//   optim::SGD opt(dp->parameters(), 0.1);                    // the same tensors as net->parameters()
//   Tensor loss = mse_loss((*dp)(x), y);  loss.backward();  opt.step();
//
// A call plans the split (plan.h), scatters the arguments (any number, of any kind scatter takes:
// tensors, Broadcast, Split, Share, containers), runs one replica per device in use at once
// (parallel_apply.h), and gathers what the module's forward returns onto the output device
// (gather.h; 0-d outputs become the sample-weighted mean by default). A packed sequence argument is
// split by whole sequences; an output of pad_packed_sequence, which each replica pads to its own
// longest sequence, is padded on gather to the whole batch's (packed_sequence_rules.h). Replicas are built on the
// first call and kept; before each call only changed values are copied, and each replica parameter
// is linked to the master's, so backward sums every replica's gradient into the master's .grad
// (Note [Replica synchronisation], src/parallel/replicate.cpp). Buffers: Note [Replica buffers]
// in src/parallel/batch_norm_sync.cpp. Batch norm across replicas:
// DataParallelOptions::sync_batch_norm. The first call that runs replicas on devices whose cores
// differ by more than 25% prints one warning per wrapper (describe_imbalance, core/device.h).
// Accumulating over micro-batches: optim/accumulate.h.
// A call whose plan has one replica (one device, a batch of 1, no arguments) calls the module.
// The wrapper's parameters, buffers, submodules and state_dict() are the module's, without a
// "module." prefix; hooks registered on the module run once per call, around the whole call.
// Throws cohort::Error for an empty device list, DeviceError for a device that does not exist and
// for a module not on the first device; a replica's failure as one Error naming every failed one.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/nn/module.h"
#include "cohort/ops/autocast.h"
#include "cohort/parallel/gather.h"
#include "cohort/parallel/parallel_apply.h"
#include "cohort/parallel/plan.h"
#include "cohort/parallel/replicate.h"
#include "cohort/parallel/scatter.h"

namespace cohort::parallel {

// What survives of the replicas' buffer updates (batch-norm running statistics).
enum class BufferRule {
  kExact,        // batch norm: the statistics of the whole batch, as one device would compute them;
                 // other buffers: the first replica's (as kFirstReplica)
  kFirstReplica  // PyTorch: the replica on the first device's buffers become the module's
};

struct DataParallelOptions {
  DataParallelOptions& output_device(Device d) { output_device_ = d; return *this; }
  DataParallelOptions& scatter(ScatterOptions s) { scatter_ = std::move(s); return *this; }
  DataParallelOptions& dim(int64_t d) { scatter_.dim(d); return *this; }
  DataParallelOptions& rule(SplitRule r) { scatter_.rule(r); return *this; }
  DataParallelOptions& scalars(Reduction r) { scalars_ = r; return *this; }
  DataParallelOptions& buffers(BufferRule b) { buffers_ = b; return *this; }
  // Batch norm in training normalises with the statistics of the whole batch, across replicas, so
  // outputs and gradients equal one device's (Note [Sync batch norm] in
  // src/parallel/batch_norm_sync.cpp). Off by default: each replica then normalises its chunk by
  // the chunk's statistics, as PyTorch does.
  DataParallelOptions& sync_batch_norm(bool on) { sync_batch_norm_ = on; return *this; }
  bool sync_batch_norm() const { return sync_batch_norm_; }
  const std::optional<Device>& output_device() const { return output_device_; }
  const ScatterOptions& scatter() const { return scatter_; }
  Reduction scalars() const { return scalars_; }
  BufferRule buffers() const { return buffers_; }

 private:
  std::optional<Device> output_device_;  // default: the first device
  ScatterOptions scatter_;
  Reduction scalars_ = kMean;
  BufferRule buffers_ = BufferRule::kExact;
  bool sync_batch_norm_ = false;
};

namespace detail {

// The type-independent part of DataParallel (data_parallel.cpp).
class DataParallelCore {
 public:
  DataParallelCore(std::shared_ptr<nn::Module> master, std::vector<Device> devices, DataParallelOptions options);
  ~DataParallelCore();
  void check_master() const;  // every parameter and buffer on devices()[0]
  // forward_backward's preconditions: grad mode, no forward hooks on `module` itself (the wrapped
  // one), a reduction that makes one loss.
  void check_step(const nn::Module& module) const;
  // Replica indices (into devices()) for the plan's devices.
  std::vector<size_t> indices(const Plan& plan) const;
  void set_replicas(std::vector<std::shared_ptr<nn::Module>> replicas);
  bool has_replicas() const;
  // On the calling thread before the replicas run; prepares the first replica of `which`, whose
  // gradients will go to the master as `gradients` says (ReplicaSync).
  void before_forward(const std::vector<size_t>& which,
                      ReplicaGradients gradients = ReplicaGradients::kThroughMaster);
  // The other replicas, each on its own device's thread before its forward: copies the master's
  // changed values into replica r and links its parameters (Note [Replica synchronisation]).
  void prepare_replica(size_t r, ReplicaGradients gradients);
  void after_forward(const std::vector<size_t>& which, const Plan& plan);
  // Replica r's forward returned or threw: replicas waiting for it in a sync batch norm stop waiting.
  void replica_ended(size_t r, bool threw);
  // forward_backward, on replica r's thread: the gradients of weight * loss w.r.t. the replica's own
  // leaves (ReplicaGradients::kOwn), kept for accumulate_gradients. Throws when `loss` is not a
  // one-element floating-point tensor with a graph, or when its graph reaches a tensor that requires
  // grad and is not the replica's (its gradient would be lost).
  void backward_replica(size_t r, const Tensor& loss, double weight);
  // forward_backward, on the calling thread once every replica is done: their gradients summed
  // into the master's .grad (ReplicaSync::accumulate).
  void accumulate_gradients(const std::vector<size_t>& which);
  const std::vector<Device>& devices() const;
  const DataParallelOptions& options() const;
  Device output_device() const;
  const SyncStats& stats() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

template <class T>
inline constexpr bool kAllTensors = std::is_same_v<detail::remove_cvref_t<T>, Tensor>;

// forward_backward's step results: the loss is the result, or the first element of a tuple.
void check_loss(const Tensor& loss);
template <class T>
struct IsLossResult : std::is_same<T, Tensor> {};
template <class... T>
struct IsLossResult<std::tuple<Tensor, T...>> : std::true_type {};
template <class T>
const Tensor& loss_of(const T& out) {
  static_assert(IsLossResult<T>::value, "DataParallel::forward_backward: the step must return the loss (a Tensor) "
                "or a std::tuple whose first element is the loss");
  if constexpr (std::is_same_v<T, Tensor>) {
    return out;
  } else {
    return std::get<0>(out);
  }
}

// A step's results without their graphs: Tensors and the containers gather takes (walk.h).
struct DetachVisitor {
  Tensor operator()(const Tensor& t) const { return t.defined() ? t.detach() : t; }
};
template <class T>
T detached(const T& out) {
  return map<T>(DetachVisitor{}, out);
}

}  // namespace detail
}  // namespace cohort::parallel

namespace cohort::nn {

template <class M>
class DataParallel : public Module {
 public:
  explicit DataParallel(std::shared_ptr<M> module, std::vector<Device> devices = parallel::all_devices(),
                        parallel::DataParallelOptions options = {})
      : Module("DataParallel"), module_(std::move(module)), core_(checked(module_), std::move(devices), options) {
    // The module's own tensors and children, by the same handles: no "module." prefix anywhere.
    for (const auto& p : module_->named_parameters(false)) register_parameter(p.key(), p.value(), p.value().requires_grad());
    for (const auto& b : module_->named_buffers(false)) register_buffer(b.key(), b.value());
    for (const auto& c : module_->named_children()) register_module(c.key(), c.value());
  }

  template <class... Args>
  auto forward(const Args&... args) {
    core_.check_master();
    parallel::Plan plan = parallel::plan(core_.devices(), core_.options().scatter(), args...);
    auto call = [](M& m, const auto&... a) { return m.forward(a...); };
    auto run = [&] { return run_plan(plan, call, parallel::ReplicaGradients::kThroughMaster, Keep{}, args...); };
    using Out = decltype(run());
    if constexpr ((parallel::detail::kAllTensors<Args> && ...) && std::is_same_v<Out, Tensor>) {
      // The module's hooks, once; the replicas get the tensors they hand on (aliases for backward hooks).
      return module_->call_with_hooks(std::vector<Tensor>{args...}, [&](const std::vector<Tensor>& in) {
        return run_with(plan, call, in, std::index_sequence_for<Args...>{});
      });
    } else {
      return run();
    }
  }
  template <class... Args>
  auto operator()(const Args&... args) { return forward(args...); }

  // One training step's forward and backward: each replica runs step(replica, its chunk of
  // args...), which calls the replica and returns the loss (a one-element tensor, the mean or sum
  // over its samples), or a std::tuple whose first element is the loss and whose other elements
  // (predictions, metrics) come back gathered. Then each replica differentiates its own loss, on its
  // own thread, and the replicas' gradients are summed into the module's .grad:
  //
  //   auto [loss, logits] = dp->forward_backward([](Net& net, const Tensor& x, const Tensor& y) {
  //     Tensor logits = net.forward(x);
  //     return std::make_tuple(F::cross_entropy(logits, y), logits.detach());
  //   }, x, y);
  //   opt.step();
  //
  // The gradients and the returned loss equal those of loss(forward(x)).backward() through this
  // wrapper (the loss gathered as forward's 0-d outputs are: the sample-weighted mean, or the sum
  // with DataParallelOptions::scalars(kSum)), but each replica hands work over once each way per
  // step instead of at every boundary between devices in the graph, which is much of a small
  // model's step on two devices. What comes back is detached. step runs in the caller's grad
  // and autocast modes; the backward runs outside any autocast region. Hooks on the module's
  // parameters (and DistributedDataParallel's) run once, on the summed gradient.
  // With sync batch norm, an argument that requires grad, or a plan of one replica, it runs as
  // step on the gathered output would (the same numbers, the general path).
  // Throws cohort::Error when grad mode is off, when the module has forward hooks of its own (there
  // is no call of the whole module to run them around), with the kStack reduction (no single loss),
  // when a loss is not one floating-point value with a graph, and when a loss's graph reaches a
  // tensor that requires grad and is not the module's (Note [Replica-local backward]).
  template <class Step, class... Args>
  auto forward_backward(Step step, const Args&... args) {
    core_.check_step(*module_);
    core_.check_master();
    parallel::Plan plan = parallel::plan(core_.devices(), core_.options().scatter(), args...);
    const bool local = plan.replicas() > 1 && !core_.options().sync_batch_norm() && !plan.requires_grad();
    if (!local) {
      auto out = run_plan(plan, step, parallel::ReplicaGradients::kThroughMaster, Keep{}, args...);
      const Tensor& loss = parallel::detail::loss_of(out);
      parallel::detail::check_loss(loss);
      {
        autocast::StateGuard no_autocast(autocast::State{});
        loss.backward();
      }
      return parallel::detail::detached(out);
    }
    const std::vector<size_t> which = core_.indices(plan);
    // Each replica's share of the gathered loss (gather's kMean weights; 1 for kSum).
    const std::vector<double> shares = core_.options().scalars() == kMean
                                           ? parallel::detail::sample_weights(plan.chunk_sizes)
                                           : std::vector<double>(which.size(), 1.0);
    auto finish = [&](size_t i, auto out) {
      core_.backward_replica(which[i], parallel::detail::loss_of(out), shares[i]);
      return parallel::detail::detached(out);
    };
    auto out = run_plan(plan, step, parallel::ReplicaGradients::kOwn, finish, args...);
    core_.accumulate_gradients(which);
    return out;
  }

  const std::shared_ptr<M>& module() const { return module_; }
  const std::vector<std::shared_ptr<M>>& replicas() const { return replicas_; }
  const parallel::SyncStats& sync_stats() const { return core_.stats(); }
  const std::vector<Device>& device_ids() const { return core_.devices(); }

  void train(bool on = true) override { Module::train(on); module_->train(on); }
  void to(Device d, bool non_blocking = false) override { module_->to(d, non_blocking); }
  void to(DType t, bool non_blocking = false) override { module_->to(t, non_blocking); }
  void to(Device d, DType t, bool non_blocking = false) override { module_->to(d, t, non_blocking); }
  void pretty_print(std::ostream& os) const override {
    os << "DataParallel(devices=[";
    for (size_t i = 0; i < core_.devices().size(); ++i) os << (i ? ", " : "") << core_.devices()[i];
    os << "], output_device=" << core_.output_device() << ")";
  }

 private:
  static std::shared_ptr<Module> checked(const std::shared_ptr<M>& m) {
    COHORT_CHECK(m != nullptr, "DataParallel: the module is empty (nullptr); hint: construct it first");
    return m;
  }

  // call(replica, chunk...) on every replica of the plan, gathered. finish(i, out) runs on the
  // plan's i-th replica's thread right after its call and returns what is gathered.
  template <class Call, class Finish, class... Args>
  auto run_plan(const parallel::Plan& plan, Call call, parallel::ReplicaGradients gradients, Finish finish,
                const Args&... args) {
    auto inputs = parallel::scatter(plan, args...);
    if (plan.replicas() == 1) {  // one device, a batch of 1, no arguments: the module itself
      auto out = std::apply([&](const auto&... a) { return call(*module_, a...); }, inputs[0]);
      if (plan.devices[0] == core_.output_device()) return out;
      return parallel::gather(std::vector<decltype(out)>{out}, core_.output_device(), gather_options(plan));
    }
    if (!core_.has_replicas()) {
      replicas_ = parallel::replicate(module_, core_.devices());
      core_.set_replicas({replicas_.begin(), replicas_.end()});
    }
    std::vector<size_t> which = core_.indices(plan);
    std::vector<std::shared_ptr<M>> used;
    for (size_t i : which) used.push_back(replicas_[i]);
    // What pad_packed_sequence returns in each replica (Note [Padded outputs on gather], packed_sequence_rules.h).
    std::vector<std::vector<nn::utils::rnn::detail::PadRecord>> padded(used.size());
    auto tracked = [&](M& m, const auto&... a) {
      const auto i = static_cast<size_t>(
          std::find_if(used.begin(), used.end(), [&](const auto& u) { return u.get() == &m; }) - used.begin());
      const size_t r = which[i];
      try {
        if (i > 0) core_.prepare_replica(r, gradients);
        nn::utils::rnn::detail::PadRecorder recorder;
        auto out = call(m, a...);
        padded[i] = recorder.take();
        core_.replica_ended(r, false);
        return finish(i, std::move(out));
      } catch (...) {
        core_.replica_ended(r, true);
        throw;
      }
    };
    core_.before_forward(which, gradients);
    auto outputs = parallel::parallel_apply(used, inputs, plan, tracked);
    core_.after_forward(which, plan);
    return parallel::gather(outputs, core_.output_device(), gather_options(plan).padded_outputs(std::move(padded)));
  }

  template <class Call, size_t... I>
  Tensor run_with(const parallel::Plan& plan, Call call, const std::vector<Tensor>& in, std::index_sequence<I...>) {
    return run_plan(plan, call, parallel::ReplicaGradients::kThroughMaster, Keep{}, in[I]...);
  }

  // run_plan's `finish` that gathers each replica's output as it is.
  struct Keep {
    template <class Out>
    Out operator()(size_t, Out out) const { return out; }
  };

  parallel::GatherOptions gather_options(const parallel::Plan& plan) const {
    return parallel::GatherOptions(plan).scalars(core_.options().scalars());
  }

  std::shared_ptr<M> module_;
  parallel::detail::DataParallelCore core_;
  std::vector<std::shared_ptr<M>> replicas_;
};

}  // namespace cohort::nn

namespace cohort::parallel {

// The functional form (libtorch's torch::nn::parallel::data_parallel): one call, replicas built for
// it and dropped after. output_device nullopt means devices[0]. See nn::DataParallel.
template <class M, class... Args>
auto data_parallel(const std::shared_ptr<M>& module, std::vector<Device> devices, std::optional<Device> output_device,
                   DataParallelOptions options, const Args&... args) {
  if (output_device) options.output_device(*output_device);
  nn::DataParallel<M> wrapper(module, std::move(devices), options);
  return wrapper.forward(args...);
}

}  // namespace cohort::parallel
