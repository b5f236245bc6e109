// The processes of a training run: one, unless started with WORLD_SIZE > 1 (by `cohort launch` or
// torchrun), and then a Gloo process group over which the trainer averages gradients and sums its
// metrics (DistributedDataParallel) and lets rank 0 alone write files.
#pragma once

#include <memory>
#include <vector>

#include "cohort/distributed/process_group.h"

namespace cohort::app {

class Ranks {
 public:
  // Joins the run's process group when the environment says there are several processes
  // (distributed::init_process_group reads RANK, WORLD_SIZE, MASTER_ADDR/PORT or COHORT_STORE), with
  // $COHORT_TIMEOUT seconds (default 300; fractions allowed) for the rendezvous and every collective.
  static Ranks from_environment();

  int rank() const { return group_ ? group_->rank() : 0; }
  int world_size() const { return group_ ? group_->world_size() : 1; }
  bool leader() const { return rank() == 0; }
  const std::shared_ptr<distributed::ProcessGroup>& group() const { return group_; }

  // Returns when every process has called it.
  void barrier() const;

 private:
  std::shared_ptr<distributed::ProcessGroup> group_;
};

// Whether this process is rank 0 (or the only one), from $RANK, before any process group is joined.
bool leader_by_environment();

// Which attempt of the job this process belongs to under `cohort launch --max-restarts`:
// $COHORT_RESTART_COUNT, 0 for the first (and without the launcher), 1 after the first restart, ...
int restart_count();

// The intra-op threads of one process: --threads when given, else $OMP_NUM_THREADS when set (cohort
// launch divides the cores among the local processes), else the cores divided by the processes of
// this machine ($LOCAL_WORLD_SIZE), at least 1. Throws when $OMP_NUM_THREADS is not a count from 1
// to kMaxThreads (1024).
int threads_per_process(int requested);

}  // namespace cohort::app
