// ProcessGroup: collectives over the tensors of world_size processes (ranks 0..world_size-1).
//
//   auto pg = distributed::init_process_group();          // Gloo over TCP, from RANK, WORLD_SIZE, ... (init.h)
//   std::vector<Tensor> ts{grad};
//   pg->all_reduce(ts, distributed::ReduceOp::kAvg);       // every rank now holds the mean
//   auto work = pg->all_reduce_async(ts);  ...;  work->wait();
//
// Every call is collective: all ranks must make the same calls in the same order with tensors of the
// same dtypes and sizes. Ops run one at a time, in call order, on the group's communication thread,
// so an async op overlaps the caller's computation; the sync forms are async + wait. Tensors: CPU, of
// float32, float64, bfloat16, float16, int32, int64 or uint8 (16-bit floats are reduced pairwise in
// float32, each partial result rounded to the type); non-contiguous ones are reduced through a contiguous copy
// that is copied back. Results are written in place (the storage's version is bumped, so replicas and
// saved-tensor checks see the change).
//
// Failures: a peer that dies, or does not answer within the timeout (the group's, or the op's own),
// makes the op throw distributed::CommError "<op>: ... (rank r of n, timeout T ms[, peer rank p])". A
// failed group stays failed: later ops throw at once, naming the first failure.
//
// The backend is the one virtual seam: ProcessGroupGloo (gloo.h) for several processes, and
// LocalProcessGroup (world_size 1, every op the identity), so single-process code and tests need no peer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/core/tensor.h"

namespace cohort::distributed {

// A collective that failed: a dead or silent peer, a timeout, a broken group.
class CommError : public Error {
 public:
  using Error::Error;
};

enum class ReduceOp { kSum, kAvg, kMax, kMin };  // kAvg: sum, then divided by world_size (floats only)
std::ostream& operator<<(std::ostream& os, ReduceOp op);

using Timeout = std::chrono::milliseconds;

// One queued collective. wait() blocks until it has run and rethrows its error, if any.
class Work {
 public:
  void wait();
  bool completed() const;

  // Used by ProcessGroup.
  void finish(std::exception_ptr error);

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

// What the communication thread is doing, for tests and tracing: op "all_reduce", its sequence number
// in this group (the same on every rank), and whether it starts or ends.
struct TraceEvent {
  std::string op;
  int64_t seq;
  bool start;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  Timeout timeout() const { return timeout_; }
  virtual std::string backend() const = 0;

  // Reduces each tensor elementwise across ranks, in place. Tensors of one dtype travel as one buffer.
  void all_reduce(const std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::kSum, std::optional<Timeout> timeout = {});
  std::shared_ptr<Work> all_reduce_async(std::vector<Tensor> tensors, ReduceOp op = ReduceOp::kSum,
                                         std::optional<Timeout> timeout = {});
  // Copies root's values into every rank's tensors.
  void broadcast(const std::vector<Tensor>& tensors, int root = 0, std::optional<Timeout> timeout = {});
  std::shared_ptr<Work> broadcast_async(std::vector<Tensor> tensors, int root = 0, std::optional<Timeout> timeout = {});
  // Every rank's `input` (same dtype and shape on every rank), indexed by rank.
  std::vector<Tensor> all_gather(const Tensor& input, std::optional<Timeout> timeout = {});
  // Returns once every rank has called it.
  void barrier(std::optional<Timeout> timeout = {});

  // Called on the communication thread at the start and end of every op (tests use it as an event log).
  void set_trace(std::function<void(const TraceEvent&)> trace);
  // Bytes this rank has given to all-reduces so far (each reduced buffer's size, once per op): the
  // payload; Gloo's ring sends about 2 (n - 1) / n times that to its peers.
  int64_t all_reduced_bytes() const { return all_reduced_bytes_.load(); }

 protected:
  ProcessGroup(int rank, int world_size, Timeout timeout);
  // Stops the communication thread after the queued ops; a backend's destructor calls it first.
  void shutdown();

  // The backend's collectives on contiguous buffers, run on the communication thread. Errors: throw
  // anything; the base turns it into a CommError with the op, rank and timeout.
  virtual void run_all_reduce(void* data, int64_t count, DType dtype, ReduceOp op, Timeout timeout) = 0;
  virtual void run_broadcast(void* data, int64_t nbytes, int root, Timeout timeout) = 0;
  virtual void run_all_gather(const void* in, void* out, int64_t nbytes, Timeout timeout) = 0;
  virtual void run_barrier(Timeout timeout) = 0;
  // Extra words for an error message, e.g. "peer rank 2"; "" if unknown.
  virtual std::string describe_failure(const std::string& /*backend_message*/) const { return ""; }

 private:
  std::shared_ptr<Work> submit(const char* op, Timeout timeout, std::function<void()> fn);
  Timeout pick(std::optional<Timeout> t) const { return t.value_or(timeout_); }

  int rank_, world_size_;
  Timeout timeout_;
  std::atomic<int64_t> all_reduced_bytes_{0};
  struct Queue;
  std::unique_ptr<Queue> queue_;
};

// world_size 1: every op is the identity (kAvg divides by 1), all_gather returns a copy.
class LocalProcessGroup : public ProcessGroup {
 public:
  explicit LocalProcessGroup(Timeout timeout = std::chrono::seconds(30));
  ~LocalProcessGroup() override;
  std::string backend() const override { return "local"; }

 protected:
  void run_all_reduce(void*, int64_t, DType, ReduceOp, Timeout) override {}
  void run_broadcast(void*, int64_t, int, Timeout) override {}
  void run_all_gather(const void* in, void* out, int64_t nbytes, Timeout) override;
  void run_barrier(Timeout) override {}
};

}  // namespace cohort::distributed
