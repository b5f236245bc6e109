// The non-template parts of libtorch's StatelessDataLoader: option checks and the errors that name
// a batch, so that the header stays declarations and the loop.
#include "cohort/data/stateless_dataloader.h"

#include <algorithm>
#include <sstream>

#include "cohort/core/generator.h"
#include "cohort/core/threads.h"

namespace cohort::data::detail {

namespace {
// "[3, 7, 1, 9, ... (64 indices)]": enough to find the batch, short enough for a message.
std::string describe(const std::vector<size_t>& request) {
  std::ostringstream s;
  s << "[";
  const size_t shown = std::min<size_t>(request.size(), 8);
  for (size_t i = 0; i < shown; ++i) s << (i ? ", " : "") << request[i];
  if (shown < request.size()) s << ", ... (" << request.size() << " indices)";
  s << "]";
  return s.str();
}
}  // namespace

uint64_t check_loader_options(const DataLoaderOptions& options) {
  COHORT_CHECK(options.batch_size() >= 1, "make_data_loader: batch_size must be at least 1, got ", options.batch_size());
  COHORT_CHECK(options.workers() >= 0 && options.workers() <= kMaxThreads, "make_data_loader: workers must be in [0, ",
               kMaxThreads, "], got ", options.workers(), "; hint: 0 loads in the caller's thread");
  COHORT_CHECK(options.workers() == 0 || options.max_jobs().value_or(1) >= 1,
               "make_data_loader: max_jobs must be at least 1 with ", options.workers(),
               " workers, got 0; hint: leave it unset for 2 * workers");
  COHORT_CHECK(options.prefetch_factor() >= 1, "make_data_loader: prefetch_factor must be at least 1, got ",
               options.prefetch_factor());
  auto refuse = [](const char* option, const char* instead) {
    return cohort::detail::str("make_data_loader: DataLoaderOptions::", option,
                               " is an option of cohort's DataLoader, which make_data_loader does not use; hint: ",
                               instead);
  };
  if (options.shuffle())
    throw Error(refuse("shuffle", "the sampler decides the order (make_data_loader's default is RandomSampler)"));
  if (options.sampler())
    throw Error(refuse("sampler", "pass a torch::data::samplers sampler: make_data_loader(dataset, sampler, options)"));
  if (options.transform())
    throw Error(refuse("transform", "transform the dataset instead: dataset.map(transform)"));
  return options.seed() ? *options.seed() : default_generator().next_u64();
}

void throw_batch_error(int64_t batch, int64_t epoch, const std::vector<size_t>& request) {
  std::string what = "an exception that is not a std::exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::throw_with_nested(Error(cohort::detail::str(
      "DataLoader: loading batch ", batch, " of epoch ", epoch,
      request.empty() ? std::string() : " (dataset indices " + describe(request) + ")", " failed: ", what)));
}

void check_request_indices(const std::vector<size_t>& request, optional<size_t> dataset_size, int64_t batch,
                           int64_t epoch) {
  if (!dataset_size) return;
  for (size_t index : request)
    COHORT_CHECK(index < *dataset_size, "DataLoader: the sampler gave index ", index, " in batch ", batch,
                 " of epoch ", epoch, " for a dataset of size ", *dataset_size,
                 "; hint: build the sampler with the dataset's size()");
}

void throw_empty_request(int64_t batch, int64_t epoch) {
  throw Error(cohort::detail::str("DataLoader: the sampler gave an empty batch request for batch ", batch,
                                  " of epoch ", epoch, "; hint: next() must return nullopt once the epoch is over"));
}

void throw_unsized_dataset() {
  throw Error(
      "make_data_loader: the dataset's size() is nullopt, but the sampler is built from the dataset's size; "
      "hint: return the size from size(), or pass a sampler: make_data_loader(dataset, sampler, options)");
}

}  // namespace cohort::data::detail
