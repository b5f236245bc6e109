// `cohort launch`: start the ranks of a distributed job on this node, like torchrun.
//
//   cohort launch --nproc-per-node 2 -- build/my_ddp_program --epochs 3
//
// Each rank runs `command` with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
// MASTER_PORT, COHORT_STORE, OMP_NUM_THREADS, COHORT_RESTART_COUNT (and COHORT_TIMEOUT when asked) in its
// environment, which distributed::ProcessGroup reads. Every line a rank prints is prefixed with
// "[rank K] ", on the stream it was printed to. When a rank fails the others are stopped, and with
// max_restarts the group starts again (COHORT_RESTART_COUNT tells the ranks which attempt they are);
// SIGINT, SIGTERM and SIGHUP are forwarded.
// Notes [Launch: processes, signals and output] and [Launch: restarts] in launch.cpp have the details.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cohort::app {

struct LaunchOptions {
  int nproc_per_node = 1;                 // ranks started on this node
  int nnodes = 1;                         // nodes in the job
  int node_rank = 0;                      // this node, 0 ≤ node_rank < nnodes
  std::string master_addr = "127.0.0.1";  // MASTER_ADDR
  int master_port = 0;                    // MASTER_PORT; 0: a free port (single node only)
  std::string store;                      // COHORT_STORE: "file:/shared/dir" or "redis://host:port";
                                          // empty: a fresh temporary directory (single node only)
  double timeout = 0;                     // COHORT_TIMEOUT in seconds, the ranks' rendezvous timeout; 0: unset
  int threads = 0;                        // OMP_NUM_THREADS per rank; 0: an OMP_NUM_THREADS already set,
                                          // else core_count() / nproc_per_node (at least 1)
  double grace = 5;                       // seconds between SIGTERM and SIGKILL when stopping ranks
  int max_restarts = 0;                   // restarts of the whole group after a rank fails (torchrun's)
  std::size_t max_line_bytes = 1 << 20;   // a longer line is split into several prefixed lines
  std::vector<std::string> command;       // program and arguments; a name without '/' is looked up in PATH
};

// Runs the job and returns the launcher's exit code: 0 when every rank exits 0 (in some attempt); the
// first failed rank's exit code, or 128 + its signal, in the last attempt; 128 + the signal when the
// launcher was interrupted; 2 for a usage error
// (bad options, a command that cannot be executed). Ranks' lines go to `out` / `err` by the stream they
// were printed to; the launcher's own messages ("launch: ...") go to `err`. Blocks until every rank has
// exited; while it runs it owns the handlers of SIGCHLD, SIGINT, SIGTERM and SIGHUP (restored on return).
int launch(const LaunchOptions& options, std::ostream& out, std::ostream& err);

// Registers the `launch` subcommand and its flags on `app`, filling `options` when parsed.
CLI::App* add_launch_command(CLI::App& app, LaunchOptions& options);

}  // namespace cohort::app
