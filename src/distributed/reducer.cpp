// DistributedDataParallel's gradient reduction: buckets filled by post-accumulate-grad hooks, each
// all-reduced on the process group's communication thread as soon as it is full.
//
// Note [Gradient buckets]
// Parameters that require grad are grouped by dtype into buckets, in reverse registration order (the
// order in which backward usually produces their gradients), each closing once it reaches the cap (the
// first at min(1 MB, cap)). A bucket is one flat tensor: the gradients, then one "used" flag per
// parameter. A forward with gradient sync on arms the next backward. In backward, each parameter's
// post-accumulate-grad hook copies its .grad() into its slot and sets its flag; the first hook queues
// finalize() at the end of the backward pass. When a bucket is full it is launched (all_reduce_async,
// sum), but only in bucket order: every rank must issue the same collectives in the same order.
// finalize() zero-fills the slots of parameters that got no gradient on this rank (flag 0), launches the
// remaining buckets in order, so that every rank issues every bucket whatever it used, and waits.
// After the sum each flag counts the ranks that used the parameter: fewer than world_size is an error
// on every rank alike (not a hang) unless find_unused_parameters; otherwise the sum divided by
// world_size becomes .grad() (PyTorch's rule: a rank without a gradient contributes zero), and a
// parameter no rank used keeps its .grad(). The flags cost world_size-independent bytes and no extra
// collective. So do reduce_with_gradients' values: the last bucket, launched last, has room for them
// after its flags (grown on first use, identically on every rank), and finalize() reads their sums and
// zeroes the room, so a backward without values adds zeros.
// With a compressing CommHook, a float32/float64 bucket also owns a 16-bit copy of its gradients
// ("wire"): at launch the gradients are divided by world_size in their own dtype (before the sum, as
// PyTorch's hooks do, so that the 16-bit sum cannot overflow where the mean would not) and rounded
// into the wire, and one all_reduce carries the wire and, in the bucket's dtype, the flags and values
// (two Gloo all-reduces in one op, so bucket order is unchanged). finalize() copies the summed wire
// back instead of dividing. The conversions run on the engine thread that launches the bucket.
#include "cohort/distributed/reducer.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"

namespace cohort::distributed {

namespace {

struct Param {
  std::string name;
  Tensor tensor;
  size_t bucket = 0;
  size_t slot = 0;      // index in the bucket
  int64_t offset = 0;   // element offset in the bucket's flat tensor
  unsigned hook = 0;
};

struct Bucket {
  std::vector<size_t> params;
  int64_t numel = 0;  // gradient elements; the flags follow
  Tensor flat;
  Tensor wire;  // with a compressing CommHook: the gradients in 16 bits, as all-reduced
  size_t pending = 0;
  std::shared_ptr<Work> work;
};

}  // namespace

std::ostream& operator<<(std::ostream& os, CommHook hook) {
  switch (hook) {
    case CommHook::kAllReduce: return os << "allreduce";
    case CommHook::kBF16Compress: return os << "bf16_compress";
    case CommHook::kFP16Compress: return os << "fp16_compress";
  }
  return os << "?";
}

struct Reducer::State {
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  std::vector<BucketInfo> info;
  std::vector<Tensor> buffers;
  std::mutex mutex;  // hooks may run on several engine threads
  bool armed = false;     // a synced forward ran; its backward reduces
  bool started = false;   // this backward's first hook ran (finalize is queued)
  std::vector<bool> ready;
  size_t next_launch = 0;
  int64_t extras = 0;           // room for values in the last bucket, after its flags
  int64_t passed = 0;           // values passed for the next synced backward
  std::vector<double> reduced;  // the last synced backward's sums of those values
};

namespace {

std::vector<Bucket> make_buckets(std::vector<Param>& params, double cap_mb) {
  const int64_t cap = std::max<int64_t>(1, static_cast<int64_t>(cap_mb * 1024 * 1024));
  const int64_t first_cap = std::min<int64_t>(cap, 1024 * 1024);
  std::vector<Bucket> buckets;
  std::vector<int64_t> open;  // per dtype: the index of its open bucket, or -1
  std::vector<DType> open_dtype;
  std::vector<int64_t> bytes;
  for (size_t k = params.size(); k-- > 0;) {
    Param& p = params[k];
    size_t d = 0;
    while (d < open_dtype.size() && open_dtype[d] != p.tensor.dtype()) ++d;
    if (d == open_dtype.size()) {
      open_dtype.push_back(p.tensor.dtype());
      open.push_back(-1);
    }
    if (open[d] < 0) {
      open[d] = static_cast<int64_t>(buckets.size());
      buckets.emplace_back();
      bytes.push_back(0);
    }
    Bucket& b = buckets[open[d]];
    p.bucket = static_cast<size_t>(open[d]);
    p.slot = b.params.size();
    p.offset = b.numel;
    b.params.push_back(k);
    b.numel += p.tensor.numel();
    bytes[open[d]] += static_cast<int64_t>(p.tensor.nbytes());
    if (bytes[open[d]] >= (open[d] == 0 ? first_cap : cap)) open[d] = -1;
  }
  for (Bucket& b : buckets) {
    DType dtype = params[b.params[0]].tensor.dtype();
    b.flat = zeros({b.numel + static_cast<int64_t>(b.params.size())}, TensorOptions(dtype));
  }
  return buckets;
}

}  // namespace

Reducer::Reducer(std::shared_ptr<ProcessGroup> group, std::shared_ptr<nn::Module> module,
                 DistributedDataParallelOptions options)
    : group_(std::move(group)), module_(std::move(module)), options_(options), state_(std::make_unique<State>()) {
  COHORT_CHECK(group_, "DistributedDataParallel: no process group; hint: call distributed::init_process_group() "
               "first, or pass a group");
  COHORT_CHECK(module_, "DistributedDataParallel: the module is empty (nullptr)");
  COHORT_CHECK(options_.bucket_cap_mb() > 0, "DistributedDataParallel: bucket_cap_mb must be positive, got ",
               options_.bucket_cap_mb());
  std::vector<Tensor> state;
  std::unordered_set<TensorImpl*> seen;  // a parameter shared by two modules is one parameter
  for (const auto& item : module_->named_parameters()) {
    const Tensor& t = item.value();
    if (!t.defined() || !seen.insert(t.unsafe_impl()).second) continue;
    COHORT_CHECK_AS(DeviceError, t.device().type() == kCPU, "DistributedDataParallel: parameter ", item.key(),
                    " is on ", t.device(), "; only CPU modules are supported");
    state.push_back(t);
    if (t.requires_grad()) state_->params.push_back({item.key(), t});
  }
  for (const auto& item : module_->named_buffers())
    if (item.value().defined()) state_->buffers.push_back(item.value());
  state.insert(state.end(), state_->buffers.begin(), state_->buffers.end());
  if (!state.empty()) group_->broadcast(state, 0);  // every rank starts from rank 0's values

  state_->buckets = make_buckets(state_->params, options_.bucket_cap_mb());
  const CommHook hook = options_.comm_hook();
  for (Bucket& b : state_->buckets) {
    const DType dtype = b.flat.dtype();
    if (hook != CommHook::kAllReduce && (dtype == kFloat32 || dtype == kFloat64))
      b.wire = zeros({b.numel}, TensorOptions(hook == CommHook::kBF16Compress ? kBFloat16 : kHalf));
    BucketInfo info;
    for (size_t k : b.params) info.parameters.push_back(state_->params[k].name);
    info.bytes = b.numel * static_cast<int64_t>(b.flat.element_size());
    info.comm_dtype = b.wire.defined() ? b.wire.dtype() : dtype;
    info.comm_bytes = b.numel * static_cast<int64_t>(b.wire.defined() ? b.wire.element_size() : b.flat.element_size());
    state_->info.push_back(std::move(info));
  }
  state_->ready.assign(state_->params.size(), false);

  State* s = state_.get();
  for (size_t k = 0; k < s->params.size(); ++k) {
    s->params[k].hook = s->params[k].tensor.register_post_accumulate_grad_hook([this, k](const Tensor&) {
      mark_ready(k);
    });
  }
}

Reducer::~Reducer() {
  for (Param& p : state_->params) p.tensor.remove_hook(p.hook);
  for (Bucket& b : state_->buckets)
    if (b.work) try { b.work->wait(); } catch (const std::exception&) {}
}

const std::vector<BucketInfo>& Reducer::buckets() const { return state_->info; }

void Reducer::reduce_with_gradients(const std::vector<double>& values) {
  State& s = *state_;
  std::lock_guard<std::mutex> l(s.mutex);
  COHORT_CHECK(!s.buckets.empty(), "DistributedDataParallel: reduce_with_gradients needs a parameter that requires "
               "grad, and the module has none");
  COHORT_CHECK(!s.started, "DistributedDataParallel: reduce_with_gradients was called while a backward is reducing; "
               "hint: call it between forward and backward");
  Bucket& last = s.buckets.back();
  const int64_t start = last.numel + static_cast<int64_t>(last.params.size());
  const int64_t n = static_cast<int64_t>(values.size());
  if (n > s.extras) {
    Tensor grown = zeros({start + n}, TensorOptions(last.flat.dtype()));
    grown.narrow(0, 0, start).copy_(last.flat.narrow(0, 0, start));
    last.flat = grown;
    s.extras = n;
  }
  if (n > 0) last.flat.narrow(0, start, n).copy_(tensor(values, TensorOptions(kFloat64)));
  s.passed = n;
}

const std::vector<double>& Reducer::reduced_values() const { return state_->reduced; }

void Reducer::before_forward() {
  if (options_.broadcast_buffers() && !state_->buffers.empty() && module_->is_training() && GradMode::is_enabled())
    group_->broadcast(state_->buffers, 0);
}

void Reducer::after_forward() {
  std::lock_guard<std::mutex> l(state_->mutex);
  state_->armed = sync_ && GradMode::is_enabled() && !state_->params.empty();
  state_->started = false;
}

// Called under the mutex: launches every full bucket that is next in order.
void Reducer::launch_ready() {
  State& s = *state_;
  while (s.next_launch < s.buckets.size() && s.buckets[s.next_launch].pending == 0) {
    Bucket& b = s.buckets[s.next_launch++];
    if (b.wire.defined()) {  // Note [Gradient buckets]: compressed
      Tensor grads = b.flat.narrow(0, 0, b.numel);
      grads.div_(group_->world_size());
      b.wire.copy_(grads);
      b.work = group_->all_reduce_async({b.wire, b.flat.narrow(0, b.numel, b.flat.numel() - b.numel)}, ReduceOp::kSum);
    } else {
      b.work = group_->all_reduce_async({b.flat}, ReduceOp::kSum);
    }
  }
}

void Reducer::mark_ready(size_t k) {
  State& s = *state_;
  std::lock_guard<std::mutex> l(s.mutex);
  if (!s.armed) return;  // a no_sync forward, or a backward without a forward through this wrapper
  if (!s.started) {
    s.started = true;
    s.ready.assign(s.params.size(), false);
    s.next_launch = 0;
    for (Bucket& b : s.buckets) {
      b.pending = b.params.size();
      b.work.reset();
    }
    autograd::queue_callback([this] { finalize(); });
  }
  Param& p = s.params[k];
  COHORT_CHECK_AS(AutogradError, !s.ready[k], "DistributedDataParallel: parameter ", p.name,
                  " got its gradient twice in one iteration; hint: run forward before each backward, or backward "
                  "once over the sum of the losses");
  s.ready[k] = true;
  Bucket& b = s.buckets[p.bucket];
  b.flat.narrow(0, p.offset, p.tensor.numel()).copy_(p.tensor.grad().reshape({-1}));
  b.flat.narrow(0, b.numel + static_cast<int64_t>(p.slot), 1).fill_(1);
  --b.pending;
  launch_ready();
}

void Reducer::finalize() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> l(s.mutex);
    s.armed = false;
    for (size_t k = 0; k < s.params.size(); ++k) {
      if (s.ready[k]) continue;
      Param& p = s.params[k];
      Bucket& b = s.buckets[p.bucket];
      b.flat.narrow(0, p.offset, p.tensor.numel()).zero_();
      b.flat.narrow(0, b.numel + static_cast<int64_t>(p.slot), 1).zero_();
      --b.pending;
    }
    launch_ready();
  }
  for (Bucket& b : s.buckets) b.work->wait();  // a CommError leaves backward() here

  const int n = group_->world_size();
  std::vector<std::vector<double>> used(s.buckets.size());  // per bucket: how many ranks used each parameter
  std::string mismatched;
  size_t count = 0;
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    Bucket& b = s.buckets[i];
    Tensor flags = b.flat.narrow(0, b.numel, static_cast<int64_t>(b.params.size())).to(kFloat64).contiguous();
    used[i].assign(flags.data_ptr<double>(), flags.data_ptr<double>() + flags.numel());
    for (size_t j = 0; j < b.params.size(); ++j) {
      int ranks = static_cast<int>(used[i][j] + 0.5);
      if (ranks == n || options_.find_unused_parameters() || count++ >= 8) continue;
      mismatched += detail::str(mismatched.empty() ? "" : ", ", s.params[b.params[j]].name, " on ", ranks, " of ", n,
                                " ranks (", s.ready[b.params[j]] ? "including" : "not", " this one, rank ",
                                group_->rank(), ")");
    }
  }
  COHORT_CHECK(count == 0, "DistributedDataParallel: every parameter must get a gradient on every rank in every "
               "iteration, but ", count, " did not: ", mismatched, count > 8 ? ", ..." : "",
               "; hint: if some parameters do not take part in the loss of every iteration, pass "
               "DistributedDataParallelOptions().find_unused_parameters(true)");

  NoGradGuard no_grad;
  if (s.extras > 0) {
    Bucket& last = s.buckets.back();
    Tensor room = last.flat.narrow(0, last.numel + static_cast<int64_t>(last.params.size()), s.extras);
    Tensor sums = room.to(kFloat64).contiguous();
    s.reduced.assign(sums.data_ptr<double>(), sums.data_ptr<double>() + s.passed);
    s.passed = 0;
    room.zero_();
  }
  {
    std::lock_guard<std::mutex> l(s.mutex);
    s.started = false;  // values for the next backward may be passed from here on
  }
  for (size_t i = 0; i < s.buckets.size(); ++i) {
    Bucket& b = s.buckets[i];
    Tensor grads = b.flat.narrow(0, 0, b.numel);
    if (b.wire.defined()) grads.copy_(b.wire);  // already divided before the sum
    else grads.div_(n);                         // the sum becomes the mean
    for (size_t j = 0; j < b.params.size(); ++j) {
      if (used[i][j] < 0.5) continue;  // no rank used it: .grad() stays as it was
      const Param& p = s.params[b.params[j]];
      Tensor avg = grads.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
      Tensor& grad = p.tensor.mutable_grad();
      if (grad.defined()) grad.copy_(avg);
      else grad = avg.clone();
    }
  }
}

}  // namespace cohort::distributed
