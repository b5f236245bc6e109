// Unknown flags, answered as a person would: the nearest known flag of the command, before CLI11's
// parse would say only "The following arguments were not expected".
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cohort::app {

// Levenshtein distance: insertions, deletions and substitutions of one character each.
size_t edit_distance(std::string_view a, std::string_view b);

// Throws UsageError for the first "--name" in `args` (the words after the command's name) that
// `command` has no option for, naming the nearest one within a third of its length (at least 2 edits).
void check_flags(const CLI::App& command, const std::vector<std::string>& args);

// A path to show in an example of --dataset NAME:PATH ("photos" for folder, "table.csv" for csv, the
// Debian fortunes for text).
const char* dataset_path_example(std::string_view dataset);

// Refuses, for a new run of `cohort train` (`config` as parsed, its dataset without ":PATH"), the
// flags given on the command line that its dataset does not use (--seq-len but for text, --image-size
// and --val-dir but for folder, --val-split but for folder and csv), and a dataset that needs a path
// given none. Throws UsageError.
struct TrainConfig;
void check_dataset_flags(const CLI::App& train, const TrainConfig& config);

// A command's --threads: 0 (one per core) to kMaxThreads, set as the intra-op thread count. Throws
// UsageError naming `command` for any other value.
void use_threads_flag(int threads, std::string_view command);

}  // namespace cohort::app
