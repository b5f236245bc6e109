// The run directory (--out) of `cohort train`: its lock, its identity, what a new run does with a
// directory that is not empty, and the temp files that killed processes leave in it.
//
// Note [Run directories]
// A run directory holds one run. A new run refuses a directory that holds anything (but the lock
// file), naming the two ways forward: --resume DIR continues the run in it, --overwrite first removes
// what a cohort run writes there (kRunFiles; anything else is left alone, and a symlink is removed,
// never followed). The run's identity is run.json: a random run id, stored in every checkpoint too,
// and the launch that started it ($COHORT_JOB_ID, set by `cohort launch` for all its attempts), so a
// restarted attempt resumes only a run that its own launch started (Note [Launch: restarts]). While a
// run lives it holds an flock on cohort.lock with its pid written in it, so a second run into the same
// directory fails naming that pid; the kernel releases the lock however the process ends. Under
// `cohort launch` only rank 0 locks and writes the directory. A directory removed (or its lock file
// replaced) under a live run may be taken by a new run at once; so before each checkpoint the run
// checks that the lock file it holds is still the directory's, and stops without writing if not.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cohort::app {

inline constexpr const char* kLockFile = "cohort.lock";
inline constexpr const char* kRunFile = "run.json";

// What a run writes in its directory; --overwrite removes these (and their temp files) only.
extern const std::vector<std::string> kRunFiles;

// Holds <dir>/cohort.lock (creating dir and file) for its lifetime. Throws a cohort::Error naming the
// pid of the process that holds it.
class RunDirLock {
 public:
  explicit RunDirLock(const std::filesystem::path& dir);
  ~RunDirLock();
  // Throws a cohort::Error when <dir>/cohort.lock is no longer the file this lock holds (the
  // directory was removed, moved or taken over), so that nothing more is written into another run.
  void check_still_held() const;
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
};

struct RunIdentity {
  std::string run_id;
  std::string job;  // $COHORT_JOB_ID of the launch that started the run; empty without cohort launch
};

// Readies `dir` for a new run (Note [Run directories]): refuses one that is not empty unless
// `overwrite`, which removes the run files in it first. Throws a cohort::Error naming the directory.
void prepare_new_run_dir(const std::filesystem::path& dir, bool overwrite);

// The outermost directory of `dir` (made absolute) that does not exist yet, which creating `dir`
// creates; empty when `dir` exists.
std::filesystem::path first_missing_directory(const std::filesystem::path& dir);

// Undoes a new run that failed before it trained: removes what it wrote in `dir` (run.json,
// metrics.jsonl, an empty checkpoints/) and, when it created the directory (`created`, from
// first_missing_directory before the run), its lock file (releasing `lock`) and every directory from
// `dir` up to `created` that is then empty. Anything else stays, so a directory that holds a file of
// the user's is never removed. Errors are ignored: the run's own error is what the user needs to see.
void remove_failed_new_run(const std::filesystem::path& dir, const std::filesystem::path& created,
                           std::shared_ptr<RunDirLock>& lock);

// <dir>/run.json, written atomically / read (nullopt when there is none; a malformed one throws).
void write_run_identity(const std::filesystem::path& dir, const RunIdentity& identity);
std::optional<RunIdentity> read_run_identity(const std::filesystem::path& dir);

std::string new_run_id();  // 128 random bits as 32 hex digits
std::string job_id();      // $COHORT_JOB_ID, "" when unset

// The run directory that holds `path`: `path` itself when it is a directory, <run> for a file
// <run>/checkpoints/<name>. Throws naming the file when it is not in a checkpoints/ folder.
std::filesystem::path run_dir_of(const std::filesystem::path& path);

// Whether a process with this pid exists (on this machine).
bool process_alive(pid_t pid);

// Removes the temp files ("<name>.tmp.<pid>", Note [Atomic writes]) in `dir` and <dir>/checkpoints
// whose process is gone; those of a live process are left alone. Returns how many it removed.
int remove_dead_temp_files(const std::filesystem::path& dir);

}  // namespace cohort::app
