// One rank of a distributed test (tests/distributed/*_test.cpp start one per rank through spawn.h):
//   cohort_ddp_worker <scenario>      with RANK, WORLD_SIZE, COHORT_STORE set
// Each scenario checks its own results and exits 0; a failed check or an unexpected error prints
// "FAILED: ..." and exits 1. Scenarios that expect an error print "EXPECTED: <its message>" and exit 0,
// so the test can check the message. Rank 0 computes single-process references where one is needed.
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "cohort/cohort.h"
#include "cohort/distributed/checkpoint.h"
#include "cohort/distributed/ddp.h"
#include "cohort/distributed/uneven.h"
#include "cohort/io/checkpoint.h"
#include "cohort/models/model.h"
#include "cohort/parallel/data_parallel.h"

using namespace cohort;
namespace dist = cohort::distributed;

namespace {

struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define WCHECK(cond, ...)                                                                                   \
  do {                                                                                                      \
    if (!(cond)) throw CheckFailed(::cohort::detail::str("line ", __LINE__, ": ", #cond, ": ", __VA_ARGS__)); \
  } while (0)

std::string env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::shared_ptr<models::Model> make_mlp(uint64_t seed, int64_t image_size = 3) {
  manual_seed(seed);
  return models::create("mlp", models::ModelOptions().in_channels(1).image_size(image_size).num_classes(3));
}

std::shared_ptr<models::Model> copy_of(const models::Model& net) {
  auto copy = make_mlp(12345, net.options().image_size());
  copy->load_state_dict(net.state_dict());
  return copy;
}

// The global batch of step `step` (the same on every rank) and this rank's share of it.
struct Batch {
  Tensor x, y, xs, ys;
};
Batch batch(int step, const dist::ProcessGroup& pg, int64_t n = 12, int64_t image_size = 3) {
  manual_seed(1000 + step);
  Batch b;
  b.x = randn({n, 1, image_size, image_size});
  b.y = randn({n, 3});
  int64_t share = n / pg.world_size();
  b.xs = b.x.narrow(0, pg.rank() * share, share);
  b.ys = b.y.narrow(0, pg.rank() * share, share);
  return b;
}

bool close(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-6) { return a.allclose(b, rtol, atol); }

// Every rank holds the same values of `t`.
bool same_on_all_ranks(dist::ProcessGroup& pg, const Tensor& t) {
  auto all = pg.all_gather(t.detach());
  for (const Tensor& a : all)
    if (!a.equal(all[0])) return false;
  return true;
}

void collectives(dist::ProcessGroup& pg) {
  const int r = pg.rank(), n = pg.world_size();
  // float32, float64, int64 in one call; a non-contiguous view is written back.
  Tensor f = full({2, 3}, static_cast<double>(r + 1));
  Tensor d = full({4}, 0.5 * r, TensorOptions(kFloat64));
  Tensor i = full({3}, static_cast<int64_t>(r * 10), TensorOptions(kInt64));
  Tensor base = full({3, 2}, static_cast<double>(r));
  Tensor view = base.t();  // [2, 3], not contiguous
  pg.all_reduce({f, d, i, view}, dist::ReduceOp::kSum);
  double tri = n * (n + 1) / 2.0;
  WCHECK(f.equal(full({2, 3}, tri)), f);
  WCHECK(d.equal(full({4}, 0.5 * (n - 1) * n / 2.0, TensorOptions(kFloat64))), d);
  WCHECK(i.equal(full({3}, static_cast<int64_t>(10 * (n - 1) * n / 2), TensorOptions(kInt64))), i);
  WCHECK(base.equal(full({3, 2}, (n - 1) * n / 2.0)), base);

  Tensor avg = full({5}, static_cast<double>(r));
  pg.all_reduce({avg}, dist::ReduceOp::kAvg);
  WCHECK(close(avg, full({5}, (n - 1) / 2.0)), avg);
  Tensor mx = arange(0, 4, 1, TensorOptions(kInt64)) * (r + 1);
  Tensor mn = mx.clone();
  pg.all_reduce({mx}, dist::ReduceOp::kMax);
  pg.all_reduce({mn}, dist::ReduceOp::kMin);
  WCHECK(mx.equal(arange(0, 4, 1, TensorOptions(kInt64)) * n), mx);
  WCHECK(mn.equal(arange(0, 4, 1, TensorOptions(kInt64))), mn);
  // The async form overlaps and completes.
  Tensor a = ones({1000});
  auto work = pg.all_reduce_async({a});
  work->wait();
  WCHECK(work->completed() && a.equal(full({1000}, static_cast<double>(n))), a);

  // broadcast from the last rank, into a float and an int tensor.
  int root = n - 1;
  Tensor bf = full({3}, static_cast<double>(r));
  Tensor bi = full({2}, static_cast<int64_t>(r), TensorOptions(kInt64));
  pg.broadcast({bf, bi}, root);
  WCHECK(bf.equal(full({3}, static_cast<double>(root))) && bi.equal(full({2}, static_cast<int64_t>(root), TensorOptions(kInt64))), bf);

  // all_gather: rank k's tensor at index k.
  auto all = pg.all_gather(full({2, 2}, static_cast<double>(r * r)));
  WCHECK(static_cast<int>(all.size()) == n, all.size());
  for (int k = 0; k < n; ++k) WCHECK(all[k].equal(full({2, 2}, static_cast<double>(k * k))), k, all[k]);
  pg.barrier();
}

using Mlp = models::Model;

void check_training(dist::ProcessGroup& pg, const std::function<Tensor(const Tensor&)>& forward, nn::Module& wrapper,
                    models::Model& net, const std::shared_ptr<models::Model>& ref, int steps) {
  optim::SGD opt(wrapper.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  std::unique_ptr<optim::SGD> ref_opt;
  if (ref) ref_opt = std::make_unique<optim::SGD>(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < steps; ++step) {
    Batch b = batch(step, pg);
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss(forward(b.xs), b.ys);
    loss.backward();
    opt.step();
    Tensor mean_loss = loss.detach().clone();
    pg.all_reduce({mean_loss}, dist::ReduceOp::kAvg);
    if (ref) {
      ref_opt->zero_grad();
      Tensor ref_loss = nn::functional::mse_loss(ref->forward(b.x), b.y);
      ref_loss.backward();
      ref_opt->step();
      WCHECK(close(mean_loss, ref_loss), "step ", step, ": DDP loss ", mean_loss.item<double>(), " vs single-process ",
             ref_loss.item<double>());
    }
  }
  auto mine = net.named_parameters();
  for (const auto& p : mine) WCHECK(same_on_all_ranks(pg, p.value()), p.key(), " differs between ranks");
  if (ref) {
    auto theirs = ref->named_parameters();
    for (const auto& p : mine)
      WCHECK(close(p.value(), *theirs.find(p.key())), p.key(), " after ", steps, " steps differs from single-process");
  }
}

void ddp_train(dist::ProcessGroup& pg) {
  auto net = make_mlp(100 + pg.rank());  // different on every rank: the broadcast must fix that
  dist::DistributedDataParallel<Mlp> ddp(net, dist::default_group(),
                                         dist::DistributedDataParallelOptions().bucket_cap_mb(0.01));
  WCHECK(ddp.buckets().size() >= 2, ddp.buckets().size());
  WCHECK(ddp.state_dict().keys() == net->state_dict().keys(), "state_dict keys have a prefix");
  std::shared_ptr<models::Model> ref = pg.rank() == 0 ? copy_of(*net) : nullptr;
  check_training(pg, [&](const Tensor& x) { return ddp(x); }, ddp, *net, ref, 3);
}

void ddp_train_dp(dist::ProcessGroup& pg) {
  set_device_count(2);
  auto net = make_mlp(100 + pg.rank());
  auto dp = std::make_shared<nn::DataParallel<Mlp>>(net, std::vector<Device>{Device(kCPU, 0), Device(kCPU, 1)});
  dist::DistributedDataParallel<nn::DataParallel<Mlp>> ddp(dp, dist::default_group(),
                                                           dist::DistributedDataParallelOptions().bucket_cap_mb(0.01));
  std::shared_ptr<models::Model> ref = pg.rank() == 0 ? copy_of(*net) : nullptr;
  check_training(pg, [&](const Tensor& x) { return ddp(x); }, ddp, *net, ref, 3);
}

// An event log written by the communication thread and by a hook in backward.
struct Log {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::string> events;
  void add(std::string e) {
    { std::lock_guard<std::mutex> l(mutex); events.push_back(std::move(e)); }
    cv.notify_all();
  }
  size_t index(const std::string& prefix) {
    std::lock_guard<std::mutex> l(mutex);
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i].rfind(prefix, 0) == 0) return i;
    return SIZE_MAX;
  }
  std::string dump() {
    std::lock_guard<std::mutex> l(mutex);
    std::string s;
    for (auto& e : events) s += e + "; ";
    return s;
  }
};

void overlap(dist::ProcessGroup& pg) {
  auto net = make_mlp(3, 2);  // fc1 4->256, fc2 256->128, fc3 128->3
  dist::DistributedDataParallel<Mlp> ddp(net, dist::default_group(),
                                         dist::DistributedDataParallelOptions().bucket_cap_mb(0.001));
  WCHECK(ddp.buckets().size() >= 3 && ddp.buckets()[0].parameters[0] == "fc3.bias", ddp.buckets().size());
  Log log;
  pg.set_trace([&](const dist::TraceEvent& e) { log.add(std::string(e.start ? "start " : "end ") + e.op); });
  Batch b = batch(0, pg, 12, 2);
  Tensor x = b.xs.clone().requires_grad_();
  // The gradient w.r.t. the input is the last thing backward computes. Here the first bucket (the last
  // layer's gradients) must already be reduced: wait for it, so the order below is evidence, not a race.
  x.register_hook([&](const Tensor&) {
    std::unique_lock<std::mutex> l(log.mutex);
    bool reduced = log.cv.wait_for(l, std::chrono::seconds(20), [&] {
      for (auto& e : log.events)
        if (e == "end all_reduce") return true;
      return false;
    });
    log.events.push_back(reduced ? "input-grad" : "input-grad before any reduction ended");
  });
  Tensor loss = nn::functional::mse_loss(ddp(x), b.ys);
  loss.backward();
  log.add("backward returned");
  pg.set_trace(nullptr);
  size_t start = log.index("start all_reduce"), end = log.index("end all_reduce"), hook = log.index("input-grad"),
         done = log.index("backward returned");
  WCHECK(start < end && end < hook && hook < done && log.index("input-grad before") == SIZE_MAX, log.dump());
  std::cout << "events: " << log.dump() << std::endl;
}

void no_sync(dist::ProcessGroup& pg) {
  auto net = make_mlp(100 + pg.rank());
  dist::DistributedDataParallel<Mlp> ddp(net, dist::default_group(), {});
  std::shared_ptr<models::Model> ref = pg.rank() == 0 ? copy_of(*net) : nullptr;
  int reductions = 0;
  pg.set_trace([&](const dist::TraceEvent& e) { reductions += e.start && e.op == "all_reduce"; });
  Batch b1 = batch(1, pg), b2 = batch(2, pg);
  {
    auto guard = ddp.no_sync();
    nn::functional::mse_loss(ddp(b1.xs), b1.ys).backward();
  }
  WCHECK(reductions == 0, reductions, " reductions under no_sync");
  pg.set_trace(nullptr);
  WCHECK(!same_on_all_ranks(pg, net->named_parameters()["fc3.bias"].grad()), "no_sync gradients were averaged");
  nn::functional::mse_loss(ddp(b2.xs), b2.ys).backward();
  for (const auto& p : net->named_parameters()) WCHECK(same_on_all_ranks(pg, p.value().grad()), p.key());
  if (ref) {
    Tensor total = nn::functional::mse_loss(ref->forward(b1.x), b1.y) + nn::functional::mse_loss(ref->forward(b2.x), b2.y);
    total.backward();
    auto theirs = ref->named_parameters();
    for (const auto& p : net->named_parameters())
      WCHECK(close(p.value().grad(), theirs.find(p.key())->grad()), p.key(), " accumulated gradient differs");
  }
}

// Values summed with the gradients: no all-reduce of their own, the sums on every rank after backward,
// zeros from a backward that passes none, and values that grow in number.
void values_with_gradients(dist::ProcessGroup& pg) {
  auto net = make_mlp(7);
  dist::DistributedDataParallel<Mlp> ddp(net, dist::default_group(), {});
  const int n = pg.world_size(), r = pg.rank();
  int reductions = 0;
  pg.set_trace([&](const dist::TraceEvent& e) { reductions += e.start && e.op == "all_reduce"; });
  Batch b = batch(1, pg);
  Tensor loss = nn::functional::mse_loss(ddp(b.xs), b.ys);
  ddp.reducer().reduce_with_gradients({1.0 + r, 0.25 * r, 1000.0});
  loss.backward();
  pg.set_trace(nullptr);
  WCHECK(reductions == 1, reductions, " all-reduces for one backward with values");
  const std::vector<double> sums = ddp.reducer().reduced_values();
  WCHECK(sums.size() == 3, sums.size(), " sums");
  WCHECK(sums[0] == n + n * (n - 1) / 2.0 && sums[1] == 0.125 * n * (n - 1) && sums[2] == 1000.0 * n, "sums ",
         sums[0], ", ", sums[1], ", ", sums[2]);
  for (const auto& p : net->named_parameters()) WCHECK(same_on_all_ranks(pg, p.value().grad()), p.key());
  nn::functional::mse_loss(ddp(b.xs), b.ys).backward();  // passes none: the room adds zeros
  ddp.reducer().reduce_with_gradients({1, 2, 3, 4, 5});
  nn::functional::mse_loss(ddp(b.xs), b.ys).backward();
  WCHECK(ddp.reducer().reduced_values() == std::vector<double>({1.0 * n, 2.0 * n, 3.0 * n, 4.0 * n, 5.0 * n}),
         "five values after three");
}

// bf16_compress against the float32 all-reduce on the same gradients: within bfloat16's rounding of
// the exact mean, every value a bfloat16, the bucket bytes on the wire halved (the flags stay float32),
// float32's own reduction bit for bit the sum of the gathered gradients over n (2 ranks); then both
// train, and the compressed run converges as the float32 one does.
void bf16_compress(dist::ProcessGroup& pg) {
  const int n = pg.world_size();
  auto options = dist::DistributedDataParallelOptions().bucket_cap_mb(0.01);
  auto net32 = make_mlp(21), net16 = make_mlp(21), local = make_mlp(21);
  dist::DistributedDataParallel<Mlp> ddp32(net32, dist::default_group(), options);
  auto compressed = dist::DistributedDataParallelOptions(options).comm_hook(dist::CommHook::kBF16Compress);
  dist::DistributedDataParallel<Mlp> ddp16(net16, dist::default_group(), compressed);
  WCHECK(ddp16.buckets().size() >= 2, ddp16.buckets().size());
  int64_t bytes32 = 0, bytes16 = 0, flags = 0;
  for (size_t i = 0; i < ddp16.buckets().size(); ++i) {
    const auto& b = ddp16.buckets()[i];
    WCHECK(b.comm_dtype == kBFloat16 && ddp32.buckets()[i].comm_dtype == kFloat32, "bucket ", i, ": ", b.comm_dtype);
    WCHECK(b.comm_bytes * 2 == b.bytes && ddp32.buckets()[i].comm_bytes == b.bytes, "bucket ", i);
    bytes32 += b.bytes;
    bytes16 += b.comm_bytes;
    flags += 4 * static_cast<int64_t>(b.parameters.size());
  }

  Batch b = batch(0, pg);
  int64_t before = pg.all_reduced_bytes();
  nn::functional::mse_loss(ddp32(b.xs), b.ys).backward();
  const int64_t sent32 = pg.all_reduced_bytes() - before;
  before = pg.all_reduced_bytes();
  nn::functional::mse_loss(ddp16(b.xs), b.ys).backward();
  const int64_t sent16 = pg.all_reduced_bytes() - before;
  WCHECK(sent32 == bytes32 + flags && sent16 == bytes16 + flags, "sent ", sent32, " and ", sent16, " bytes; buckets ",
         bytes32, " and ", bytes16, " + flags ", flags);
  WCHECK(sent16 * 2 < sent32 * 51 / 50, "bf16 sent ", sent16, " bytes, float32 ", sent32);
  std::cout << "all-reduced bytes per backward: float32 " << sent32 << ", bf16_compress " << sent16 << std::endl;

  // Each rank's own gradients, gathered: the exact mean and the scale of the rounding error.
  nn::functional::mse_loss(local->forward(b.xs), b.ys).backward();
  auto p16 = net16->named_parameters(), p32 = net32->named_parameters();
  double worst = 0;
  for (const auto& p : local->named_parameters()) {
    auto all = pg.all_gather(p.value().grad());
    Tensor sum = zeros(p.value().sizes(), TensorOptions(kFloat64)), magnitude = sum.clone();
    Tensor sum32 = zeros(p.value().sizes());
    for (const Tensor& g : all) {
      sum.add_(g.to(kFloat64));
      magnitude.add_(g.to(kFloat64).abs());
      sum32.add_(g);
    }
    Tensor exact = sum / n, got = p16.find(p.key())->grad();
    // n values rounded and n - 1 sums rounded, each by at most 2^-8 (bfloat16's unit roundoff) of a
    // value no larger than the sum of |g_r| / n: n * 2^-8 times the ranks' mean |gradient| (1% slack
    // for the float32 division before the rounding).
    Tensor bound = magnitude / n * (n * std::ldexp(1.0, -8) * 1.01) + 1e-30;
    Tensor error = (got.to(kFloat64) - exact).abs();
    WCHECK((error <= bound).all().item<bool>(), p.key(), ": bf16 gradient off by ", (error / bound).max().item<double>(),
           " bounds");
    worst = std::max(worst, (error / (magnitude / n + 1e-30)).max().item<double>());
    WCHECK(got.equal(got.to(kBFloat16).to(kFloat32)), p.key(), " holds values that are not bfloat16");
    if (n == 2) WCHECK(p32.find(p.key())->grad().equal(sum32 / n), p.key(), " float32 all-reduce changed");
  }
  std::cout << "largest error of a bf16-compressed gradient element, over the mean |gradient| of the ranks: " << worst
            << " (2^-8 = " << std::ldexp(1.0, -8) << ")" << std::endl;

  // Training: both runs from the same start reach a similar loss.
  auto train = [&](dist::DistributedDataParallel<Mlp>& ddp) {
    optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.05).momentum(0.9));
    std::vector<double> losses;
    for (int step = 0; step < 40; ++step) {
      Batch t = batch(step % 4, pg);
      opt.zero_grad();
      Tensor loss = nn::functional::mse_loss(ddp(t.xs), t.ys);
      loss.backward();
      opt.step();
      Tensor mean = loss.detach().clone();
      pg.all_reduce({mean}, dist::ReduceOp::kAvg);
      losses.push_back(mean.item<double>());
    }
    return losses;
  };
  std::vector<double> l32 = train(ddp32), l16 = train(ddp16);
  for (const auto& p : net16->named_parameters()) WCHECK(same_on_all_ranks(pg, p.value()), p.key(), " differs between ranks");
  double first = (l16[0] + l16[1] + l16[2] + l16[3]) / 4, last = (l16[36] + l16[37] + l16[38] + l16[39]) / 4;
  double last32 = (l32[36] + l32[37] + l32[38] + l32[39]) / 4;
  std::cout << "loss: bf16_compress " << first << " -> " << last << ", float32 -> " << last32 << std::endl;
  WCHECK(last < 0.7 * first, "bf16_compress did not converge: ", first, " -> ", last);
  WCHECK(std::abs(last - last32) < 0.1 * last32 + 1e-3, "bf16_compress ends at ", last, ", float32 at ", last32);
}

// 16-bit floats in the process group: sums, max, min and avg, in float32 and rounded per pair.
void collectives16(dist::ProcessGroup& pg) {
  const int r = pg.rank(), n = pg.world_size();
  for (DType dtype : {kBFloat16, kHalf}) {
    Tensor s = full({5}, 0.25 * (r + 1)).to(dtype), mx = s.clone(), mn = s.clone(), avg = s.clone();
    pg.all_reduce({s}, dist::ReduceOp::kSum);
    pg.all_reduce({mx}, dist::ReduceOp::kMax);
    pg.all_reduce({mn}, dist::ReduceOp::kMin);
    pg.all_reduce({avg}, dist::ReduceOp::kAvg);
    WCHECK(s.dtype() == dtype && s.to(kFloat32).equal(full({5}, 0.25 * n * (n + 1) / 2)), dtype, s);
    WCHECK(mx.to(kFloat32).equal(full({5}, 0.25 * n)) && mn.to(kFloat32).equal(full({5}, 0.25)), dtype);
    WCHECK(avg.to(kFloat32).equal(full({5}, 0.25 * (n + 1) / 2)), dtype, avg);
  }
}

struct Heads : nn::Module {
  Heads() {
    register_module("a", a);
    register_module("b", b);
    register_module("c", c);
  }
  Tensor forward(const Tensor& x, bool use_b) { return use_b ? a(x) + b(x) : a(x); }
  nn::Linear a{4, 2}, b{4, 2}, c{4, 2};  // c is never used
};

void unused(dist::ProcessGroup& pg, bool allowed) {
  manual_seed(5);
  auto heads = std::make_shared<Heads>();
  dist::DistributedDataParallel<Heads> ddp(heads, dist::default_group(),
                                           dist::DistributedDataParallelOptions().find_unused_parameters(allowed));
  Tensor x = randn({3, 4});
  Tensor out = ddp(x, pg.rank() != 0);  // rank 0 leaves head b out
  if (!allowed) {
    std::string message;
    try {
      out.sum().backward();
    } catch (const Error& e) {
      message = e.what();
    }
    WCHECK(!message.empty(), "no error for parameters used on some ranks only");
    std::cout << "EXPECTED: " << message << std::endl;
    return;
  }
  out.sum().backward();
  WCHECK(heads->b->weight.grad().defined(), "b.weight has no averaged gradient on rank ", pg.rank());
  WCHECK(!heads->c->weight.grad().defined(), "c.weight (used by no rank) got a gradient");
  for (const char* name : {"a.weight", "a.bias", "b.weight", "b.bias"})
    WCHECK(same_on_all_ranks(pg, heads->named_parameters()[name].grad()), name);
  // b: only ranks 1.. contribute x's column sums; the mean divides by world_size (PyTorch's rule).
  Tensor expected = ones({2, 1}).matmul(x.sum({0}, true)) * ((pg.world_size() - 1.0) / pg.world_size());
  WCHECK(close(heads->b->weight.grad(), expected), heads->b->weight.grad());
}

void killed(dist::ProcessGroup& pg) {
  if (pg.rank() == pg.world_size() - 1) _exit(3);  // dies without a word, like a crash
  Tensor t = ones({100});
  std::string message;
  try {
    pg.all_reduce({t});
  } catch (const dist::CommError& e) {
    message = e.what();
  }
  WCHECK(!message.empty(), "all_reduce with a dead peer did not fail");
  std::cout << "EXPECTED: " << message << std::endl;
  // The group stays failed, and says why.
  std::string again;
  try {
    pg.barrier();
  } catch (const dist::CommError& e) {
    again = e.what();
  }
  WCHECK(again.find("failed earlier") != std::string::npos, again);
}

void hung(dist::ProcessGroup& pg) {
  if (pg.rank() == pg.world_size() - 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));  // the test kills it
    return;
  }
  Tensor t = ones({100});
  try {
    pg.all_reduce({t});
  } catch (const dist::CommError& e) {
    std::cout << "EXPECTED: " << e.what() << std::endl;
    return;
  }
  throw CheckFailed("all_reduce with a hung peer did not fail");
}

void checkpoint(dist::ProcessGroup& pg) {
  auto net = make_mlp(100 + pg.rank());
  dist::DistributedDataParallel<Mlp> ddp(net, dist::default_group(), {});
  optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto step = [&](nn::Module& m, const std::function<Tensor(const Tensor&)>& f, optim::SGD& o, int s) {
    Batch b = batch(s, pg);
    o.zero_grad();
    nn::functional::mse_loss(f(b.xs), b.ys).backward();
    o.step();
  };
  for (int s = 0; s < 2; ++s) step(ddp, [&](const Tensor& x) { return ddp(x); }, opt, s);
  std::filesystem::path path = std::filesystem::path(env("COHORT_TEST_OUT")) / "ckpt.safetensors";
  dist::save_checkpoint_on_rank0(pg, path, ddp, &opt, {{"step", "2"}});

  auto resumed = make_mlp(999 + pg.rank());
  optim::SGD opt2(resumed->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto meta = io::load_checkpoint(path, *resumed, &opt2);
  WCHECK(meta["step"] == "2", meta["step"]);
  auto a = net->state_dict(), b = resumed->state_dict();
  for (const auto& item : a) WCHECK(item.value().equal(*b.find(item.key())), item.key(), " not restored");
  dist::DistributedDataParallel<Mlp> ddp2(resumed, dist::default_group(), {});
  step(ddp, [&](const Tensor& x) { return ddp(x); }, opt, 2);
  step(ddp2, [&](const Tensor& x) { return ddp2(x); }, opt2, 2);
  a = net->state_dict(), b = resumed->state_dict();
  for (const auto& item : a) WCHECK(item.value().equal(*b.find(item.key())), item.key(), " diverged after resuming");
}

void equal_batches(dist::ProcessGroup& pg) {
  dist::check_equal_batches(pg, 5);
  try {
    dist::check_equal_batches(pg, pg.rank() == 1 ? 6 : 5);
  } catch (const Error& e) {
    std::cout << "EXPECTED: " << e.what() << std::endl;
    return;
  }
  throw CheckFailed("different batch counts were not reported");
}

}  // namespace

int main(int argc, char** argv) {
  // No orphans: die with the test process.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::string parent = env("COHORT_TEST_PARENT");
  if (!parent.empty() && std::to_string(getppid()) != parent) return 2;
  if (argc < 2) {
    std::cerr << "usage: cohort_ddp_worker <scenario>\n";
    return 2;
  }
  set_num_threads(1);
  std::string scenario = argv[1];
  const std::map<std::string, std::function<void(dist::ProcessGroup&)>> scenarios{
      {"collectives", collectives},
      {"ddp_train", ddp_train},
      {"ddp_train_dp", ddp_train_dp},
      {"overlap", overlap},
      {"no_sync", no_sync},
      {"values_with_gradients", values_with_gradients},
      {"bf16_compress", bf16_compress},
      {"collectives16", collectives16},
      {"unused", [](dist::ProcessGroup& pg) { unused(pg, false); }},
      {"unused_allowed", [](dist::ProcessGroup& pg) { unused(pg, true); }},
      {"killed", killed},
      {"hung", hung},
      {"checkpoint", checkpoint},
      {"equal_batches", equal_batches},
  };
  auto it = scenarios.find(scenario);
  if (it == scenarios.end()) {
    std::cerr << "cohort_ddp_worker: unknown scenario " << scenario << "\n";
    return 2;
  }
  try {
    auto timeout = std::chrono::milliseconds(std::stoi(env("COHORT_TEST_TIMEOUT_MS", "20000")));
    auto pg = dist::init_process_group(timeout);
    it->second(*pg);
    dist::destroy_process_group();
  } catch (const std::exception& e) {
    std::cout << "FAILED: rank " << env("RANK") << ": " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
