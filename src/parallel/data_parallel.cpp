// DataParallel's type-independent part: device checks, replica bookkeeping, buffer merging.
//
// Note [Replica buffers]
// Replicas update their own buffers (Note [Replica synchronisation]); after a training forward the
// module must hold what single-device training on the whole batch would. PyTorch keeps the first
// device's updates (BufferRule::kFirstReplica): its batch-norm running statistics then come from
// a part of the batch. The default, kExact, recomputes them for the whole batch. A pre-hook on each
// replica's batch-norm layer records, per channel, the count c_r, mean m_r and sum of squared
// deviations M2_r of the input it normalised (in float64). Chan's merge gives the whole batch's
// mean m = sum c_r m_r / c and M2 = sum M2_r + c_r (m_r - m)^2, and the module's running statistics
// are updated once from their values before the call, as BatchNorm's forward does:
// running = (1 - f) running + f stat, with stat = m and M2 / (c - 1) (unbiased), f = momentum or
// 1 / num_batches_tracked, and num_batches_tracked + 1. Equal to one device up to float rounding.
// The hook runs when the layer is called through its holder (bn(x), Sequential: every built-in
// model does); a layer called as bn->forward(x) falls back to the chunk-weighted mean of the
// replicas' running statistics: exact for running_mean, without the between-chunk term for
// running_var. Other buffers follow kFirstReplica. Evaluation changes no buffer.
//
// Imbalance: before a forward on several replicas, until it has warned once, the wrapper compares
// the devices in use (describe_imbalance, Note [Device properties]); devices whose core shares
// differ by more than 25% get one warning on stderr per wrapper, naming each device and its cores,
// since every step then waits for the slowest replica.
//
// Note [Sync batch norm]
// With DataParallelOptions::sync_batch_norm, a forward hook on each replica's batch-norm layer
// replaces, in training, the chunk-normalised output by x normalised with the whole batch's
// statistics: each replica computes per-channel sums of x and x^2 (float64) and its count, waits
// for every replica in the call to post theirs (a rendezvous per layer and per call of the layer,
// so a layer used twice in one forward pairs calls in order), then sums them all on its own device
// with differentiable copies (to(device)), so backward carries every replica's share of the
// statistics' gradient to every other replica, as one device's batch norm would. The rendezvous
// waits at most 60 s: a replica that failed before reaching the layer makes the others fail too.
#include "cohort/parallel/data_parallel.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"

namespace cohort::parallel::detail {

namespace {

struct BnStats {
  bool filled = false;
  double count = 0;
  Tensor mean, m2;  // [C] float64
};

// A batch-norm layer's fields, whichever of the two classes it is.
struct BnView {
  nn::BatchNormOptions* options = nullptr;
  Tensor *running_mean = nullptr, *running_var = nullptr, *num_batches_tracked = nullptr;
  Tensor *weight = nullptr, *bias = nullptr;
};
BnView bn_view(nn::Module& m) {
  if (auto* b = dynamic_cast<nn::BatchNorm1dImpl*>(&m))
    return {&b->options, &b->running_mean, &b->running_var, &b->num_batches_tracked, &b->weight, &b->bias};
  if (auto* b = dynamic_cast<nn::BatchNorm2dImpl*>(&m))
    return {&b->options, &b->running_mean, &b->running_var, &b->num_batches_tracked, &b->weight, &b->bias};
  return {};
}

// Note [Sync batch norm]: the rendezvous of one layer's replicas.
struct SyncBn {
  struct Round {
    std::vector<Tensor> s1, s2;  // per replica: sums of x and x^2 over all but the channel dim
    std::vector<double> n;       // per replica: values per channel
    size_t arrived = 0;
  };
  std::mutex m;
  std::condition_variable cv;
  size_t participants = 0;       // replicas in this call
  std::vector<int64_t> calls;    // per replica: calls of the layer in this forward
  std::map<int64_t, Round> rounds;
  void reset(size_t replicas, size_t in_call) {
    std::lock_guard<std::mutex> l(m);
    participants = in_call;
    calls.assign(replicas, 0);
    rounds.clear();
  }
};

Tensor sync_batch_norm(nn::Module& m, const Tensor& x, const Tensor& local, SyncBn& sync, size_t r) {
  if (!m.is_training() || x.dim() < 2) return local;
  std::vector<int64_t> dims{0}, shape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  shape[1] = x.size(1);
  Tensor x64 = x.to(kFloat64);
  Tensor s1 = x64.sum(dims), s2 = (x64 * x64).sum(dims);
  std::vector<Tensor> all1, all2;
  std::vector<double> counts;
  {
    std::unique_lock<std::mutex> l(sync.m);
    if (sync.participants <= 1) return local;
    SyncBn::Round& round = sync.rounds[sync.calls[r]++];
    if (round.s1.empty()) {
      round.s1.resize(sync.calls.size());
      round.s2.resize(sync.calls.size());
      round.n.assign(sync.calls.size(), 0);
    }
    round.s1[r] = s1;
    round.s2[r] = s2;
    round.n[r] = static_cast<double>(x.numel() / x.size(1));
    ++round.arrived;
    sync.cv.notify_all();
    bool all = sync.cv.wait_for(l, std::chrono::seconds(60), [&] { return round.arrived == sync.participants; });
    COHORT_CHECK(all, "DataParallel: sync batch norm: replica ", r, " on ", x.device(), " waited 60 s for the other ",
                 "replicas, but only ", round.arrived, " of ", sync.participants, " reached this layer; hint: "
                 "another replica failed before it (see its error), or the replicas call their layers differently");
    all1 = round.s1, all2 = round.s2, counts = round.n;
  }
  Tensor t1, t2;
  double total = 0;
  for (size_t j = 0; j < all1.size(); ++j) {
    if (!all1[j].defined()) continue;
    Tensor a = all1[j].to(x.device()), b = all2[j].to(x.device());
    t1 = t1.defined() ? t1 + a : a;
    t2 = t2.defined() ? t2 + b : b;
    total += counts[j];
  }
  Tensor mu = t1 / total, var = t2 / total - mu * mu;
  BnView v = bn_view(m);
  Tensor inv = (var + v.options->eps()).rsqrt().to(x.dtype()).view(shape);
  Tensor y = (x - mu.to(x.dtype()).view(shape)) * inv;
  if (v.weight->defined()) y = y * v.weight->view(shape) + v.bias->view(shape);
  return y;
}

struct BnLayer {
  std::shared_ptr<nn::Module> master;
  std::vector<std::shared_ptr<nn::Module>> replicas;             // per replica
  std::vector<std::shared_ptr<BnStats>> stats;                    // per replica, written by its hook
  std::vector<uint32_t> versions;  // replicas' num_batches_tracked, before the call (the kernel's
                                   // running-statistics update does not bump their versions)
};

// Note [Replica buffers]: the exact update of one batch-norm layer; false when it did not run.
bool merge_batch_norm(BnLayer& layer, const std::vector<size_t>& which, const Plan& plan) {
  BnView m = bn_view(*layer.master);
  if (!layer.master->is_training() || !m.options->track_running_stats() || !m.running_mean->defined()) return false;
  bool exact = true, ran = false;
  for (size_t r : which) {
    exact = exact && layer.stats[r]->filled;
    ran = ran || layer.stats[r]->filled || bn_view(*layer.replicas[r]).num_batches_tracked->_version() != layer.versions[r];
  }
  if (!ran) return false;
  const Device device = m.running_mean->device();
  Tensor old_mean = m.running_mean->to(kFloat64, false, true), old_var = m.running_var->to(kFloat64, false, true);
  int64_t old_count = m.num_batches_tracked->defined() ? m.num_batches_tracked->item<int64_t>() : 0;
  Tensor new_mean = zeros_like(old_mean), new_var = zeros_like(old_var);
  if (exact) {
    double c = 0;
    for (size_t r : which) {
      c += layer.stats[r]->count;
      new_mean = new_mean + layer.stats[r]->mean.to(device) * layer.stats[r]->count;
    }
    Tensor mu = new_mean / c, m2 = zeros_like(old_mean);
    for (size_t r : which) {
      const BnStats& s = *layer.stats[r];
      Tensor d = s.mean.to(device) - mu;
      m2 = m2 + s.m2.to(device) + d * d * s.count;
    }
    double f = m.options->momentum() ? *m.options->momentum() : 1.0 / static_cast<double>(old_count + 1);
    new_mean = old_mean * (1 - f) + mu * f;
    new_var = old_var * (1 - f) + m2 / std::max(c - 1, 1.0) * f;
  } else {
    double batch = 0;
    for (int64_t c : plan.chunk_sizes) batch += static_cast<double>(c);
    for (size_t k = 0; k < which.size(); ++k) {
      BnView v = bn_view(*layer.replicas[which[k]]);
      double w = static_cast<double>(plan.chunk_sizes[k]) / batch;
      new_mean = new_mean + v.running_mean->to(device).to(kFloat64) * w;
      new_var = new_var + v.running_var->to(device).to(kFloat64) * w;
    }
  }
  m.running_mean->copy_(new_mean);
  m.running_var->copy_(new_var);
  if (m.num_batches_tracked->defined()) m.num_batches_tracked->fill_(old_count + 1);
  return true;
}

}  // namespace

struct DataParallelCore::State {
  std::shared_ptr<nn::Module> master;
  std::vector<Device> devices;
  DataParallelOptions options;
  std::optional<ReplicaSync> sync;
  std::vector<BnLayer> bn_layers;
  std::vector<std::shared_ptr<SyncBn>> sync_bn;  // one per batch-norm layer, with sync_batch_norm
  std::vector<std::vector<uint32_t>> buffer_versions;  // per replica, as of before_forward
  SyncStats empty;
  bool warned_imbalance = false;
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
    BnLayer layer{master_modules[k], {}, {}};
    for (auto& mods : replica_modules) {
      auto stats = std::make_shared<BnStats>();
      mods[k]->register_forward_pre_hook([stats](nn::Module& m, const std::vector<Tensor>& in) {
        BnView v = bn_view(m);
        if (!m.is_training() || !v.options->track_running_stats() || in.empty() || in[0].dim() < 2) return;
        NoGradGuard no_grad;
        Tensor x = in[0].detach().to(kFloat64);
        std::vector<int64_t> dims{0};
        for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
        stats->count = static_cast<double>(x.numel() / x.size(1));
        stats->mean = mean(x, dims);
        stats->m2 = var(x, dims, /*unbiased=*/false) * stats->count;
        stats->filled = true;
      });
      layer.replicas.push_back(mods[k]);
      layer.stats.push_back(stats);
    }
    if (state_->options.sync_batch_norm()) {
      auto sync = std::make_shared<SyncBn>();
      for (size_t r = 0; r < replica_modules.size(); ++r)
        replica_modules[r][k]->register_forward_hook(
            [sync, r](nn::Module& m, const std::vector<Tensor>& in, const Tensor& out) {
              return in.empty() ? out : sync_batch_norm(m, in[0], out, *sync, r);
            });
      state_->sync_bn.push_back(sync);
    }
    state_->bn_layers.push_back(std::move(layer));
  }
  state_->sync.emplace(state_->master, std::move(replicas));
}

void DataParallelCore::before_forward(const std::vector<size_t>& which) {
  if (!state_->warned_imbalance && which.size() > 1) {
    std::vector<Device> used;
    for (size_t r : which) used.push_back(state_->devices[r]);
    std::string imbalance = describe_imbalance(used);
    if (!imbalance.empty()) {
      state_->warned_imbalance = true;
      std::cerr << "cohort: warning: DataParallel: " << imbalance << "\n";
    }
  }
  state_->sync->synchronize(which);
  for (auto& sync : state_->sync_bn) sync->reset(state_->sync->replicas().size(), which.size());
  for (auto& layer : state_->bn_layers) {
    for (auto& s : layer.stats) s->filled = false;
    layer.versions.clear();
    for (auto& r : layer.replicas) {
      BnView v = bn_view(*r);
      layer.versions.push_back(v.num_batches_tracked->defined() ? v.num_batches_tracked->_version() : 0);
    }
  }
  state_->buffer_versions.assign(state_->sync->replicas().size(), {});
  for (size_t r : which)
    for (const Tensor& b : state_->sync->replicas()[r]->buffers()) state_->buffer_versions[r].push_back(b._version());
}

void DataParallelCore::after_forward(const std::vector<size_t>& which, const Plan& plan) {
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

const std::vector<Device>& DataParallelCore::devices() const { return state_->devices; }
const DataParallelOptions& DataParallelCore::options() const { return state_->options; }
Device DataParallelCore::output_device() const {
  return state_->options.output_device().value_or(state_->devices[0]);
}
const SyncStats& DataParallelCore::stats() const { return state_->sync ? state_->sync->stats() : state_->empty; }

}  // namespace cohort::parallel::detail
