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

// The state dict in `file`, by its kind (see init_from); a PyTorch file's "module." prefix (a model
// saved inside DataParallel) is removed, and `stripped_prefix` says so.
nn::StateDict read_weights(const std::string& file, std::string& stripped_prefix) {
  std::error_code ec;
  const bool is_dir = fs::is_directory(file, ec);
  if (!is_dir && fs::path(file).extension() != ".safetensors") return io::load_pytorch_state_dict(file, &stripped_prefix);
  const fs::path path = is_dir ? read_checkpoint(file, /*talk=*/false).path : fs::path(file);
  const nn::StateDict all = io::load_safetensors(path);
  nn::StateDict model;
  const std::string prefix = "model/";
  for (const auto& item : all)
    if (item.key().rfind(prefix, 0) == 0) model.insert(item.key().substr(prefix.size()), item.value());
  return model.is_empty() ? all : model;  // a training checkpoint's model part, or a plain state dict
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

std::vector<std::string> init_from(nn::Module& model, const std::string& file, std::ostream& log) {
  nn::StateDict weights;
  std::string stripped;
  try {
    weights = read_weights(file, stripped);
  } catch (const Error& e) {
    throw Error(cohort::detail::str("cohort train: --init-from ", escape_text(file), ": ", e.what()));
  }
  if (!stripped.empty())
    log << "cohort: --init-from " << escape_text(file) << ": every key starts with '" << stripped
        << "' (a model saved inside DataParallel or DistributedDataParallel); stripped '" << stripped
        << "' from the " << weights.size() << " names\n";
  // Tensors of another shape keep their initial values; load_state_dict checks all the names.
  nn::StateDict mine = model.named_parameters();
  for (const auto& item : model.named_buffers()) mine.insert(item.key(), item.value());
  std::vector<std::string> skipped;
  nn::StateDict usable;
  for (const auto& item : weights) {
    const Tensor* own = mine.find(item.key());
    if (own && own->sizes() != item.value().sizes()) {
      log << "cohort: --init-from " << escape_text(file) << ": " << escape_text(item.key()) << " has shape "
          << item.value().sizes() << " in the file and " << own->sizes()
          << " in the model; it keeps its initial value\n";
      skipped.push_back(item.key());
      continue;
    }
    usable.insert(item.key(), item.value());
  }
  // The skipped names are present in the file: only what the file lacks or adds is an error.
  for (const std::string& name : skipped) usable.insert(name, mine.find(name)->clone());
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
