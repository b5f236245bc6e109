// The run directory: lock, identity, a new run's checks, dead processes' temp files (run_dir.h).
#include "app/run_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/io/file.h"

namespace cohort::app {

namespace fs = std::filesystem;

const std::vector<std::string> kRunFiles = {"metrics.jsonl", "metrics.jsonl.tmp", "report.html", "samples.png",
                                            "eval.json",     "run.json",          "checkpoints"};

namespace {

// The pid of a temp file "<name>.tmp.<pid>", or -1 for other names.
pid_t temp_file_pid(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos) return -1;
  const std::string digits = name.substr(at + 5);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return static_cast<pid_t>(std::stol(digits));
}

// A run file, or the temp file of one ("report.html.tmp.123").
bool is_run_file(const std::string& name) {
  for (const std::string& file : kRunFiles)
    if (name == file || (name.rfind(file + ".tmp.", 0) == 0 && temp_file_pid(name) > 0)) return true;
  return false;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void remove_entry(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);  // a symlink itself, never its target
  COHORT_CHECK(!ec, "cohort train: --overwrite cannot remove ", path.string(), ": ", ec.message());
}

// The run files in `dir`: checkpoints/ loses the files a run writes there (step-*) and goes when
// nothing else is left in it.
void remove_run_files(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_run_file(name)) continue;
    if (name == "checkpoints" && entry.symlink_status().type() == fs::file_type::directory) {
      for (const auto& inner : fs::directory_iterator(entry.path()))
        if (inner.path().filename().string().rfind("step-", 0) == 0) remove_entry(inner.path());
      if (fs::is_empty(entry.path())) remove_entry(entry.path());
      continue;
    }
    remove_entry(entry.path());
  }
  COHORT_CHECK(!ec, "cohort train: cannot list ", dir.string(), ": ", ec.message());
}

}  // namespace

RunDirLock::RunDirLock(const fs::path& dir) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  COHORT_CHECK(!ec, "cohort train: cannot create the output directory ", dir.string(), ": ", ec.message());
  const fs::path path = dir / kLockFile;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  COHORT_CHECK(fd_ >= 0, "cohort train: cannot open the lock file ", path.string(), ": ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    COHORT_CHECK(err == EWOULDBLOCK, "cohort train: cannot lock ", path.string(), ": ", std::strerror(err));
    std::string holder = read_text(path);
    while (!holder.empty() && std::isspace(static_cast<unsigned char>(holder.back()))) holder.pop_back();
    throw Error("cohort train: " + dir.string() + " is in use by another cohort run (pid " +
                (holder.empty() ? std::string("unknown") : escape_text(holder)) + ", which holds " + path.string() +
                "); hint: wait for it to end or stop it, or choose another --out");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd_);
    throw Error("cohort train: cannot write the lock file " + path.string() + ": " + std::strerror(err));
  }
}

void RunDirLock::check_still_held() const {
  const fs::path path = dir_ / kLockFile;
  struct stat held {}, now {};
  const bool same = ::fstat(fd_, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
                    held.st_ino == now.st_ino;
  if (!same)
    throw Error("cohort train: " + escape_text(dir_.string()) + " is no longer this run's directory (its lock file " +
                escape_text(path.string()) + " was removed or replaced while the run was training), so nothing more "
                "is written there; hint: do not delete the directory of a live run, stop the run first");
}

RunDirLock::~RunDirLock() {
  // The file stays: removing it while another process waits to open it would let two runs lock two
  // different files of the same name.
  if (fd_ >= 0) ::close(fd_);
}

void prepare_new_run_dir(const fs::path& dir, bool overwrite) {
  std::vector<std::string> held;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename() != kLockFile) held.push_back(entry.path().filename().string());
  COHORT_CHECK(!ec, "cohort train: cannot list the output directory ", dir.string(), ": ", ec.message());
  if (held.empty()) return;
  if (overwrite) {
    remove_run_files(dir);
    return;
  }
  std::sort(held.begin(), held.end());
  std::ostringstream names;
  for (size_t i = 0; i < held.size() && i < 5; ++i) names << (i ? ", " : "") << held[i];
  if (held.size() > 5) names << ", ...";
  throw Error("cohort train: the output directory " + dir.string() + " is not empty (it holds " + names.str() +
              "); hint: continue the run in it with --resume " + dir.string() +
              ", or start a new run there with --overwrite (which first deletes the files a cohort run writes: " +
              "metrics.jsonl, checkpoints/, report.html, samples.png, eval.json, run.json), or choose another --out");
}

fs::path first_missing_directory(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal(), missing;
  if (ec) return {};
  if (!p.has_filename()) p = p.parent_path();  // "a/b/" names a/b
  while (!p.empty() && !fs::exists(fs::symlink_status(p, ec))) {
    missing = p;
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return missing;
}

void remove_failed_new_run(const fs::path& dir, const fs::path& created, std::shared_ptr<RunDirLock>& lock) {
  std::error_code ec;
  for (const char* name : {kRunFile, "metrics.jsonl", "metrics.jsonl.tmp"}) fs::remove(dir / name, ec);
  fs::remove(dir / "checkpoints", ec);  // only when empty
  if (created.empty()) return;
  fs::remove(dir / kLockFile, ec);
  lock.reset();
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  for (;;) {
    if (!fs::remove(p, ec) || ec) return;  // not empty: something else lives there
    if (p == created || p == p.parent_path()) return;
    p = p.parent_path();
  }
}

void write_run_identity(const fs::path& dir, const RunIdentity& identity) {
  const nlohmann::json j = {{"run_id", identity.run_id}, {"job", identity.job}};
  io::write_file(dir / kRunFile, j.dump() + "\n");
}

std::optional<RunIdentity> read_run_identity(const fs::path& dir) {
  const fs::path path = dir / kRunFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(read_text(path), nullptr, /*allow_exceptions=*/false);
  COHORT_CHECK(j.is_object() && j.contains("run_id") && j["run_id"].is_string() && j.contains("job") &&
                   j["job"].is_string(),
               "cohort train: ", path.string(), " is malformed (expected {\"run_id\": \"...\", \"job\": \"...\"})");
  return RunIdentity{j["run_id"].get<std::string>(), j["job"].get<std::string>()};
}

std::string new_run_id() {
  std::random_device device;
  char buf[33];
  for (int i = 0; i < 4; ++i) std::snprintf(buf + 8 * i, 9, "%08x", static_cast<unsigned>(device()));
  return buf;
}

std::string job_id() {
  const char* v = std::getenv("COHORT_JOB_ID");
  return v ? v : "";
}

fs::path run_dir_of(const fs::path& path) {
  std::error_code ec;
  COHORT_CHECK(fs::exists(path, ec), "cohort: ", path.string(),
               " does not exist (expected a run directory or a checkpoint file)");
  if (fs::is_directory(path, ec)) return path;
  const fs::path parent = path.parent_path();
  COHORT_CHECK(parent.filename() == "checkpoints", "cohort train: --resume ", path.string(),
               " is not in a run directory's checkpoints/ folder, so there is no run to continue; hint: give the "
               "run directory, or a file in <run>/checkpoints/");
  return parent.parent_path().empty() ? fs::path(".") : parent.parent_path();
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

int remove_dead_temp_files(const fs::path& dir) {
  int removed = 0;
  for (const fs::path& folder : {dir, dir / "checkpoints"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const pid_t pid = temp_file_pid(entry.path().filename().string());
      if (pid <= 0 || pid == ::getpid() || process_alive(pid)) continue;
      if (entry.symlink_status().type() != fs::file_type::regular) continue;
      std::error_code gone;
      removed += fs::remove(entry.path(), gone);
    }
  }
  return removed;
}

}  // namespace cohort::app
