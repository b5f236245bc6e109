// ProcessGroupGloo: rendezvous through a Gloo store, a full mesh of TCP pairs, and Gloo's own algorithms
// for every collective (nothing here sends a byte itself).
#include "cohort/distributed/gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#define HIREDIS_NESTED_INCLUDE 1  // Debian ships hiredis.h under hiredis/
#include <gloo/rendezvous/redis_store.h>
#include <gloo/transport/tcp/device.h>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace cohort::distributed {

struct ProcessGroupGloo::Impl {
  std::string store_spec;
  std::unique_ptr<gloo::rendezvous::Store> base;
  gloo::rendezvous::FileStore* file = nullptr;  // base, when it is a file store
  std::unique_ptr<gloo::rendezvous::PrefixStore> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<std::string> processes;  // per rank: process_key()
  uint32_t tag = 0;                    // the same sequence on every rank: ops run in the same order
};

namespace {

void ignore_sigpipe() {
  struct sigaction current {};
  sigaction(SIGPIPE, nullptr, &current);
  if (current.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
}

void open_store(ProcessGroupGloo::Impl& impl, const std::string& spec) {
  COHORT_CHECK(!spec.empty(), "ProcessGroupGloo: no store given; hint: ProcessGroupOptions().store(\"file:/tmp/rdzv\") "
               "or \"redis://host:port\" (init_process_group reads COHORT_STORE)");
  if (spec.rfind("file:", 0) == 0) {
    std::string path = spec.substr(5);
    COHORT_CHECK(!path.empty(), "ProcessGroupGloo: the store \"", spec, "\" names no directory; hint: file:/path");
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    COHORT_CHECK(std::filesystem::is_directory(path), "ProcessGroupGloo: cannot create the store directory ", path,
                 ": ", ec.message());
    auto file = std::make_unique<gloo::rendezvous::FileStore>(path);
    impl.file = file.get();
    impl.base = std::move(file);
  } else if (spec.rfind("redis://", 0) == 0) {
    std::string hostport = spec.substr(8);
    size_t colon = hostport.rfind(':');
    int port = -1;
    if (colon != std::string::npos) {
      try {
        port = std::stoi(hostport.substr(colon + 1));
      } catch (const std::exception&) {
      }
    }
    COHORT_CHECK(colon != std::string::npos && colon > 0 && port > 0 && port < 65536,
                 "ProcessGroupGloo: expected a store redis://host:port, got \"", spec, "\"");
    try {
      impl.base = std::make_unique<gloo::rendezvous::RedisStore>(hostport.substr(0, colon), port);
    } catch (const std::exception& e) {
      throw CommError(detail::str("ProcessGroupGloo: cannot connect to the Redis store ", spec, ": ", e.what()));
    }
  } else {
    throw Error(detail::str("ProcessGroupGloo: unknown store \"", spec,
                            "\"; expected file:/path or redis://host:port"));
  }
}

// Where this process runs, as "<boot id>/<pid namespace>/<pid>": ranks with the same prefix can see each
// other's processes.
std::string process_key() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  boot >> id;
  std::error_code ec;
  std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  return id + "/" + ns + "/" + std::to_string(getpid());
}

// Whether the process `key` (from process_key) has exited; false when it runs elsewhere or is alive.
bool has_exited(const std::string& key, const std::string& mine) {
  size_t slash = key.rfind('/');
  if (slash == std::string::npos || key.substr(0, slash) != mine.substr(0, mine.rfind('/'))) return false;
  std::ifstream stat("/proc/" + key.substr(slash + 1) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');  // "pid (name) S ..."
  char state = paren + 2 < line.size() ? line[paren + 2] : '?';
  return state == 'Z' || state == 'X';
}

template <class T>
void set_reduce(gloo::AllreduceOptions& opts, ReduceOp op) {
  void (*fn)(void*, const void*, const void*, size_t) = &gloo::sum<T>;
  if (op == ReduceOp::kMax) fn = &gloo::max<T>;
  if (op == ReduceOp::kMin) fn = &gloo::min<T>;
  opts.setReduceFunction(fn);
}

template <class T>
void set_output(gloo::AllreduceOptions& opts, void* data, int64_t count, ReduceOp op) {
  opts.setOutput(static_cast<T*>(data), static_cast<size_t>(count));
  set_reduce<T>(opts, op);
}

}  // namespace

ProcessGroupGloo::ProcessGroupGloo(const ProcessGroupOptions& options)
    : ProcessGroup(options.rank(), options.world_size(), options.timeout()), impl_(std::make_unique<Impl>()) {
  ignore_sigpipe();
  impl_->store_spec = options.store();
  open_store(*impl_, options.store());
  impl_->store = std::make_unique<gloo::rendezvous::PrefixStore>("cohort/" + options.run_id(), *impl_->base);

  gloo::transport::tcp::attr attr;
  if (!options.iface().empty()) attr.iface = options.iface();
  else attr.hostname = options.hostname();
  try {
    impl_->device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw CommError(detail::str("ProcessGroupGloo: cannot listen on ",
                                options.iface().empty() ? "host " + options.hostname() : "interface " + options.iface(),
                                ": ", e.what()));
  }

  const int me = rank(), n = world_size();
  try {
    impl_->context = std::make_shared<gloo::rendezvous::Context>(me, n);
    impl_->context->setTimeout(timeout());
    impl_->context->connectFullMesh(*impl_->store, impl_->device);
    // Each rank's process, so that a failure can name a rank that died (on this host).
    impl_->processes.assign(n, "");
    impl_->processes[me] = process_key();
    if (n > 1) {
      impl_->store->set("proc/" + std::to_string(me), {impl_->processes[me].begin(), impl_->processes[me].end()});
      for (int r = 0; r < n; ++r) {
        if (r == me) continue;
        impl_->store->wait({"proc/" + std::to_string(r)}, timeout());
        auto bytes = impl_->store->get("proc/" + std::to_string(r));
        impl_->processes[r].assign(bytes.begin(), bytes.end());
      }
    }
    // Everyone has read everyone's keys: a file store's directory can be emptied for the next run.
    run_barrier(timeout());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::string hint = what.find("File already exists") != std::string::npos
                           ? "; hint: an earlier run with this store and run id did not finish its rendezvous: "
                             "remove its files, or use another run id (COHORT_RUN_ID) or store"
                           : "; hint: start all " + std::to_string(n) + " ranks with the same store and run id";
    throw CommError(detail::str("ProcessGroupGloo: rendezvous of rank ", me, " of ", n, " through ", options.store(),
                                " (run id \"", options.run_id(), "\") failed within ", timeout().count(), " ms: ", what,
                                hint));
  }
  if (impl_->file)
    for (const std::string& path : impl_->file->getAllKeyFilePaths()) std::remove(path.c_str());
}

ProcessGroupGloo::~ProcessGroupGloo() { shutdown(); }

void ProcessGroupGloo::run_all_reduce(void* data, int64_t count, DType dtype, ReduceOp op, Timeout timeout) {
  gloo::AllreduceOptions opts(impl_->context);
  opts.setTag(impl_->tag++);
  opts.setTimeout(timeout);
  switch (dtype) {
    case kFloat32: set_output<float>(opts, data, count, op); break;
    case kFloat64: set_output<double>(opts, data, count, op); break;
    case kInt32: set_output<int32_t>(opts, data, count, op); break;
    case kInt64: set_output<int64_t>(opts, data, count, op); break;
    case kUInt8: set_output<uint8_t>(opts, data, count, op); break;
    default: throw TypeError(detail::str("all_reduce: cannot reduce ", dtype, " tensors"));
  }
  gloo::allreduce(opts);
}

void ProcessGroupGloo::run_broadcast(void* data, int64_t nbytes, int root, Timeout timeout) {
  gloo::BroadcastOptions opts(impl_->context);
  opts.setTag(impl_->tag++);
  opts.setTimeout(timeout);
  opts.setRoot(root);
  opts.setOutput(static_cast<uint8_t*>(data), static_cast<size_t>(nbytes));
  gloo::broadcast(opts);
}

void ProcessGroupGloo::run_all_gather(const void* in, void* out, int64_t nbytes, Timeout timeout) {
  gloo::AllgatherOptions opts(impl_->context);
  opts.setTag(impl_->tag++);
  opts.setTimeout(timeout);
  opts.setInput(static_cast<uint8_t*>(const_cast<void*>(in)), static_cast<size_t>(nbytes));
  opts.setOutput(static_cast<uint8_t*>(out), static_cast<size_t>(nbytes) * world_size());
  gloo::allgather(opts);
}

void ProcessGroupGloo::run_barrier(Timeout timeout) {
  gloo::BarrierOptions opts(impl_->context);
  opts.setTag(impl_->tag++);
  opts.setTimeout(timeout);
  gloo::barrier(opts);
}

// Gloo's messages name a peer by socket address, which is not reliably the peer's (either side may have
// connected), so the rank is found by its process instead: on one host, a peer whose process has exited.
std::string ProcessGroupGloo::describe_failure(const std::string& message) const {
  std::string dead;
  for (int r = 0; r < world_size(); ++r)
    if (r != rank() && has_exited(impl_->processes[r], impl_->processes[rank()]))
      dead += (dead.empty() ? "" : ", ") + std::to_string(r);
  if (!dead.empty()) return "peer rank " + dead + " exited";
  if (message.find("Timed out") != std::string::npos) return "a peer did not answer in time";
  return "";
}

}  // namespace cohort::distributed
