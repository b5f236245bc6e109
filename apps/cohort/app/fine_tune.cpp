// Initial weights from a file and frozen parameters, for fine-tuning runs.
#include "app/fine_tune.h"

#include <filesystem>
#include <ostream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/io/safetensors.h"
#include "cohort/io/torch_file.h"

#include "app/config.h"
#include "app/run_checkpoint.h"

namespace cohort::app {

namespace fs = std::filesystem;

namespace {

// The weights of `file` (see init_from) and, when it is a cohort checkpoint, the model it trained.
struct Weights {
  nn::StateDict tensors;
  std::string model;  // "" for a file of plain weights
};

// A PyTorch file's "module." prefix (a model saved inside DataParallel) is removed, and
// `stripped_prefix` says so.
Weights read_weights(const std::string& file, std::string& stripped_prefix) {
  std::error_code ec;
  const bool is_dir = fs::is_directory(file, ec);
  if (!is_dir && fs::path(file).extension() != ".safetensors")
    return {io::load_pytorch_state_dict(file, &stripped_prefix), ""};
  // A training checkpoint is read as `--resume` reads it: verified whole, its weights finite.
  if (is_dir || io::load_safetensors_metadata(file).count("cohort.run")) {
    const Checkpoint checkpoint = read_checkpoint(file, /*talk=*/false);
    nn::StateDict model;
    // The run's result: the moving average when it kept one (--ema), as eval and export use.
    const std::string prefix = checkpoint.config.ema > 0 ? "ema/" : "model/";
    for (const auto& item : io::load_safetensors(checkpoint.path))
      if (item.key().rfind(prefix, 0) == 0) model.insert(item.key().substr(prefix.size()), item.value());
    return {model, checkpoint.config.model};
  }
  return {io::load_safetensors(file), ""};
}

// The first floating-point tensor of `weights` holding a NaN or an infinity: "name (element i: value)".
// Every floating dtype is looked at: a PyTorch file may hold bfloat16 or float16 weights.
std::string first_non_finite_weight(const nn::StateDict& weights) {
  for (const auto& item : weights) {
    if (!item.value().is_floating_point()) continue;
    if (auto bad = first_non_finite(item.value().detach().to(kFloat64).contiguous()))
      return cohort::detail::str("'", escape_text(item.key()), "' (element ", bad->first, ": ", bad->second, ")");
  }
  return "";
}

// Up to four names and how many more.
std::string some_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 4; ++i) out += (i ? ", " : "") + escape_text(names[i]);
  if (names.size() > 4) out += cohort::detail::str(" and ", names.size() - 4, " more");
  return out;
}

// Refuses weights whose names are not the model's, saying whose they look like: --init-from takes
// the weights of the same architecture (tensors of another shape aside).
void check_names(const nn::StateDict& mine, const Weights& weights, const std::string& model_name,
                 const std::string& file) {
  std::vector<std::string> missing, unexpected;
  for (const auto& item : mine)
    if (!weights.tensors.contains(item.key())) missing.push_back(item.key());
  for (const auto& item : weights.tensors)
    if (!mine.contains(item.key())) unexpected.push_back(item.key());
  if (missing.empty() && unexpected.empty()) return;
  std::string whose = weights.model.empty()
                          ? cohort::detail::str("its ", weights.tensors.size(), " tensors are named like ",
                                                some_of(weights.tensors.keys()))
                          : "it is a checkpoint of a " + weights.model;
  throw Error(cohort::detail::str(
      "cohort train: --init-from ", escape_text(file), ": the file does not hold ", model_name, " weights: ", whose,
      missing.empty() ? "" : "; the model's " + some_of(missing) + " are not in the file",
      unexpected.empty() ? "" : "; the file's " + some_of(unexpected) + " are not in the model",
      "; hint: --init-from needs the weights of the model being trained, under the same names (a tensor of another "
      "shape keeps its initial value)",
      weights.model.empty() ? "" : "; these start a run with --model " + weights.model));
}

bool glob(const char* p, const char* s) {
  for (; *p; ++p, ++s) {
    if (*p == '*') {
      for (const char* rest = s;; ++rest) {
        if (glob(p + 1, rest)) return true;
        if (!*rest) return false;
      }
    }
    if (!*s || (*p != '?' && *p != *s)) return false;
  }
  return !*s;
}

std::vector<std::string> split_patterns(const std::string& patterns) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= patterns.size()) {
    const size_t comma = patterns.find(',', start);
    const size_t end = comma == std::string::npos ? patterns.size() : comma;
    if (end > start) out.push_back(patterns.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> init_from(nn::Module& model, const std::string& file, std::ostream& log,
                                   const std::string& model_name) {
  Weights weights;
  std::string stripped;
  try {
    weights = read_weights(file, stripped);
  } catch (const Error& e) {
    throw Error(cohort::detail::str("cohort train: --init-from ", escape_text(file), ": ", e.what()));
  }
  if (!stripped.empty())
    log << "cohort: --init-from " << escape_text(file) << ": every key starts with '" << stripped
        << "' (a model saved inside DataParallel or DistributedDataParallel); stripped '" << stripped
        << "' from the " << weights.tensors.size() << " names\n";
  nn::StateDict mine = model.named_parameters();
  for (const auto& item : model.named_buffers()) mine.insert(item.key(), item.value());
  check_names(mine, weights, model_name.empty() ? model.name() : model_name, file);
  const std::string bad = first_non_finite_weight(weights.tensors);
  COHORT_CHECK(bad.empty(), "cohort train: --init-from ", escape_text(file), ": tensor ", bad,
               " is not finite; weights that are not finite cannot start a run");
  // Tensors of another shape keep their initial values.
  std::vector<std::string> skipped;
  nn::StateDict usable;
  for (const auto& item : weights.tensors) {
    const Tensor* own = mine.find(item.key());
    if (own->sizes() != item.value().sizes()) {
      log << "cohort: --init-from " << escape_text(file) << ": " << escape_text(item.key()) << " has shape "
          << item.value().sizes() << " in the file and " << own->sizes()
          << " in the model; it keeps its initial value\n";
      skipped.push_back(item.key());
      usable.insert(item.key(), own->clone());
      continue;
    }
    usable.insert(item.key(), item.value());
  }
  try {
    model.load_state_dict(usable, /*strict=*/true);
  } catch (const Error& e) {
    throw Error(cohort::detail::str("cohort train: --init-from ", escape_text(file), ": ", e.what()));
  }
  return skipped;
}

bool matches_freeze(const std::string& name, const std::string& patterns) {
  for (const std::string& p : split_patterns(patterns))
    if (glob(p.c_str(), name.c_str())) return true;
  return false;
}

std::vector<Tensor> freeze(nn::Module& model, const std::string& patterns, const std::vector<std::string>& not_loaded) {
  const nn::StateDict params = model.named_parameters();
  if (patterns.empty()) return params.values();
  for (const std::string& p : split_patterns(patterns)) {
    bool any = false;
    for (const auto& item : params) any = any || matches_freeze(item.key(), p);
    if (!any)
      throw UsageError(cohort::detail::str("cohort train: --freeze pattern '", escape_text(p),
                                           "' matches no parameter; hint: the names are like ",
                                           params.is_empty() ? "" : params.keys().front(), " (globs: * and ?)"));
  }
  // Every check before the first change: a refused pattern leaves the model as it was.
  std::vector<Tensor> trainable, frozen;
  for (const auto& item : params) {
    if (!matches_freeze(item.key(), patterns)) {
      trainable.push_back(item.value());
      continue;
    }
    for (const std::string& name : not_loaded)
      if (name == item.key())
        throw UsageError(cohort::detail::str("cohort train: --freeze '", escape_text(patterns), "' would freeze ",
                                             name, ", which --init-from could not load (another shape) and would "
                                             "stay at its random initial value"));
    frozen.push_back(item.value());
  }
  if (trainable.empty())
    throw UsageError(cohort::detail::str("cohort train: --freeze '", escape_text(patterns),
                                         "' freezes every parameter; nothing would train"));
  for (const Tensor& p : frozen) p.requires_grad_(false);
  return trainable;
}

}  // namespace cohort::app
