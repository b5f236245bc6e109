// Reducer: averages parameter gradients across ranks in buckets while backward still runs; the
// type-independent core of DistributedDataParallel (ddp.h). See Note [Gradient buckets] in reducer.cpp.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "cohort/distributed/process_group.h"
#include "cohort/nn/module.h"

namespace cohort::distributed {

// How a bucket's gradients travel: PyTorch's built-in DDP communication hooks
// (torch.distributed.algorithms.ddp_comm_hooks.default_hooks), chosen by DistributedDataParallelOptions::
// comm_hook (PyTorch: ddp.register_comm_hook(None, bf16_compress_hook)).
//  - kAllReduce (the default): the gradients' own dtype, summed, then divided by world_size.
//  - kBF16Compress / kFP16Compress (bf16_compress_hook / fp16_compress_hook): each float32 or float64
//    bucket is divided by world_size, rounded to bfloat16 (float16), all-reduced in that type (half
//    the bytes of float32; each pairwise sum is done in float32 and rounded once), and written back
//    in the gradients' dtype. A gradient then carries bfloat16's 8 significant bits: each rank's value
//    is rounded once and each of the n - 1 pairwise sums once, so the mean is off by at most
//    n * 2^-8 times the mean over ranks of |gradient| (measured on 2 ranks: 0.007, the bound 0.0078).
//    float16 keeps 11 bits but overflows past 65504 and flushes below 2^-24. The "used" flags and
//    reduce_with_gradients' values ride in the same op in the bucket's dtype, so they stay exact.
//    Half the bytes: on the MLP of tests/distributed, 71710 instead of 143396 per backward.
enum class CommHook { kAllReduce, kBF16Compress, kFP16Compress };
std::ostream& operator<<(std::ostream& os, CommHook hook);

struct DistributedDataParallelOptions {
  // A bucket closes once its gradients reach this size (the first one at min(1 MB, this), so that the
  // first reduction starts early); buckets follow the reverse of the parameters' registration order.
  DistributedDataParallelOptions& bucket_cap_mb(double mb) { bucket_cap_mb_ = mb; return *this; }
  // Allow parameters that get no gradient in an iteration (on some ranks or all): they count as zero
  // on those ranks, and one that no rank used keeps its .grad() untouched. Off: such a parameter is an
  // error on every rank (naming it) after that backward.
  DistributedDataParallelOptions& find_unused_parameters(bool on) { find_unused_parameters_ = on; return *this; }
  // Copy rank 0's buffers (batch-norm statistics) to every rank before each training forward.
  DistributedDataParallelOptions& broadcast_buffers(bool on) { broadcast_buffers_ = on; return *this; }

  // The gradients' wire format (CommHook above); kAllReduce, the default, sends them unchanged.
  DistributedDataParallelOptions& comm_hook(CommHook hook) { comm_hook_ = hook; return *this; }

  double bucket_cap_mb() const { return bucket_cap_mb_; }
  CommHook comm_hook() const { return comm_hook_; }
  bool find_unused_parameters() const { return find_unused_parameters_; }
  bool broadcast_buffers() const { return broadcast_buffers_; }

 private:
  double bucket_cap_mb_ = 25;
  bool find_unused_parameters_ = false;
  bool broadcast_buffers_ = true;
  CommHook comm_hook_ = CommHook::kAllReduce;
};

// One bucket: the parameters whose gradients travel together, in launch order.
struct BucketInfo {
  std::vector<std::string> parameters;
  int64_t bytes = 0;            // the gradients' bytes in their own dtype
  DType comm_dtype = kFloat32;  // the dtype they are all-reduced in (bfloat16 with kBF16Compress)
  int64_t comm_bytes = 0;       // their bytes in that dtype
};

class Reducer {
 public:
  // Broadcasts rank 0's parameters and buffers (collective), builds the buckets and hooks every
  // parameter that requires grad.
  Reducer(std::shared_ptr<ProcessGroup> group, std::shared_ptr<nn::Module> module,
          DistributedDataParallelOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Around the module's forward: buffers broadcast (training, grad mode), and, when gradients are to
  // be synchronised, the next backward armed to reduce.
  void before_forward();
  void after_forward();

  // Off: backward leaves gradients local (no_sync); read at forward.
  void set_sync(bool on) { sync_ = on; }
  bool sync() const { return sync_; }

  // Values summed over the ranks together with the gradients of the next synced backward: they
  // ride in its last bucket's all-reduce, so they cost no collective of their own (a training loop's
  // per-step loss and accuracy sums). Every rank must pass the same number of values. After that
  // backward, reduced_values() holds the sums, to the precision of the gradients' dtype (float32
  // gradients: about 1e-7 relative; integer counts exact below 2^24). Throws when the module has no
  // parameter that requires grad, or while a backward is reducing.
  void reduce_with_gradients(const std::vector<double>& values);
  const std::vector<double>& reduced_values() const;

  const std::vector<BucketInfo>& buckets() const;
  const std::shared_ptr<ProcessGroup>& process_group() const { return group_; }
  const DistributedDataParallelOptions& options() const { return options_; }

  struct State;

 private:
  void mark_ready(size_t param);  // a parameter's post-accumulate-grad hook
  void launch_ready();
  void finalize();                // queued at the end of backward

  std::shared_ptr<ProcessGroup> group_;
  std::shared_ptr<nn::Module> module_;
  DistributedDataParallelOptions options_;
  bool sync_ = true;
  std::unique_ptr<State> state_;
};

}  // namespace cohort::distributed
