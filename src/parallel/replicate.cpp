// replicate and ReplicaSync: replicas built once, then kept equal to the master at little cost.
//
// Note [Replica synchronisation]
// PyTorch's DataParallel re-replicates the module on every forward: a broadcast of every parameter
// and buffer and a shallow copy of every submodule, each step. cohort builds the replicas once
// (Module::clone(device)) and, before each forward, only does what changed:
//  - Values. Each replica tensor remembers (master storage, master version, own storage, own
//    version) as of its last copy. Storage version counters count in-place writes (optimizer steps,
//    load_state_dict, batch-norm running statistics), so equal quadruples mean equal values and the
//    copy is skipped; anything else copies (a dtype or shape change re-points the replica tensor).
//    Only buffers are copied this way (DataParallel synchronizes each replica off the master's
//    device on that device's thread, at the start of its forward job).
//  - Parameters are never copied: replicas only read them, and cohort's CPU devices share one
//    address space, so the replica on the master's device shares the master's storage and every
//    other replica reads it through an alias on its own device (Note [Storage aliases] in
//    src/core/storage.cpp). A master repointed (load_state_dict of another shape, a dtype change)
//    gets a new alias. A replica's buffers are its own, so a replica's batch-norm update never lands
//    in the master by accident (DataParallel merges them on purpose: Note [Replica buffers] in
//    batch_norm_sync.cpp).
//  - Gradients. Under grad mode each replica parameter gets, every forward, a fresh grad_fn
//    "BroadcastBackward" whose only input is its master parameter and whose backward moves the
//    gradient to the master's device: the replica parameter becomes a differentiable copy of the
//    master (the same as replica = master.to(device) through autograd, without copying the data
//    again). One loss.backward() on the gathered output then reaches every replica's graph, each
//    runs on its device's executor thread in parallel (Note [Backward engine]), and the engine sums
//    the replicas' contributions into the master's AccumulateGrad. The gradients arrive as aliases
//    too: the sum reads each where its replica wrote it. Without grad mode (evaluation)
//    the replica parameters are detached, so no graph is kept. DataParallel::forward_backward
//    synchronizes with ReplicaGradients::kOwn instead: each replica parameter is a leaf of its own,
//    each replica's backward ends there on its own thread, and accumulate() then sums the replicas'
//    gradients into the masters with one backward pass over the masters (aliases again, no copies).
//  - Mode. Each replica module follows its master module's train/eval flag, module by module.
//  - Hooks. A forward hook (or pre-hook) on a submodule runs in every replica, once per replica
//    and on the replica's thread, with the replica's module as its argument (PyTorch's rule): each
//    replica submodule gets its master's hooks, again whenever the master's set changes. Hooks on
//    the wrapped module itself are not copied: they run once, around the whole data-parallel call.
//    A hook that records into shared state must lock it; the replicas run at the same time.
#include "cohort/parallel/replicate.h"

#include <mutex>
#include <string>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/ops/copy.h"

namespace cohort::parallel {

namespace detail {

std::shared_ptr<nn::Module> clone_to(const nn::Module& module, Device device) {
  check_device(device, "replicate");
  // Cloneable::clone runs reset() with the initialisers' draws skipped (SkipRandomInitGuard), but a
  // reset() may draw by itself: restore the stream, so that replicating never changes what is drawn next.
  const std::string rng = default_generator().get_state();
  auto copy = module.clone(device);
  default_generator().set_state(rng);
  return copy;
}

void throw_wrong_type(const nn::Module& module, Device device) {
  throw Error(::cohort::detail::str("replicate: the clone of ", module.name(), " on ", device,
                                    " is not of the module's type; hint: its clone() must return a copy of its own "
                                    "class (derive it from nn::Cloneable<", module.name(), ">)"));
}

}  // namespace detail

namespace {

struct Seen {
  const StorageImpl* master = nullptr;
  uint32_t master_version = 0;
  const StorageImpl* replica = nullptr;
  uint32_t replica_version = 0;
};

struct TensorPair {
  std::string name;
  Tensor master, replica;
  Seen seen;
  bool is_parameter;
  bool own_leaf = false;  // a leaf after the last synchronize(kOwn): gradient_leaves() lists it
};

Seen seen_now(const Tensor& m, const Tensor& p) {
  return {m.unsafe_impl()->storage().get(), m._version(), p.unsafe_impl()->storage().get(), p._version()};
}

bool same(const Seen& a, const Seen& b) {
  return a.master == b.master && a.master_version == b.master_version && a.replica == b.replica &&
         a.replica_version == b.replica_version;
}

// Whether replica tensor p reads master m's memory where it lies: m's own storage on m's device, an
// alias of it on another (Note [Storage aliases] in src/core/storage.cpp), with m's layout.
bool reads_in_place(const Tensor& p, const Tensor& m) {
  const Storage& ps = p.unsafe_impl()->storage();
  const Storage& ms = m.unsafe_impl()->storage();
  return (ps == ms || (ps->alias_base() && ps->alias_base() == ms)) && p.sizes() == m.sizes() &&
         p.strides() == m.strides() && p.storage_offset() == m.storage_offset() && p.dtype() == m.dtype();
}

void repoint(const Tensor& p, const Tensor& source) {
  TensorImpl* s = source.unsafe_impl();
  p.unsafe_impl()->set_storage(s->storage(), s->dtype(), s->sizes().vec(), s->strides().vec(), s->offset());
}

}  // namespace

// A submodule of the master and its copy in one replica, with the master's forward hooks that the
// copy carries: the master's handles they came from and the copy's handles for them.
struct ModulePair {
  std::shared_ptr<nn::Module> master, replica;
  std::vector<unsigned> hooks_from, hooks_copied;
};

// Gives `p.replica` the forward hooks `p.master` has now, replacing the ones copied before (and
// leaving the replica's own hooks, such as sync batch norm's, alone). Nothing happens when the
// master's hooks have not changed.
void copy_hooks(ModulePair& p) {
  std::vector<unsigned> now;
  for (const auto& [id, hook] : p.master->forward_pre_hooks()) now.push_back(id);
  for (const auto& [id, hook] : p.master->forward_hooks()) now.push_back(id);
  if (now == p.hooks_from) return;
  for (unsigned h : p.hooks_copied) p.replica->remove_hook(h);
  p.hooks_copied.clear();
  for (const auto& [id, hook] : p.master->forward_pre_hooks())
    p.hooks_copied.push_back(p.replica->register_forward_pre_hook(hook));
  for (const auto& [id, hook] : p.master->forward_hooks())
    p.hooks_copied.push_back(p.replica->register_forward_hook(hook));
  p.hooks_from = std::move(now);
}

struct ReplicaSync::State {
  std::shared_ptr<nn::Module> master;
  std::vector<std::shared_ptr<nn::Module>> replicas;
  std::vector<std::vector<TensorPair>> tensors;  // per replica
  std::vector<std::vector<ModulePair>> modules;   // per replica
  std::mutex stats_mutex;  // synchronize may run for different replicas on their own threads
  SyncStats stats;
};

ReplicaSync::ReplicaSync(std::shared_ptr<nn::Module> master, std::vector<std::shared_ptr<nn::Module>> replicas)
    : state_(std::make_unique<State>()) {
  state_->master = master;
  auto master_params = master->named_parameters(), master_buffers = master->named_buffers();
  auto master_modules = master->modules();
  for (auto& replica : replicas) {
    auto params = replica->named_parameters(), buffers = replica->named_buffers();
    auto modules = replica->modules();
    COHORT_CHECK(params.keys() == master_params.keys() && buffers.keys() == master_buffers.keys() &&
                     modules.size() == master_modules.size(),
                 "ReplicaSync: a replica of ", master->name(), " does not have the master's parameters, buffers and "
                 "submodules; hint: build replicas with parallel::replicate(master, devices)");
    std::vector<TensorPair> pairs;
    for (size_t i = 0; i < params.size(); ++i)
      pairs.push_back({master_params[i].key(), master_params[i].value(), params[i].value(), {}, true});
    for (size_t i = 0; i < buffers.size(); ++i)
      pairs.push_back({master_buffers[i].key(), master_buffers[i].value(), buffers[i].value(), {}, false});
    state_->tensors.push_back(std::move(pairs));
    std::vector<ModulePair> mods;
    for (size_t i = 0; i < modules.size(); ++i) mods.push_back({master_modules[i], modules[i], {}, {}});
    state_->modules.push_back(std::move(mods));
  }
  state_->replicas = std::move(replicas);
}

ReplicaSync::~ReplicaSync() = default;
ReplicaSync::ReplicaSync(ReplicaSync&&) noexcept = default;
ReplicaSync& ReplicaSync::operator=(ReplicaSync&&) noexcept = default;

void ReplicaSync::synchronize(const std::vector<size_t>& which, ReplicaGradients gradients) {
  const bool grad_mode = GradMode::is_enabled();
  SyncStats copied;
  for (size_t r : which) {
    COHORT_CHECK(r < state_->replicas.size(), "ReplicaSync::synchronize: no replica ", r, " (there are ",
                 state_->replicas.size(), ")");
    for (ModulePair& pair : state_->modules[r]) {
      if (pair.replica->is_training() != pair.master->is_training()) pair.replica->train(pair.master->is_training());
      // The wrapped module's own hooks run once around the whole data-parallel call; a submodule's
      // run in every replica (Note [Replica synchronisation]).
      if (pair.master != state_->master) copy_hooks(pair);
    }
    for (TensorPair& t : state_->tensors[r]) {
      const Tensor &m = t.master, &p = t.replica;
      p.detach_();  // drop the previous step's link before writing
      {
        NoGradGuard no_grad;
        if (t.is_parameter) {
          if (!reads_in_place(p, m)) repoint(p, alias_on(m, p.device()));
          t.seen = seen_now(m, p);
        } else if (!same(t.seen, seen_now(m, p)) || p.sizes() != m.sizes() || p.dtype() != m.dtype()) {
          if (p.sizes() != m.sizes() || p.dtype() != m.dtype()) {
            repoint(p, m.to(p.device(), /*non_blocking=*/false, /*copy=*/true));
          } else {
            p.copy_(m);
          }
          copied.buffers_copied += 1;
          copied.bytes_copied += static_cast<int64_t>(p.nbytes());
          t.seen = seen_now(m, p);
        }
      }
      // Parameters, and buffers that require grad (a learned scale kept out of the optimizer, say),
      // send their replicas' gradients to the master.
      t.own_leaf = false;
      if (!grad_mode || !(t.is_parameter || m.requires_grad())) continue;
      if (gradients == ReplicaGradients::kThroughMaster) {
        broadcast_link_(p, m);
      } else if (m.requires_grad()) {
        p.set_requires_grad(true);
        t.own_leaf = true;
      }
    }
  }
  std::lock_guard<std::mutex> l(state_->stats_mutex);
  state_->stats.buffers_copied += copied.buffers_copied;
  state_->stats.bytes_copied += copied.bytes_copied;
}

void ReplicaSync::check_parameters_unwritten(const std::vector<size_t>& which, const char* op) const {
  for (size_t r : which)
    for (const TensorPair& t : state_->tensors[r]) {
      if (!t.is_parameter || t.master._version() == t.seen.master_version) continue;
      throw Error(::cohort::detail::str(
          op, ": the forward pass wrote parameter '", t.name, "' in place (version ", t.seen.master_version, " -> ",
          t.master._version(), "); the replicas read the module's parameters where they lie, so writes from "
          "several replicas would race; hint: keep a value that forward updates in a buffer (register_buffer): "
          "each replica has its own, and DataParallel keeps the first replica's"));
    }
}

std::vector<Tensor> ReplicaSync::gradient_leaves(size_t r) const {
  std::vector<Tensor> out;
  for (const TensorPair& t : state_->tensors.at(r))
    if (t.own_leaf) out.push_back(t.replica);
  return out;
}

void ReplicaSync::accumulate(const std::vector<size_t>& which, std::vector<std::vector<Tensor>> grads) {
  COHORT_CHECK(grads.size() == which.size(), "ReplicaSync::accumulate: expected the gradients of ", which.size(),
               " replicas, got ", grads.size());
  std::vector<Tensor> masters, sums;
  for (size_t k = 0; k < which.size(); ++k) {
    size_t i = 0;
    for (const TensorPair& t : state_->tensors.at(which[k])) {
      if (!t.own_leaf) continue;
      COHORT_CHECK(i < grads[k].size(), "ReplicaSync::accumulate: replica ", which[k], " has more gradient leaves than "
                   "the ", grads[k].size(), " gradients given");
      Tensor g = std::move(grads[k][i++]);
      if (!g.defined()) continue;  // the replica's loss did not use this tensor
      masters.push_back(t.master);
      sums.push_back(g.device() == t.master.device() ? g : alias_on(g, t.master.device()));
    }
  }
  // The engine sums the gradients that arrive for one master and runs its AccumulateGrad once.
  if (!masters.empty()) autograd::backward(masters, sums);
}

const SyncStats& ReplicaSync::stats() const { return state_->stats; }
const std::vector<std::shared_ptr<nn::Module>>& ReplicaSync::replicas() const { return state_->replicas; }

}  // namespace cohort::parallel
