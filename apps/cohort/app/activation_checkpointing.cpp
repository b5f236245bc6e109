// Which models checkpoint their activations, and turning it on (see activation_checkpointing.h).
#include "app/activation_checkpointing.h"

#include "app/config.h"
#include "cohort/models/char_transformer.h"
#include "cohort/models/resnet.h"

namespace cohort::app {

const std::vector<std::string>& models_with_checkpoint_activations() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const std::string& name : models::names())
      if (name.starts_with("resnet") || name == "char-transformer") n.push_back(name);
    return n;
  }();
  return names;
}

void enable_checkpoint_activations(models::Model& model) {
  if (auto* resnet = dynamic_cast<models::ResNet*>(&model)) {
    resnet->set_checkpoint_activations(true);
  } else if (auto* transformer = dynamic_cast<models::CharTransformer*>(&model)) {
    transformer->set_checkpoint_activations(true);
  } else {
    throw UsageError(detail::str("cohort train: --checkpoint-activations is not supported by model ", model.arch(),
                                 "; the models that support it: ", join_names(models_with_checkpoint_activations())));
  }
}

}  // namespace cohort::app
