#include "app/flag_check.h"

#include <algorithm>
#include <numeric>

#include "app/config.h"
#include "cohort/core/error.h"
#include "cohort/core/threads.h"

namespace cohort::app {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

void check_flags(const CLI::App& command, const std::vector<std::string>& args) {
  std::vector<std::string> known{"help"};
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) known.push_back(name);
  for (const std::string& arg : args) {
    if (arg == "--") return;  // what follows is another program's (cohort launch -- ...)
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string nearest;
    size_t best = std::max<size_t>(2, name.size() / 3) + 1;
    for (const std::string& k : known)
      if (const size_t d = edit_distance(name, k); d < best) best = d, nearest = k;
    const std::string who = "cohort " + command.get_name();
    throw UsageError(who + ": unknown flag --" + escape_text(name) +
                     (nearest.empty() ? "" : "; did you mean --" + nearest + "?") + " ('cohort help " +
                     command.get_name() + "' lists the flags)");
  }
}

const char* dataset_path_example(std::string_view dataset) {
  return dataset == "text" ? "/usr/share/games/fortunes" : dataset == "csv" ? "table.csv" : "photos";
}

void check_dataset_flags(const CLI::App& train, const TrainConfig& config) {
  const std::string& dataset = config.dataset;
  const bool needs_path = dataset == "folder" || dataset == "csv" || dataset == "text";
  if (needs_path && config.data_dir.empty())
    throw UsageError("cohort train: --dataset " + dataset + " needs a path, e.g. --dataset " + dataset + ":" +
                     dataset_path_example(dataset));
  struct Use {
    const char* flag;
    std::vector<std::string> datasets;
    const char* otherwise;  // what decides it for the other datasets
  };
  const Use uses[] = {
      {"--seq-len", {"text"}, "it is the length of a language model's training windows"},
      {"--image-size", {"folder"}, "the built-in datasets have their own size and a table has none"},
      {"--val-dir", {"folder"}, "the other datasets have their own test split"},
      {"--val-split", {"folder", "csv"}, "the built-in datasets have their own test split and a text holds out its last tenth"},
  };
  for (const Use& use : uses) {
    if (train.count(use.flag) == 0 ||
        std::find(use.datasets.begin(), use.datasets.end(), dataset) != use.datasets.end())
      continue;
    std::string which;
    for (size_t i = 0; i < use.datasets.size(); ++i) which += (i ? " and " : "") + use.datasets[i];
    throw UsageError(cohort::detail::str("cohort train: ", use.flag, " is only for --dataset ", which, ", got --dataset ",
                                         dataset, " (", use.otherwise, "); hint: leave ", use.flag, " out"));
  }
}

void use_threads_flag(int threads, std::string_view command) {
  if (!(threads >= 0 && threads <= kMaxThreads))
    throw UsageError(cohort::detail::str(command, ": --threads must be from 0 to ", kMaxThreads, " (0 = one per core, ",
                                         core_count(), " here), got ", threads));
  set_num_threads(threads > 0 ? threads : core_count());
}

}  // namespace cohort::app
