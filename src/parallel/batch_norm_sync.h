// Batch-norm layers under DataParallel: the exact merge of the replicas' running statistics
// (Note [Replica buffers]) and the in-process sync batch norm (Note [Sync batch norm]).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/module.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel::detail {

// What a replica's batch-norm layer records of the input it normalised (float64).
struct BnStats {
  bool filled = false;
  double count = 0;
  Tensor mean, m2;  // [C]
};

// A batch-norm layer's fields, whichever of the two classes it is; all null for other modules.
struct BnView {
  nn::BatchNormOptions* options = nullptr;
  Tensor *running_mean = nullptr, *running_var = nullptr, *num_batches_tracked = nullptr;
  Tensor *weight = nullptr, *bias = nullptr;
  std::function<Tensor(const Tensor&)>* training_forward = nullptr;
  std::function<std::tuple<Tensor, Tensor, Tensor>(const Tensor&)> forward_with_stats;
};
BnView bn_view(nn::Module& m);

// One batch-norm layer of the module and its copies in the replicas.
struct BnLayer {
  std::shared_ptr<nn::Module> master;
  std::vector<std::shared_ptr<nn::Module>> replicas;  // per replica
  std::vector<std::shared_ptr<BnStats>> stats;        // per replica, written by its layer
  std::vector<uint32_t> versions;  // replicas' num_batches_tracked, before the call (the kernel's
                                   // running-statistics update does not bump their versions)
};

// Makes a replica's batch-norm layer fill `stats` whenever it normalises in training.
void record_batch_stats(nn::Module& replica_layer, std::shared_ptr<BnStats> stats);

// Note [Replica buffers]: the exact update of one batch-norm layer; false when it did not run.
bool merge_batch_norm(BnLayer& layer, const std::vector<size_t>& which, const Plan& plan);

// Note [Sync batch norm]: the rendezvous of one layer's replicas.
struct SyncBn {
  struct Round {
    std::vector<Tensor> s1, s2;  // per replica: sums of x and x^2 over all but the channel dim
    std::vector<double> n;       // per replica: values per channel
    size_t arrived = 0;
  };
  enum class Ended { kNo, kReturned, kThrew };
  std::mutex m;
  std::condition_variable cv;
  std::vector<size_t> participants;  // the replicas in this call
  std::vector<int64_t> calls;        // per replica: calls of the layer in this forward
  std::vector<Ended> ended;          // per replica: whether its forward has ended, and how
  std::map<int64_t, Round> rounds;
  void reset(size_t replicas, const std::vector<size_t>& in_call);
  void end(size_t r, bool threw);
};

// Makes replica r's copy `layer` of a batch-norm layer normalise, in training, with the statistics
// of every replica's input, and update its running statistics with them.
void install_sync_batch_norm(nn::Module& layer, std::shared_ptr<SyncBn> sync, size_t r);

}  // namespace cohort::parallel::detail
