// ProcessGroupGloo: the ProcessGroup of several processes, on Gloo's TCP transport (as PyTorch's "gloo"
// backend on CPUs). Ranks meet through a store, then connect to each other directly.
//
//   distributed::ProcessGroupGloo pg(distributed::ProcessGroupOptions(rank, 2).store("file:/tmp/rdzv"));
//
// Stores (Debian's Gloo 0.5 has no TCP store, so MASTER_ADDR:MASTER_PORT cannot be one; see README.md):
//   "file:/path"         a directory every rank can read and write (one host, or a shared file system);
//                        created if missing; each rank deletes its keys once all have connected, so the
//                        directory can be reused by the next run
//   "redis://host:port"  a Redis server every rank can reach; its keys are deleted too once all have connected
// Keys live under "cohort/<run_id>/", so runs with different ids can share a store.
//
// Construction is collective: it returns once every rank has connected, or throws CommError after the
// timeout naming the store and the ranks that never arrived. Each collective has the same timeout unless
// given its own. A rank that dies is noticed at once by the ranks that talk to it (TCP closes its
// sockets); the error names it, on one host by its process ("peer rank r exited"), on another by its
// host ("lost the connection to host h (ip), which runs rank r"; Gloo's own message names only a
// socket). A rank that stops answering is reported when the timeout expires ("a peer did not answer in
// time"). The process ignores SIGPIPE from then on (a write to a dead peer must be an error, not the end
// of the process), unless the program installed a handler.
#pragma once

#include <memory>
#include <string>

#include "cohort/distributed/process_group.h"

namespace cohort::distributed {

struct ProcessGroupOptions {
  ProcessGroupOptions(int rank = 0, int world_size = 1) : rank_(rank), world_size_(world_size) {}
  ProcessGroupOptions& rank(int r) { rank_ = r; return *this; }
  ProcessGroupOptions& world_size(int n) { world_size_ = n; return *this; }
  ProcessGroupOptions& store(std::string s) { store_ = std::move(s); return *this; }
  // The address this rank listens on for its peers: a hostname or IP (default: loopback, one host)...
  ProcessGroupOptions& hostname(std::string h) { hostname_ = std::move(h); return *this; }
  // ...or a network interface ("eth0"), as PyTorch's GLOO_SOCKET_IFNAME; takes precedence over hostname.
  ProcessGroupOptions& iface(std::string i) { iface_ = std::move(i); return *this; }
  ProcessGroupOptions& timeout(Timeout t) { timeout_ = t; return *this; }
  ProcessGroupOptions& run_id(std::string id) { run_id_ = std::move(id); return *this; }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  const std::string& store() const { return store_; }
  const std::string& hostname() const { return hostname_; }
  const std::string& iface() const { return iface_; }
  Timeout timeout() const { return timeout_; }
  const std::string& run_id() const { return run_id_; }

 private:
  int rank_, world_size_;
  std::string store_;  // required
  std::string hostname_ = "127.0.0.1";
  std::string iface_;
  Timeout timeout_ = std::chrono::minutes(5);  // a dead peer is reported at once; a silent one after this
  std::string run_id_ = "default";
};

class ProcessGroupGloo : public ProcessGroup {
 public:
  explicit ProcessGroupGloo(const ProcessGroupOptions& options);
  ~ProcessGroupGloo() override;
  std::string backend() const override { return "gloo"; }

  struct Impl;

 protected:
  void run_all_reduce(void* data, int64_t count, DType dtype, ReduceOp op, Timeout timeout) override;
  void run_broadcast(void* data, int64_t nbytes, int root, Timeout timeout) override;
  void run_all_gather(const void* in, void* out, int64_t nbytes, Timeout timeout) override;
  void run_barrier(Timeout timeout) override;
  std::string describe_failure(const std::string& backend_message) const override;

 private:
  void delete_keys() noexcept;  // the rendezvous keys this rank wrote
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::distributed
