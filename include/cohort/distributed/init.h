// init_process_group: the process group of a program started once per rank, from the environment that
// torchrun (and `cohort launch`) set.
//
//   auto pg = distributed::init_process_group();   // also becomes default_group()
//   auto ddp = std::make_shared<distributed::DistributedDataParallel<Net>>(net);
//
// Variables:
//   RANK, WORLD_SIZE      required; 0 <= RANK < WORLD_SIZE. WORLD_SIZE=1 gives a LocalProcessGroup.
//   COHORT_STORE          where the ranks meet: file:/path or redis://host:port (gloo.h). When unset,
//                         MASTER_ADDR must name this host (localhost, 127.x.x.x, ::1 or its hostname) and
//                         the store is the directory $TMPDIR/cohort-rendezvous-<MASTER_PORT> (default /tmp):
//                         Debian's Gloo has no TCP store, so across hosts give COHORT_STORE.
//   MASTER_ADDR, MASTER_PORT  required when COHORT_STORE is unset (MASTER_PORT then only names the store).
//   GLOO_SOCKET_IFNAME    the network interface to listen on; else 127.0.0.1 when MASTER_ADDR is this host
//                         and no COHORT_STORE is given, else this host's name.
//   COHORT_RUN_ID (or TORCHELASTIC_RUN_ID)  separates runs that share a store (default "default").
// Throws cohort::Error naming the variable and its value when one is missing or invalid, CommError when
// the rendezvous fails (init_process_group waits up to the timeout for every rank).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "cohort/distributed/gloo.h"
#include "cohort/distributed/process_group.h"

namespace cohort::distributed {

std::shared_ptr<ProcessGroup> init_process_group(Timeout timeout = std::chrono::minutes(5));

// The options init_process_group would use, from `env` (the environment variables above); exposed for tests
// and launchers.
ProcessGroupOptions options_from_env(const std::map<std::string, std::string>& env);

// The group made by the last init_process_group, or nullptr.
std::shared_ptr<ProcessGroup> default_group();
bool is_initialized();
// Forgets the default group (its connections close when the last user drops it).
void destroy_process_group();

}  // namespace cohort::distributed
