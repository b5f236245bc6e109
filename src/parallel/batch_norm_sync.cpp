// Batch-norm layers under DataParallel: merged running statistics and sync batch norm.
//
// Note [Replica buffers]
// Replicas update their own buffers (Note [Replica synchronisation]); after a training forward the
// module must hold what single-device training on the whole batch would. PyTorch keeps the first
// device's updates (BufferRule::kFirstReplica): its batch-norm running statistics then come from
// a part of the batch. The default, kExact, recomputes them for the whole batch. Each replica's
// batch-norm layer normalises through its training_forward, which records, per channel, the count
// c_r, mean m_r and sum of squared deviations M2_r of the input it normalised (float64: the
// statistics the kernel computes anyway, batch_norm_with_stats, so no extra pass over the input).
// Chan's merge gives the whole batch's
// mean m = sum c_r m_r / c and M2 = sum M2_r + c_r (m_r - m)^2, and the module's running statistics
// are updated once from their values before the call, as BatchNorm's forward does:
// running = (1 - f) running + f stat, with stat = m and M2 / (c - 1) (unbiased), f = momentum or
// 1 / num_batches_tracked, and num_batches_tracked + 1. Equal to one device up to float rounding.
// Running statistics that moved some other way (F::batch_norm called on the layer's buffers) fall
// back to the chunk-weighted mean of the replicas' running statistics: exact for running_mean,
// without the between-chunk term for running_var. Other buffers follow kFirstReplica. Evaluation
// changes no buffer.
//
// Note [Sync batch norm]
// With DataParallelOptions::sync_batch_norm, each replica's batch-norm layer normalises, in
// training, with the whole batch's statistics (its training_forward, so no chunk is normalised on
// its own: a one-sample chunk works as on one device). Each replica computes per-channel sums of x
// and x^2 (float64) and its count, waits for every replica in the call to post theirs (a rendezvous
// per layer and per call of the layer, so a layer used twice in one forward pairs calls in order),
// then sums them all on its own device with differentiable copies (to(device)), so backward carries
// every replica's share of the statistics' gradient to every other replica, as one device's batch
// norm would. Every replica updates its running statistics with the same whole-batch values, so
// the first replica's are the module's.
// No error waits for a timeout: DataParallel tells SyncBn when each replica's forward ends
// (SyncBn::end), and a replica waiting for one that ended without reaching the layer fails at once,
// saying whether that replica threw (its own error is listed beside) or returned without calling it.
// The 60 s bound remains for the one wait that cannot end by itself, a deadlock (Note [Device
// executor]: a replica's backward inside forward that needs the thread of a replica waiting here).
#include "batch_norm_sync.h"

#include <chrono>
#include <optional>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/reduction.h"

namespace cohort::parallel::detail {

namespace {

template <class Layer>
BnView view_of(Layer* b) {
  return {&b->options, &b->running_mean, &b->running_var, &b->num_batches_tracked, &b->weight, &b->bias,
          &b->training_forward, [b](const Tensor& x) { return b->forward_with_stats(x); }};
}

}  // namespace

BnView bn_view(nn::Module& m) {
  if (auto* b = dynamic_cast<nn::BatchNorm1dImpl*>(&m)) return view_of(b);
  if (auto* b = dynamic_cast<nn::BatchNorm2dImpl*>(&m)) return view_of(b);
  return {};
}


namespace {

// Posts replica r's sums for its next call of the layer, waits for every replica's, and returns them.
SyncBn::Round rendezvous(SyncBn& sync, size_t r, const Tensor& s1, const Tensor& s2, double n, Device device) {
  std::unique_lock<std::mutex> l(sync.m);
  const int64_t call = sync.calls[r]++;
  SyncBn::Round& round = sync.rounds[call];
  if (round.s1.empty()) {
    round.s1.resize(sync.calls.size());
    round.s2.resize(sync.calls.size());
    round.n.assign(sync.calls.size(), 0);
  }
  round.s1[r] = s1, round.s2[r] = s2, round.n[r] = n;
  ++round.arrived;
  sync.cv.notify_all();
  auto missing = [&]() -> std::optional<size_t> {
    for (size_t p : sync.participants)
      if (sync.ended[p] != SyncBn::Ended::kNo && sync.calls[p] <= call) return p;
    return std::nullopt;
  };
  const bool settled = sync.cv.wait_for(l, std::chrono::seconds(60),
                                        [&] { return round.arrived == sync.participants.size() || missing(); });
  COHORT_CHECK(settled, "DataParallel: sync batch norm: replica ", r, " on ", device, " waited 60 s at call ",
               call + 1, " of this layer for replicas that are still running; hint: a replica is waiting for this "
               "one's thread (autograd::grad or backward called inside forward, reaching tensors of ", device, ")");
  if (round.arrived < sync.participants.size()) {
    const size_t p = *missing();
    const std::string why =
        sync.ended[p] == SyncBn::Ended::kThrew
            ? std::string(" failed before reaching it (see its error)")
            : cohort::detail::str(" returned after calling it ", sync.calls[p], " time(s); hint: every replica must "
                                  "call its batch-norm layers equally often, since sync batch norm pairs their calls "
                                  "in order");
    throw Error(cohort::detail::str("DataParallel: sync batch norm: replica ", r, " on ", device, " reached call ",
                                    call + 1, " of this layer, but replica ", p, why));
  }
  return round;
}

Tensor sync_batch_norm(nn::Module& m, const Tensor& x, SyncBn& sync, size_t r) {
  std::vector<int64_t> dims{0}, shape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  shape[1] = x.size(1);
  Tensor x64 = x.to(kFloat64);
  SyncBn::Round all = rendezvous(sync, r, x64.sum(dims), (x64 * x64).sum(dims),
                                 static_cast<double>(x.size(1) ? x.numel() / x.size(1) : 0), x.device());
  Tensor t1, t2;
  double total = 0;
  for (size_t j = 0; j < all.s1.size(); ++j) {
    if (!all.s1[j].defined()) continue;
    Tensor a = all.s1[j].to(x.device()), b = all.s2[j].to(x.device());
    t1 = t1.defined() ? t1 + a : a;
    t2 = t2.defined() ? t2 + b : b;
    total += all.n[j];
  }
  COHORT_CHECK(total > 1, "batch_norm: expected more than 1 value per channel when training, got ", total,
               " in the whole batch (sync batch norm over ", all.arrived, " replicas; this one's input has shape ",
               x.sizes(), ")");
  Tensor mu = t1 / total, var = t2 / total - mu * mu;
  BnView v = bn_view(m);
  if (v.options->track_running_stats() && v.running_mean->defined()) {
    NoGradGuard no_grad;
    v.num_batches_tracked->add_(1);
    const double f = nn::running_stats_weight(*v.options, v.num_batches_tracked->item<int64_t>());
    v.running_mean->copy_(v.running_mean->to(kFloat64) * (1 - f) + mu * f);
    v.running_var->copy_(v.running_var->to(kFloat64) * (1 - f) + var * (total / (total - 1) * f));
  }
  Tensor inv = (var + v.options->eps()).rsqrt().to(x.dtype()).view(shape);
  Tensor y = (x - mu.to(x.dtype()).view(shape)) * inv;
  if (v.weight->defined()) y = y * v.weight->view(shape) + v.bias->view(shape);
  return y;
}

}  // namespace

void install_sync_batch_norm(nn::Module& layer, std::shared_ptr<SyncBn> sync, size_t r) {
  *bn_view(layer).training_forward = [&layer, sync, r](const Tensor& x) { return sync_batch_norm(layer, x, *sync, r); };
}

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
    const double f = nn::running_stats_weight(*m.options, old_count + 1);
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

void record_batch_stats(nn::Module& replica_layer, std::shared_ptr<BnStats> stats) {
  *bn_view(replica_layer).training_forward = [&replica_layer, stats](const Tensor& x) {
    const BnView v = bn_view(replica_layer);
    auto [y, mean, var] = v.forward_with_stats(x);
    if (v.options->track_running_stats()) {
      stats->count = static_cast<double>(x.numel() / x.size(1));
      stats->mean = mean;
      stats->m2 = var * stats->count;
      stats->filled = true;
    }
    return y;
  };
}

void SyncBn::reset(size_t replicas, const std::vector<size_t>& in_call) {
  std::lock_guard<std::mutex> l(m);
  participants = in_call;
  calls.assign(replicas, 0);
  ended.assign(replicas, Ended::kNo);
  rounds.clear();
}

void SyncBn::end(size_t r, bool threw) {
  std::lock_guard<std::mutex> l(m);
  ended[r] = threw ? Ended::kThrew : Ended::kReturned;
  cv.notify_all();
}

}  // namespace cohort::parallel::detail
