// Note [Rendezvous]
// Ranks meet in three steps, each bounded by the group's timeout: every rank publishes "proc/<rank>"
// (where it runs: Peer below), Gloo's connectFullMesh exchanges the pairs' addresses and connects them,
// then every rank reads the others' "proc/" keys and all meet at a barrier. Gloo reads a key with
// Store::get, which waits with the store's fixed 30 s (Store::kDefaultTimeout) whatever the context's
// timeout, so a rank whose peers are late gave up after 30 s however long it was told to wait;
// TimedStore gives every wait the group's timeout. When ranks never come, the error names them: the
// ranks without a "proc/" key. Once all have met, each rank deletes the keys it wrote (a file store's
// files, a Redis store's keys), so the next run with the same store and run id starts clean.
//
// Note [Rendezvous generations]
// A rendezvous that does not end well leaves keys behind: a rank that fails cannot delete its own
// (a sibling may still be reading them to name the ranks that never arrived), and a rank that is
// killed deletes nothing. A retry with the same store and run id would then read them, or fail to
// write its own. So each attempt meets under "cohort/<run id>/<generation>/", and a generation that
// ends badly is closed by a "closed" key that says why; a rank starts at the first generation that is
// not closed. A rank that fails (a timeout, an error) closes it as "failed": the ranks still waiting
// there go on to their own timeout and name who never came, and the next attempt starts afresh. A rank
// that finds keys of an earlier, killed attempt (its own "proc/" key, a peer's whose process on this
// host has exited, or a peer address that refuses connections) closes it as "stale": the ranks waiting
// there see that and move on with it to the next generation, a few times at most. The exited peer is
// looked for before connecting: a dead peer's port may already be another process's listener (ports
// are reused), and a connection there is accepted but never answered, so only the timeout would end it. A rank key held by a process that is alive on this host is another
// process with the same rank: an error, not a stale key.
#include "cohort/distributed/gloo.h"

#include "cohort/core/half.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#define HIREDIS_NESTED_INCLUDE 1  // Debian ships hiredis.h under hiredis/
#include <gloo/rendezvous/redis_store.h>
#include <gloo/transport/tcp/device.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

namespace cohort::distributed {

namespace {

// Where a rank runs (Note [Rendezvous]): its process, to tell whether it has exited when it is on this
// host, and its host's name and address, to name it when it is on another.
struct Peer {
  std::string process;  // process_key()
  std::string host;     // gethostname()
  std::string address;  // the IP it listens on, as Gloo's messages print it (without brackets)

  std::vector<char> bytes() const {
    const std::string s = process + "\n" + host + "\n" + address;
    return {s.begin(), s.end()};
  }
  static Peer parse(const std::vector<char>& bytes) {
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    Peer p;
    std::getline(in, p.process);
    std::getline(in, p.host);
    std::getline(in, p.address);
    return p;
  }
};

// Gloo's two stores, with their check for keys made public (a wait of our own polls it), able to
// delete the keys they set (Note [Rendezvous]), and with `claim`: a set that fails, atomically, when
// the key exists. Two processes started with the same rank both claim its key at the same moment;
// exactly one must win, so the other can be told (Gloo's file store checks, then renames: both win).
class FileStore : public gloo::rendezvous::FileStore {
 public:
  using gloo::rendezvous::FileStore::FileStore;
  using gloo::rendezvous::FileStore::check;
  void set(const std::string& key, const std::vector<char>& data) override {
    if (!claim(key, data)) throw std::runtime_error("the store's key " + key + " is already set");
  }
  // Writes the key unless it exists (then false): the file is written under a name of this process
  // and linked into place, which fails if the key's file is there.
  bool claim(const std::string& key, const std::vector<char>& data, bool kept = false) {
    const std::string path = objectPath(key);
    static std::atomic<uint64_t> writes{0};  // ranks may be threads of one process
    const std::string tmp = tmpPath(key) + "." + std::to_string(::getpid()) + "." + std::to_string(writes++);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!out.flush()) {
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot write the store's file " + tmp);
      }
    }
    const int linked = ::link(tmp.c_str(), path.c_str());
    const int error = errno;
    std::remove(tmp.c_str());
    if (linked != 0 && error == EEXIST) return false;
    if (linked != 0) throw std::runtime_error("cannot write the store's file " + path + ": " + std::strerror(error));
    if (!kept) keyFilePaths_.push_back(path);
    return true;
  }
  void delete_keys() {
    for (const std::string& path : getAllKeyFilePaths()) std::remove(path.c_str());
    keyFilePaths_.clear();
  }
};

class RedisStore : public gloo::rendezvous::RedisStore {
 public:
  using gloo::rendezvous::RedisStore::RedisStore;
  void set(const std::string& key, const std::vector<char>& data) override {
    if (!claim(key, data)) throw std::runtime_error("the store's key " + key + " is already set");
  }
  bool claim(const std::string& key, const std::vector<char>& data, bool kept = false) {
    auto* reply = static_cast<redisReply*>(
        redisCommand(redis_, "SETNX %b %b", key.data(), key.size(), data.data(), data.size()));
    if (reply == nullptr) throw std::runtime_error(std::string("the Redis store: ") + redis_->errstr);
    const bool error = reply->type != REDIS_REPLY_INTEGER;
    const std::string what = reply->type == REDIS_REPLY_ERROR ? std::string(reply->str, reply->len) : "";
    const bool set = !error && reply->integer == 1;
    freeReplyObject(reply);
    if (error) throw std::runtime_error("the Redis store answered SETNX with " + (what.empty() ? "no number" : what));
    if (set && !kept) keys_.push_back(key);
    return set;
  }
  void delete_keys() {
    for (const std::string& key : keys_)
      if (void* reply = redisCommand(redis_, "DEL %b", key.data(), key.size())) freeReplyObject(reply);
    keys_.clear();
  }

 private:
  std::vector<std::string> keys_;
};

// Thrown inside a rendezvous whose generation holds keys of an earlier, killed attempt (Note
// [Rendezvous generations]): the ranks move on to the next generation.
class StaleGeneration : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The store the rendezvous sees: keys under "<prefix>/", and every wait, get's included, bounded by the
// group's timeout to the millisecond (Gloo's own waits take 30 s for get, and count whole seconds). A
// wait ends early, throwing StaleGeneration, once the generation is closed as stale.
class RendezvousStore : public gloo::rendezvous::Store {
 public:
  using Check = std::function<bool(const std::vector<std::string>&)>;
  RendezvousStore(gloo::rendezvous::Store& base, Check check, std::string prefix, std::chrono::milliseconds timeout)
      : base_(base), check_(std::move(check)), prefix_(std::move(prefix) + "/"), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override { base_.set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override {
    wait({key});
    return base_.get(prefix_ + key);
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!has(keys)) {
      if (closed_as_stale()) throw StaleGeneration("the rendezvous generation " + prefix_ + " was closed as stale");
      if (std::chrono::steady_clock::now() >= deadline) {
        std::string names;
        for (const std::string& key : keys) names += (names.empty() ? "" : ", ") + prefix_ + key;
        throw std::runtime_error(detail::str("waited ", timeout.count(), " ms for the key(s) ", names));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // Whether all `keys` are in the store now.
  bool has(const std::vector<std::string>& keys) const {
    std::vector<std::string> full;
    for (const std::string& key : keys) full.push_back(prefix_ + key);
    return check_(full);
  }
  // Whether another rank closed this generation because it holds an earlier attempt's keys.
  bool closed_as_stale() {
    if (stale_) return true;
    if (!has({kClosed})) return false;
    const std::vector<char> why = base_.get(prefix_ + kClosed);
    stale_ = std::string(why.begin(), why.end()).rfind("stale", 0) == 0;
    return stale_;
  }
  static constexpr const char* kClosed = "closed";
  const std::string& prefix() const { return prefix_; }

  // Like has, but true when the store cannot be asked: an error message names only keys surely missing.
  bool surely_has(const std::string& key) const noexcept {
    try {
      return has({key});
    } catch (const std::exception&) {
      return true;  // unknown: not reported as missing
    }
  }

 private:
  gloo::rendezvous::Store& base_;
  Check check_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  bool stale_ = false;
};

// The first generation from `from` on that no rank has closed (Note [Rendezvous generations]).
int first_open_generation(const RendezvousStore::Check& check, const std::string& root, int from) {
  int generation = from;
  while (check({root + "/" + std::to_string(generation) + "/" + RendezvousStore::kClosed})) ++generation;
  return generation;
}

// How many stale generations one rendezvous moves past before it gives up: each is an earlier attempt
// that was killed, so more than a few means attempts are still being killed.
constexpr int kMaxGenerationHops = 4;

}  // namespace

struct ProcessGroupGloo::Impl {
  std::string store_spec;
  std::unique_ptr<gloo::rendezvous::Store> base;
  FileStore* file = nullptr;    // base, when it is a file store
  RedisStore* redis = nullptr;  // base, when it is a Redis store
  std::unique_ptr<RendezvousStore> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<Peer> peers;  // per rank
  uint32_t tag = 0;         // the same sequence on every rank: ops run in the same order
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
    auto file = std::make_unique<FileStore>(path);
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
      auto redis = std::make_unique<RedisStore>(hostport.substr(0, colon), port);
      impl.redis = redis.get();
      impl.base = std::move(redis);
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

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

// The IP address Gloo's device for `attr` listens on, "" if it cannot be found.
std::string listen_address(const gloo::transport::tcp::attr& attr) {
  try {
    const gloo::transport::tcp::attr resolved = gloo::transport::tcp::CreateDeviceAttr(attr);
    char text[INET6_ADDRSTRLEN] = {};
    const auto* sa = reinterpret_cast<const sockaddr*>(&resolved.ai_addr);
    if (sa->sa_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
    else if (sa->sa_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
    return text;
  } catch (const std::exception&) {
    return "";
  }
}

// Whether two process keys (process_key) are on the same host and pid namespace.
bool same_host(const std::string& a, const std::string& b) {
  const size_t sa = a.rfind('/'), sb = b.rfind('/');
  return sa != std::string::npos && sb != std::string::npos && a.substr(0, sa) == b.substr(0, sb);
}

// Whether the process `key` (from process_key) has exited; false when it runs elsewhere or is alive.
bool has_exited(const std::string& key, const std::string& mine) {
  if (!same_host(key, mine)) return false;
  std::ifstream stat("/proc/" + key.substr(key.rfind('/') + 1) + "/stat");
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

// Gloo has no bfloat16, and its float16 is IEEE half without our rounding: the 16-bit floats are
// reduced by these, each pair in float32 and rounded once to the type (so a sum over n ranks is
// rounded n - 1 times, once per hop of the ring, as NCCL's bfloat16 sum is).
template <class T>
void sum16(void* c, const void* a, const void* b, size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(c);
  for (size_t i = 0; i < n; ++i) z[i] = T(static_cast<float>(x[i]) + static_cast<float>(y[i]));
}
template <class T>
void max16(void* c, const void* a, const void* b, size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(c);
  for (size_t i = 0; i < n; ++i) z[i] = static_cast<float>(x[i]) >= static_cast<float>(y[i]) ? x[i] : y[i];
}
template <class T>
void min16(void* c, const void* a, const void* b, size_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(c);
  for (size_t i = 0; i < n; ++i) z[i] = static_cast<float>(x[i]) <= static_cast<float>(y[i]) ? x[i] : y[i];
}
template <class T>
void set_reduce16(gloo::AllreduceOptions& opts, ReduceOp op) {
  void (*fn)(void*, const void*, const void*, size_t) = &sum16<T>;
  if (op == ReduceOp::kMax) fn = &max16<T>;
  if (op == ReduceOp::kMin) fn = &min16<T>;
  opts.setReduceFunction(fn);
}
template <>
void set_reduce<BFloat16>(gloo::AllreduceOptions& opts, ReduceOp op) { set_reduce16<BFloat16>(opts, op); }
template <>
void set_reduce<Half>(gloo::AllreduceOptions& opts, ReduceOp op) { set_reduce16<Half>(opts, op); }

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
  RendezvousStore::Check check;
  if (impl_->file) check = [f = impl_->file](const std::vector<std::string>& keys) { return f->check(keys); };
  else check = [r = impl_->redis](const std::vector<std::string>& keys) { return r->check(keys); };
  // Sets a key unless it exists (then false); a kept key outlives this process.
  auto claim = [&impl = *impl_](const std::string& key, const std::vector<char>& bytes, bool kept) {
    return impl.file ? impl.file->claim(key, bytes, kept) : impl.redis->claim(key, bytes, kept);
  };

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
  auto proc_key = [](int r) { return "proc/" + std::to_string(r); };
  impl_->peers.assign(n, Peer{});
  impl_->peers[me] = Peer{process_key(), host_name(), listen_address(attr)};
  // Note [Rendezvous generations]
  const std::string root = "cohort/" + options.run_id();
  // Closes the store's generation unless a rank already has, with a key the ranks leave behind.
  auto close_generation = [&](const std::string& why) noexcept {
    try {
      const std::string key = impl_->store->prefix() + RendezvousStore::kClosed;
      claim(key, std::vector<char>(why.begin(), why.end()), /*kept=*/true);  // false: another rank closed it
    } catch (const std::exception&) {  // the store cannot be written: the ranks waiting there time out
    }
  };
  int generation = first_open_generation(check, root, 0);
  for (int hop = 0;; ++hop) {
    impl_->store = std::make_unique<RendezvousStore>(*impl_->base, check, root + "/" + std::to_string(generation),
                                                     timeout());
    try {
      if (n > 1 && !claim(impl_->store->prefix() + proc_key(me), impl_->peers[me].bytes(), /*kept=*/false)) {
        const Peer before = Peer::parse(impl_->store->get(proc_key(me)));
        const Peer& mine = impl_->peers[me];
        if (same_host(before.process, mine.process) && !has_exited(before.process, mine.process))
          throw CommError(detail::str("ProcessGroupGloo: rank ", me, " of ", n, " through ", options.store(),
                                      " (run id \"", options.run_id(), "\") is taken: process ",
                                      before.process.substr(before.process.rfind('/') + 1),
                                      " on this host joined as it; hint: give every process its own RANK, or "
                                      "another run id (COHORT_RUN_ID)"));
        throw StaleGeneration(detail::str("rank ", me, "'s key of an earlier attempt (process ", escape_text(before.process),
                                          " on ", escape_text(before.host), ") is still in the store"));
      }
      for (int r = 0; r < n; ++r) {
        if (r == me || !impl_->store->has({proc_key(r)})) continue;
        const Peer peer = Peer::parse(impl_->store->get(proc_key(r)));
        if (has_exited(peer.process, impl_->peers[me].process))
          throw StaleGeneration(detail::str("rank ", r, "'s key of an earlier attempt (process ",
                                            escape_text(peer.process), ", which has exited) is still in the store"));
      }
      impl_->context = std::make_shared<gloo::rendezvous::Context>(me, n);
      impl_->context->setTimeout(timeout());
      impl_->context->connectFullMesh(*impl_->store, impl_->device);
      for (int r = 0; r < n; ++r)
        if (r != me) impl_->peers[r] = Peer::parse(impl_->store->get(proc_key(r)));
      // Everyone has read everyone's keys: they can be deleted for the next run.
      run_barrier(timeout());
      break;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string what = e.what();
      // An address that refuses connections was published by a process that has gone: an earlier attempt's.
      const bool stale = dynamic_cast<const StaleGeneration*>(&e) != nullptr ||
                         what.find("Connection refused") != std::string::npos || impl_->store->closed_as_stale();
      if (stale && hop + 1 < kMaxGenerationHops) {
        close_generation("stale: " + what);
        impl_->context.reset();
        delete_keys();
        generation = first_open_generation(check, root, generation + 1);
        continue;
      }
      close_generation("failed: rank " + std::to_string(me) + ": " + what);
      std::vector<int> missing;
      for (int r = 0; r < n; ++r)
        if (r != me && !impl_->store->surely_has(proc_key(r))) missing.push_back(r);
      std::string absent;
      for (size_t i = 0; i < missing.size() && i < 16; ++i) absent += (i ? ", " : "") + std::to_string(missing[i]);
      if (missing.size() > 16) absent += ", ... (" + std::to_string(missing.size()) + " in all)";
      std::string hint =
          stale ? "; hint: earlier attempts with this store and run id keep being killed during their rendezvous; "
                  "use another run id (COHORT_RUN_ID)"
          : missing.empty() ? "; hint: start all " + std::to_string(n) + " ranks with the same store and run id"
                            : "; hint: start every node, with the same store and run id, within the timeout";
      throw CommError(detail::str(
          "ProcessGroupGloo: rendezvous of rank ", me, " of ", n, " through ", options.store(), " (run id \"",
          options.run_id(), "\") failed within ", timeout().count(), " ms: ",
          missing.empty() ? "" : (missing.size() == 1 ? "rank " : "ranks ") + absent + " never arrived; ", what, hint));
    }
  }
  delete_keys();
}

ProcessGroupGloo::~ProcessGroupGloo() { shutdown(); }

void ProcessGroupGloo::delete_keys() noexcept {
  try {
    if (impl_->file) impl_->file->delete_keys();
    if (impl_->redis) impl_->redis->delete_keys();
  } catch (const std::exception&) {  // best effort: a key left behind only makes a retry fail clearly
  }
}

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
    case kBFloat16: set_output<BFloat16>(opts, data, count, op); break;
    case kHalf: set_output<Half>(opts, data, count, op); break;
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
// connected), so a rank on this host is found by its process instead: a peer whose process has exited.
// A rank on another host is found by the address's IP, which is its host's either way.
std::string ProcessGroupGloo::describe_failure(const std::string& message) const {
  const Peer& mine = impl_->peers[rank()];
  std::string dead;
  for (int r = 0; r < world_size(); ++r)
    if (r != rank() && has_exited(impl_->peers[r].process, mine.process))
      dead += (dead.empty() ? "" : ", ") + std::to_string(r);
  if (!dead.empty()) return "peer rank " + dead + " exited";
  static const std::regex kAddress(R"(\[([0-9A-Fa-f:.]+)\]:[0-9]+)");
  for (std::sregex_iterator m(message.begin(), message.end(), kAddress), end; m != end; ++m) {
    const std::string ip = (*m)[1];
    std::string ranks, host;
    int count = 0;
    for (int r = 0; r < world_size(); ++r) {
      const Peer& p = impl_->peers[r];
      if (r == rank() || p.address != ip || same_host(p.process, mine.process)) continue;
      ranks += (count++ ? ", " : "") + std::to_string(r);
      host = p.host;
    }
    if (count > 0)
      return "lost the connection to host " + (host.empty() ? ip : host + " (" + ip + ")") + ", which runs rank" +
             (count > 1 ? "s " : " ") + ranks;
  }
  if (message.find("Timed out") != std::string::npos) return "a peer did not answer in time";
  return "";
}

}  // namespace cohort::distributed
