// ProcessGroup's backend-independent half: the communication thread that runs ops in call order, packing
// tensors into contiguous per-dtype buffers, and turning a backend's failure into a CommError.
#include "cohort/distributed/process_group.h"

#include <cstring>
#include <deque>
#include <map>
#include <ostream>
#include <thread>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/threads.h"
#include "cohort/ops/creation.h"

namespace cohort::distributed {

std::ostream& operator<<(std::ostream& os, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return os << "sum";
    case ReduceOp::kAvg: return os << "avg";
    case ReduceOp::kMax: return os << "max";
    case ReduceOp::kMin: return os << "min";
  }
  return os << "?";
}

void Work::wait() {
  std::unique_lock<std::mutex> l(mutex_);
  cv_.wait(l, [this] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

bool Work::completed() const {
  std::lock_guard<std::mutex> l(mutex_);
  return done_;
}

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> l(mutex_);
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

struct ProcessGroup::Queue {
  struct Item {
    std::shared_ptr<Work> work;
    std::function<void()> fn;
  };
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Item> items;
  bool stop = false;
  std::thread thread;
  std::function<void(const TraceEvent&)> trace;
  int64_t next_seq = 0;
  std::string first_failure;
};

ProcessGroup::ProcessGroup(int rank, int world_size, Timeout timeout)
    : rank_(rank), world_size_(world_size), timeout_(timeout), queue_(std::make_unique<Queue>()) {
  COHORT_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, "ProcessGroup: rank must be in [0, world_size), got rank ",
               rank, " and world_size ", world_size);
  COHORT_CHECK(timeout.count() > 0, "ProcessGroup: the timeout must be positive, got ", timeout.count(), " ms");
  queue_->thread = start_thread("the process group's communication thread", [q = queue_.get()] {
    NoGradGuard no_grad;  // packing copies into parameters, which require grad
    std::unique_lock<std::mutex> l(q->mutex);
    for (;;) {
      q->cv.wait(l, [q] { return q->stop || !q->items.empty(); });
      if (q->items.empty()) return;
      Queue::Item item = std::move(q->items.front());
      q->items.pop_front();
      l.unlock();
      item.fn();  // never throws: submit() wraps it
      l.lock();
    }
  });
}

ProcessGroup::~ProcessGroup() { shutdown(); }

void ProcessGroup::shutdown() {
  if (!queue_ || !queue_->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> l(queue_->mutex);
    queue_->stop = true;
  }
  queue_->cv.notify_all();
  queue_->thread.join();
}

void ProcessGroup::set_trace(std::function<void(const TraceEvent&)> trace) {
  std::lock_guard<std::mutex> l(queue_->mutex);
  queue_->trace = std::move(trace);
}

std::shared_ptr<Work> ProcessGroup::submit(const char* op, Timeout timeout, std::function<void()> fn) {
  auto work = std::make_shared<Work>();
  std::lock_guard<std::mutex> l(queue_->mutex);
  COHORT_CHECK_AS(CommError, !queue_->stop, op, ": the process group is shut down");
  int64_t seq = queue_->next_seq++;
  auto trace = queue_->trace;
  // A failed Gloo context cannot run another op; every later op fails with the first error.
  queue_->items.push_back({work, [this, op, seq, timeout, fn = std::move(fn), work, trace] {
    std::string& first_failure = queue_->first_failure;  // touched by the communication thread only
    if (trace) trace({op, seq, true});
    std::exception_ptr error;
    if (!first_failure.empty()) {
      error = std::make_exception_ptr(CommError(detail::str(
          op, ": the process group failed earlier (", first_failure,
          "); hint: no collective can run after a peer failed: restart every rank")));
    } else {
      try {
        fn();
      } catch (const std::exception& e) {
        std::string what = e.what();
        std::string peer = describe_failure(what);
        first_failure = detail::str(op, " #", seq, " on rank ", rank_, " of ", world_size_,
                                    peer.empty() ? "" : ", " + peer, ", timeout ", timeout.count(), " ms: ", what);
        error = std::make_exception_ptr(CommError(detail::str(
            op, ": failed on rank ", rank_, " of ", world_size_, peer.empty() ? "" : " (" + peer + ")", " with timeout ",
            timeout.count(), " ms: ", what,
            "; hint: a rank died, is stuck, or made different collective calls; raise the timeout if it is only slow")));
      }
    }
    if (trace) trace({op, seq, false});
    work->finish(error);
  }});
  queue_->cv.notify_one();
  return work;
}

namespace {

void check_tensors(const char* op, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    COHORT_CHECK(t.defined(), op, ": tensor ", i, " is undefined");
    COHORT_CHECK_AS(DeviceError, t.device().type() == kCPU, op, ": tensor ", i, " is on ", t.device(),
                    "; only CPU tensors can be communicated");
    COHORT_CHECK_AS(TypeError, t.dtype() != kBool, op, ": tensor ", i, " is bool; hint: convert it to uint8");
  }
}

// The tensors of one dtype as one contiguous buffer: the tensor itself when it is alone and contiguous,
// else a packed copy that unpack() writes back.
struct Packed {
  std::vector<Tensor> members;
  Tensor flat;
  bool direct = false;

  void pack() {
    if (members.size() == 1 && members[0].is_contiguous()) {
      direct = true;
      flat = members[0];
      return;
    }
    int64_t total = 0;
    for (const Tensor& t : members) total += t.numel();
    flat = empty({total}, TensorOptions(members[0].dtype()));
    int64_t at = 0;
    for (const Tensor& t : members) {
      if (t.numel()) flat.narrow(0, at, t.numel()).copy_(t.reshape({-1}));
      at += t.numel();
    }
  }
  void unpack() {
    if (direct) {
      flat.unsafe_impl()->storage()->bump_version();  // written behind the tensor's back
      return;
    }
    int64_t at = 0;
    for (const Tensor& t : members) {
      if (t.numel()) t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
      at += t.numel();
    }
  }
};

std::vector<Packed> group_by_dtype(const std::vector<Tensor>& tensors) {
  std::map<DType, Packed> by;
  std::vector<DType> order;
  for (const Tensor& t : tensors) {
    if (!by.count(t.dtype())) order.push_back(t.dtype());
    by[t.dtype()].members.push_back(t);
  }
  std::vector<Packed> out;
  for (DType d : order) out.push_back(std::move(by[d]));
  return out;
}

}  // namespace

std::shared_ptr<Work> ProcessGroup::all_reduce_async(std::vector<Tensor> tensors, ReduceOp op,
                                                     std::optional<Timeout> timeout) {
  check_tensors("all_reduce", tensors);
  if (op == ReduceOp::kAvg)
    for (const Tensor& t : tensors)
      COHORT_CHECK_AS(TypeError, t.is_floating_point(), "all_reduce: ReduceOp::kAvg needs floating tensors, got ",
                      t.dtype(), "; hint: use kSum and divide");
  Timeout t = pick(timeout);
  return submit("all_reduce", t, [this, tensors = std::move(tensors), op, t] {
    for (Packed& p : group_by_dtype(tensors)) {
      p.pack();
      if (p.flat.numel()) run_all_reduce(p.flat.data_ptr(), p.flat.numel(), p.flat.dtype(), op, t);
      all_reduced_bytes_ += static_cast<int64_t>(p.flat.nbytes());
      if (op == ReduceOp::kAvg && world_size_ > 1) p.flat.div_(world_size_);
      p.unpack();
    }
  });
}

void ProcessGroup::all_reduce(const std::vector<Tensor>& tensors, ReduceOp op, std::optional<Timeout> timeout) {
  all_reduce_async(tensors, op, timeout)->wait();
}

std::shared_ptr<Work> ProcessGroup::broadcast_async(std::vector<Tensor> tensors, int root,
                                                    std::optional<Timeout> timeout) {
  check_tensors("broadcast", tensors);
  COHORT_CHECK(root >= 0 && root < world_size_, "broadcast: root must be a rank in [0, ", world_size_, "), got ", root);
  Timeout t = pick(timeout);
  return submit("broadcast", t, [this, tensors = std::move(tensors), root, t] {
    for (Packed& p : group_by_dtype(tensors)) {
      p.pack();
      if (p.flat.numel()) run_broadcast(p.flat.data_ptr(), static_cast<int64_t>(p.flat.nbytes()), root, t);
      if (rank_ != root) p.unpack();
    }
  });
}

void ProcessGroup::broadcast(const std::vector<Tensor>& tensors, int root, std::optional<Timeout> timeout) {
  broadcast_async(tensors, root, timeout)->wait();
}

std::vector<Tensor> ProcessGroup::all_gather(const Tensor& input, std::optional<Timeout> timeout) {
  check_tensors("all_gather", {input});
  Tensor in = input.contiguous();
  std::vector<int64_t> sizes{world_size_};
  for (int64_t s : input.sizes()) sizes.push_back(s);
  Tensor out = empty(sizes, TensorOptions(input.dtype()));
  Timeout t = pick(timeout);
  submit("all_gather", t, [this, in, out, t] {
    if (in.numel()) run_all_gather(in.data_ptr(), out.data_ptr(), static_cast<int64_t>(in.nbytes()), t);
  })->wait();
  return out.unbind(0);
}

void ProcessGroup::barrier(std::optional<Timeout> timeout) {
  Timeout t = pick(timeout);
  submit("barrier", t, [this, t] { run_barrier(t); })->wait();
}

LocalProcessGroup::LocalProcessGroup(Timeout timeout) : ProcessGroup(0, 1, timeout) {}
LocalProcessGroup::~LocalProcessGroup() { shutdown(); }

void LocalProcessGroup::run_all_gather(const void* in, void* out, int64_t nbytes, Timeout) {
  std::memcpy(out, in, static_cast<size_t>(nbytes));
}

}  // namespace cohort::distributed
