// DataParallel's type-independent part: device checks, replica bookkeeping, buffer merging
// (batch_norm_sync.cpp has the batch-norm rules: Notes [Replica buffers] and [Sync batch norm]).
//
// Imbalance: before a forward on several replicas, until it has warned once, the wrapper compares
// the devices in use (describe_imbalance, Note [Device properties]) whenever they or the device
// count differ from the last comparison's; devices whose core shares
// differ by more than 25% get one warning on stderr per wrapper, naming each device and its cores,
// since every step then waits for the slowest replica.
#include "cohort/parallel/data_parallel.h"

#include <algorithm>
#include <iostream>
#include <unordered_set>

#include "batch_norm_sync.h"
#include "cohort/autograd/engine.h"
#include "cohort/autograd/graph.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/core/error.h"

namespace cohort::parallel::detail {

namespace {

constexpr const char* kStepOp = "DataParallel::forward_backward";

// Note [Replica-local backward]
// forward_backward differentiates each replica's loss on the replica's own thread, down to the
// replica's leaves only. A graph that reaches any other tensor that requires grad (one the
// closure captured, or a module member that is not registered) would have that tensor's gradient
// silently dropped, or accumulated by two threads at once; so it is an error naming the tensor.
void check_graph_stays_in_replica(const Tensor& loss, const std::vector<Tensor>& leaves) {
  std::unordered_set<const TensorImpl*> own;
  for (const Tensor& t : leaves) own.insert(t.unsafe_impl());
  for (const Tensor& leaf : autograd::graph_leaves(loss))
    if (!own.count(leaf.unsafe_impl()))
      throw Error(::cohort::detail::str(
          kStepOp, ": the loss depends on a tensor of shape ", leaf.sizes(), " on ", leaf.device(),
          " that requires grad and is not the module's (not a registered parameter or "
          "buffer); forward_backward differentiates the module's tensors only, so its gradient would be lost; "
          "hint: register it in the module, pass it to forward_backward as an argument, or call forward() and "
          "backward() the loss"));
}

}  // namespace

void check_loss(const Tensor& loss) {
  COHORT_CHECK(loss.defined(), kStepOp, ": the step returned an undefined loss; hint: return the loss tensor "
               "(or a std::tuple whose first element is the loss)");
  COHORT_CHECK(loss.numel() == 1 && loss.is_floating_point(), kStepOp, ": expected the loss to be one "
               "floating-point value, got ", loss.dtype(), " of shape ", loss.sizes(),
               "; hint: reduce it (mean() or sum()) inside the step");
  COHORT_CHECK_AS(AutogradError, loss.requires_grad(), kStepOp, ": the loss does not require grad; hint: "
                  "compute it from the module's output, and not under NoGradGuard");
}

struct DataParallelCore::State {
  std::shared_ptr<nn::Module> master;
  std::vector<Device> devices;
  DataParallelOptions options;
  std::optional<ReplicaSync> sync;
  std::vector<BnLayer> bn_layers;
  std::vector<std::shared_ptr<SyncBn>> sync_bn;  // one per batch-norm layer, with sync_batch_norm
  std::vector<std::vector<uint32_t>> buffer_versions;  // per replica, as of before_forward
  std::vector<std::vector<Tensor>> replica_grads;  // per replica: backward_replica's gradients
  SyncStats empty;
  bool warned_imbalance = false;
  std::vector<size_t> balanced_which;  // the replicas last compared without a warning, and the
  int balanced_count = 0;              // device count then
};

DataParallelCore::DataParallelCore(std::shared_ptr<nn::Module> master, std::vector<Device> devices,
                                   DataParallelOptions options)
    : state_(std::make_unique<State>()) {
  COHORT_CHECK(!devices.empty(), "DataParallel: the device list is empty; hint: pass devices such as "
               "{\"cpu:0\", \"cpu:1\"}, or parallel::all_devices()");
  for (Device d : devices) check_device(d, "DataParallel");
  if (options.output_device()) check_device(*options.output_device(), "DataParallel");
  state_->master = std::move(master);
  state_->devices = std::move(devices);
  state_->options = std::move(options);
}

DataParallelCore::~DataParallelCore() = default;

void DataParallelCore::check_master() const {
  const Device first = state_->devices[0];
  auto check = [&](const nn::StateDict& tensors, const char* kind) {
    for (const auto& t : tensors)
      COHORT_CHECK_AS(DeviceError, t.value().device() == first, "DataParallel: the module must have its parameters "
                      "and buffers on the first device ", first, ", but ", kind, " '", t.key(), "' is on ",
                      t.value().device(), "; hint: call module->to(", first, ") or list ", t.value().device(), " first");
  };
  check(state_->master->named_parameters(), "parameter");
  check(state_->master->named_buffers(), "buffer");
}

void DataParallelCore::check_step(const nn::Module& module) const {
  COHORT_CHECK(GradMode::is_enabled(), kStepOp, ": grad mode is off, so there is nothing to differentiate; hint: "
               "call forward() to evaluate, or leave the NoGradGuard first");
  COHORT_CHECK(module.forward_hooks().empty() && module.forward_pre_hooks().empty(), kStepOp, ": the module has "
               "forward hooks of its own, which run around a call of the whole module, and forward_backward calls "
               "your step on each replica instead; hint: register them on a submodule (they run in every replica), "
               "or call forward()");
  COHORT_CHECK(state_->options.scalars() == kMean || state_->options.scalars() == kSum, kStepOp,
               ": the replicas' losses must reduce to one loss, by kMean or kSum, but DataParallelOptions::scalars "
               "is kStack (one value per replica); hint: use kMean (a loss averaged over samples) or kSum");
}

std::vector<size_t> DataParallelCore::indices(const Plan& plan) const {
  std::vector<size_t> out;
  for (Device d : plan.devices)
    out.push_back(std::find(state_->devices.begin(), state_->devices.end(), d) - state_->devices.begin());
  return out;
}

bool DataParallelCore::has_replicas() const { return state_->sync.has_value(); }

void DataParallelCore::set_replicas(std::vector<std::shared_ptr<nn::Module>> replicas) {
  auto master_modules = state_->master->modules();
  std::vector<std::vector<std::shared_ptr<nn::Module>>> replica_modules;
  for (auto& r : replicas) replica_modules.push_back(r->modules());
  for (size_t k = 0; k < master_modules.size(); ++k) {
    if (!bn_view(*master_modules[k]).options) continue;
    if (state_->options.sync_batch_norm()) {  // every replica's running statistics are the whole batch's
      auto sync = std::make_shared<SyncBn>();
      for (size_t r = 0; r < replica_modules.size(); ++r) install_sync_batch_norm(*replica_modules[r][k], sync, r);
      state_->sync_bn.push_back(sync);
      continue;
    }
    BnLayer layer{master_modules[k], {}, {}, {}};
    for (auto& mods : replica_modules) {
      auto stats = std::make_shared<BnStats>();
      if (state_->options.buffers() == BufferRule::kExact) record_batch_stats(*mods[k], stats);
      layer.replicas.push_back(mods[k]);
      layer.stats.push_back(stats);
    }
    state_->bn_layers.push_back(std::move(layer));
  }
  state_->sync.emplace(state_->master, std::move(replicas));
}

void DataParallelCore::before_forward(const std::vector<size_t>& which, ReplicaGradients gradients) {
  // The comparison reads the affinity mask and the memory size (system calls): once per set of
  // devices and device count, not at every step.
  if (!state_->warned_imbalance && which.size() > 1 &&
      (which != state_->balanced_which || device_count() != state_->balanced_count)) {
    state_->balanced_which = which;
    state_->balanced_count = device_count();
    std::vector<Device> used;
    for (size_t r : which) used.push_back(state_->devices[r]);
    std::string imbalance = describe_imbalance(used);
    if (!imbalance.empty()) {
      state_->warned_imbalance = true;
      std::cerr << "cohort: warning: DataParallel: " << imbalance << "\n";
    }
  }
  for (auto& sync : state_->sync_bn) sync->reset(state_->sync->replicas().size(), which);
  for (auto& layer : state_->bn_layers) {
    for (auto& s : layer.stats) s->filled = false;
    layer.versions.assign(layer.replicas.size(), 0);
  }
  state_->buffer_versions.assign(state_->sync->replicas().size(), {});
  state_->replica_grads.assign(state_->sync->replicas().size(), {});
  // The first replica here, the others on their threads (prepare_replica), so that the copies into
  // replicas on other devices overlap the first replica's forward instead of preceding it. The first
  // one links every master parameter and so makes their gradient accumulators before any other
  // thread looks for them (ReplicaSync::synchronize).
  prepare_replica(which[0], gradients);
}

void DataParallelCore::prepare_replica(size_t r, ReplicaGradients gradients) {
  state_->sync->synchronize({r}, gradients);
  // Versions as of after the copy, which may have written the replica's buffers.
  for (auto& layer : state_->bn_layers) {
    BnView v = bn_view(*layer.replicas[r]);
    layer.versions[r] = v.num_batches_tracked->defined() ? v.num_batches_tracked->_version() : 0;
  }
  for (const Tensor& b : state_->sync->replicas()[r]->buffers()) state_->buffer_versions[r].push_back(b._version());
}

void DataParallelCore::after_forward(const std::vector<size_t>& which, const Plan& plan) {
  state_->sync->check_parameters_unwritten(which, "DataParallel");
  NoGradGuard no_grad;
  std::vector<const TensorImpl*> merged;  // master buffers already set by the exact rule
  if (state_->options.buffers() == BufferRule::kExact) {
    for (auto& layer : state_->bn_layers)
      if (merge_batch_norm(layer, which, plan)) {
        BnView m = bn_view(*layer.master);
        for (Tensor* t : {m.running_mean, m.running_var, m.num_batches_tracked})
          if (t->defined()) merged.push_back(t->unsafe_impl());
      }
  }
  // kFirstReplica for the other buffers, all of them when the first replica changed any: a kernel
  // may write a buffer without bumping its version (batch norm's running statistics), but then
  // some buffer beside it (num_batches_tracked) does change version.
  auto master_buffers = state_->master->buffers();
  auto first_buffers = state_->sync->replicas()[which[0]]->buffers();
  bool changed = false;
  for (size_t i = 0; i < first_buffers.size(); ++i)
    changed = changed || first_buffers[i]._version() != state_->buffer_versions[which[0]][i];
  for (size_t i = 0; changed && i < master_buffers.size(); ++i)
    if (std::find(merged.begin(), merged.end(), master_buffers[i].unsafe_impl()) == merged.end())
      master_buffers[i].copy_(first_buffers[i]);
}

void DataParallelCore::replica_ended(size_t r, bool threw) {
  for (auto& sync : state_->sync_bn) sync->end(r, threw);
}

void DataParallelCore::backward_replica(size_t r, const Tensor& loss, double weight) {
  check_loss(loss);
  std::vector<Tensor> leaves = state_->sync->gradient_leaves(r);
  if (leaves.empty()) return;  // every parameter frozen
  check_graph_stays_in_replica(loss, leaves);
  // The backward runs outside any autocast region, as PyTorch recommends (its nodes compute in the
  // dtypes of their forward ops anyway).
  autocast::StateGuard no_autocast(autocast::State{});
  state_->replica_grads[r] = autograd::grad({loss}, leaves, {full_like(loss, weight)}, /*retain_graph=*/false,
                                            /*create_graph=*/false, /*allow_unused=*/true);
}

void DataParallelCore::accumulate_gradients(const std::vector<size_t>& which) {
  std::vector<std::vector<Tensor>> grads;
  for (size_t r : which) grads.push_back(std::move(state_->replica_grads[r]));
  state_->sync->accumulate(which, std::move(grads));
}

const std::vector<Device>& DataParallelCore::devices() const { return state_->devices; }
const DataParallelOptions& DataParallelCore::options() const { return state_->options; }
Device DataParallelCore::output_device() const {
  return state_->options.output_device().value_or(state_->devices[0]);
}
const SyncStats& DataParallelCore::stats() const { return state_->sync ? state_->sync->stats() : state_->empty; }

}  // namespace cohort::parallel::detail
