// The model registry (name -> constructor) and what every zoo model shares: option checks, the
// input check, hooks around forward, and deep copies built from a fresh model plus a state dict.
#include <functional>
#include <ostream>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/models/blitz_cnn.h"
#include "cohort/models/char_lstm.h"
#include "cohort/models/char_transformer.h"
#include "cohort/models/lenet.h"
#include "cohort/models/mlp.h"
#include "cohort/models/model.h"
#include "cohort/nn/init.h"
#include "cohort/models/resnet.h"

namespace cohort::models {

namespace {

struct Entry {
  const char* name;
  std::function<std::shared_ptr<Model>(const ModelOptions&)> make;
};

// Adding a model adds a line here (and its files; see src/models/README.md).
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"lenet", [](const ModelOptions& o) { return std::make_shared<LeNet>(o); }},
      {"blitz-cnn", [](const ModelOptions& o) { return std::make_shared<BlitzCNN>(o); }},
      {"resnet18", [](const ModelOptions& o) { return std::make_shared<ResNet>(o, std::array<int64_t, 4>{2, 2, 2, 2}); }},
      {"resnet34", [](const ModelOptions& o) { return std::make_shared<ResNet>(o, std::array<int64_t, 4>{3, 4, 6, 3}); }},
      {"resnet50",
       [](const ModelOptions& o) {
         return std::make_shared<ResNet>(o, std::array<int64_t, 4>{3, 4, 6, 3}, ResNetBlock::Bottleneck);
       }},
      {"mlp", [](const ModelOptions& o) { return std::make_shared<MLP>(o); }},
      {"char-lstm", [](const ModelOptions& o) { return std::make_shared<CharLSTM>(o); }},
      {"char-transformer", [](const ModelOptions& o) { return std::make_shared<CharTransformer>(o); }},
  };
  return entries;
}

std::string joined_names() {
  std::string s;
  for (const auto& name : names()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const ModelOptions& o) {
  return os << "ModelOptions(in_channels=" << o.in_channels() << ", num_classes=" << o.num_classes()
            << ", image_size=" << o.image_size() << ")";
}

Model::Model(std::string arch, const ModelOptions& options) : arch_(std::move(arch)), options_(options) {
  COHORT_CHECK(options.in_channels() > 0, arch_, ": in_channels must be positive, got ", options.in_channels());
  COHORT_CHECK(options.num_classes() > 0, arch_, ": num_classes must be positive, got ", options.num_classes());
  COHORT_CHECK(options.image_size() > 0, arch_, ": image_size must be positive, got ", options.image_size());
}

Tensor Model::operator()(const Tensor& x) {
  return call_with_hooks({x}, [&](const std::vector<Tensor>& args) { return forward(args[0]); });
}

void Model::check_input(const Tensor& x, bool exact_size) const {
  const ModelOptions& o = options_;
  const bool ok = x.dim() == 4 && x.size(1) == o.in_channels() &&
                  (!exact_size || (x.size(2) == o.image_size() && x.size(3) == o.image_size()));
  if (ok) return;
  std::ostringstream want, hint;
  want << "[N, " << o.in_channels() << ", ";
  if (exact_size) {
    want << o.image_size() << ", " << o.image_size() << "]";
  } else {
    want << "H, W]";
  }
  if (x.dim() == 4 && (!exact_size || x.size(2) == x.size(3))) {
    hint << "; hint: build it with ModelOptions().in_channels(" << x.size(1) << ")";
    if (exact_size) hint << ".image_size(" << x.size(2) << ")";
    hint << " for such images";
  } else if (x.dim() == 3) {
    hint << "; hint: a single image needs a batch dimension, x.unsqueeze(0)";
  }
  throw Error(detail::str(arch_, ": expected input ", want.str(), ", got ", x.sizes(), hint.str()));
}

std::shared_ptr<Model> Model::clone_model(const std::optional<Device>& device) const {
  // create_fresh()'s initial values are overwritten by load_state_dict at once: the initialisers
  // skip their draws (ResNet-18 spent 0.9 s on them per copy), and the caller's random stream is
  // kept in any case, or a run with replicas would shuffle its data differently.
  Generator& generator = default_generator();
  const std::string generator_state = generator.get_state();
  std::shared_ptr<Model> copy;
  try {
    nn::init::SkipRandomInitGuard skip;
    copy = create_fresh();
  } catch (...) {
    generator.set_state(generator_state);
    throw;
  }
  generator.set_state(generator_state);

  // Match this model's dtype and device first, so that load_state_dict copies values as they are.
  const std::vector<Tensor> mine = parameters();
  if (!mine.empty()) {
    copy->to(device.value_or(mine.front().device()), mine.front().dtype());
  } else if (device) {
    copy->to(*device);
  }
  copy->load_state_dict(state_dict(), /*strict=*/true);
  nn::StateDict theirs = copy->named_parameters();
  for (const auto& item : named_parameters())
    if (Tensor* p = theirs.find(item.key())) p->requires_grad_(item.value().requires_grad());
  copy->train(is_training());
  return copy;
}

std::shared_ptr<nn::Module> Model::clone(const std::optional<Device>& device) const { return clone_model(device); }

std::shared_ptr<Model> create(const std::string& name, const ModelOptions& options) {
  for (const Entry& entry : registry())
    if (name == entry.name) return entry.make(options);
  throw Error(detail::str("models::create: unknown model name, got '", name, "'; hint: the known models are ",
                          joined_names()));
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const Entry& entry : registry()) out.emplace_back(entry.name);
  return out;
}

}  // namespace cohort::models
