// init_process_group: torchrun-style environment variables -> ProcessGroupOptions -> a process group.
#include "cohort/distributed/init.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>

extern char** environ;

namespace cohort::distributed {

namespace {

std::mutex g_mutex;
std::shared_ptr<ProcessGroup> g_default;

const std::string* find(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

const std::string& require(const std::map<std::string, std::string>& env, const std::string& name,
                           const std::string& why) {
  const std::string* v = find(env, name);
  COHORT_CHECK(v, "init_process_group: the environment variable ", name, " is not set", why,
               "; hint: start every rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (cohort launch, "
               "torchrun style)");
  return *v;
}

int parse_int(const std::string& name, const std::string& value, int lo, int hi) {
  size_t used = 0;
  long v = -1;
  try {
    v = std::stol(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  COHORT_CHECK(used == value.size() && v >= lo && v <= hi, "init_process_group: ", name, "=\"", value,
               "\" is not an integer in [", lo, ", ", hi, "]");
  return static_cast<int>(v);
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

bool is_this_host(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1" || addr == this_host();
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace

ProcessGroupOptions options_from_env(const std::map<std::string, std::string>& env) {
  int world = parse_int("WORLD_SIZE", require(env, "WORLD_SIZE", ""), 1, 1 << 20);
  int rank = parse_int("RANK", require(env, "RANK", ""), 0, 1 << 20);
  COHORT_CHECK(rank < world, "init_process_group: RANK=", rank, " is not below WORLD_SIZE=", world);
  ProcessGroupOptions options(rank, world);
  if (const std::string* id = find(env, "COHORT_RUN_ID")) options.run_id(*id);
  else if (const std::string* tid = find(env, "TORCHELASTIC_RUN_ID")) options.run_id(*tid);
  if (world == 1) return options;

  bool local = false;
  if (const std::string* store = find(env, "COHORT_STORE")) {
    options.store(*store);
  } else {
    const char* why = " (needed when COHORT_STORE is not)";
    const std::string& addr = require(env, "MASTER_ADDR", why);
    int port = parse_int("MASTER_PORT", require(env, "MASTER_PORT", why), 1, 65535);
    COHORT_CHECK(is_this_host(addr), "init_process_group: MASTER_ADDR=", addr,
                 " is another host, and Gloo 0.5 has no TCP store to meet there; hint: set COHORT_STORE to a "
                 "directory every host shares (file:/shared/rdzv) or a Redis server (redis://host:port)");
    const std::string* tmp = find(env, "TMPDIR");
    options.store("file:" + (tmp ? *tmp : std::string("/tmp")) + "/cohort-rendezvous-" + std::to_string(port));
    local = true;
  }
  if (const std::string* iface = find(env, "GLOO_SOCKET_IFNAME")) options.iface(*iface);
  else options.hostname(local ? "127.0.0.1" : this_host());
  return options;
}

std::shared_ptr<ProcessGroup> init_process_group(Timeout timeout) {
  ProcessGroupOptions options = options_from_env(environment()).timeout(timeout);
  std::shared_ptr<ProcessGroup> pg;
  if (options.world_size() == 1) pg = std::make_shared<LocalProcessGroup>(timeout);
  else pg = std::make_shared<ProcessGroupGloo>(options);
  std::lock_guard<std::mutex> l(g_mutex);
  g_default = pg;
  return pg;
}

std::shared_ptr<ProcessGroup> default_group() {
  std::lock_guard<std::mutex> l(g_mutex);
  return g_default;
}

bool is_initialized() { return default_group() != nullptr; }

void destroy_process_group() {
  std::lock_guard<std::mutex> l(g_mutex);
  g_default.reset();
}

}  // namespace cohort::distributed
