// cohort predict (see predict.h): inputs become a dataset the DataLoader batches (images are decoded
// and resized in its workers), the model runs in eval mode without autograd, softmax gives the probabilities.
#include "app/predict.h"
#include "app/json_text.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "app/config.h"
#include "app/data_setup.h"
#include "app/flag_check.h"
#include "app/run_checkpoint.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/threads.h"
#include "cohort/data/csv.h"
#include "cohort/data/dataloader.h"
#include "cohort/data/vision_transforms.h"
#include "cohort/io/image_decode.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/sorting.h"

namespace cohort::app {

namespace {

// One example per input: a table's rows (already read) or image files (decoded on get).
class PredictionInputs : public data::IndexedDataset {
 public:
  std::vector<std::string> names;  // what each example is called in the output
  Tensor rows;                     // float32 [N, F] for a table
  std::vector<std::string> images; // paths otherwise
  int64_t channels = 1, image_size = 28;

  int64_t size() const override { return static_cast<int64_t>(names.size()); }
  data::Example<> get(int64_t index) const override {
    const Tensor target = scalar_tensor(int64_t{0}, kInt64);
    if (rows.defined()) return {rows[index], target};
    return {fit_image(images[static_cast<size_t>(index)]), target};
  }

 private:
  // uint8 [H, W, C] in the model's channels (PIL's conversions) and size (bilinear with antialias,
  // torchvision's Resize; big JPEGs are decoded at a reduced scale first), the training images' layout.
  Tensor fit_image(const std::string& path) const {
    const auto options = io::ImageReadOptions()
                             .mode(channels == 1 ? io::ImageMode::kGray : io::ImageMode::kRGB)
                             .min_size(image_size);
    Tensor image = io::read_image(path, options);
    if (image.size(0) == image_size && image.size(1) == image_size) return image;
    Generator unused;  // Resize draws nothing
    return data::transforms::Resize({image_size, image_size})(image, unused);
  }
};

PredictionInputs inputs_of(const PredictOptions& o, const DataSpec& data) {
  PredictionInputs in;
  in.channels = data.channels;
  in.image_size = data.image_size;
  COHORT_CHECK(data.kind != DataKind::kText, "cohort predict: the checkpoint is a language model; hint: use "
               "cohort generate --checkpoint DIR --prompt TEXT");
  if (data.kind == DataKind::kImages) {
    in.images = o.inputs;
    in.names = o.inputs;
    return in;
  }
  std::vector<Tensor> parts;
  for (const std::string& file : o.inputs) {
    Tensor x = data::read_csv_columns(file, data.features);
    for (int64_t r = 0; r < x.size(0); ++r) in.names.push_back(file + ":" + std::to_string(r + 2));
    parts.push_back(x);
  }
  in.rows = cat(parts, 0);
  return in;
}

}  // namespace

int run_predict(const PredictOptions& o, std::ostream& out) {
  if (o.inputs.empty()) throw UsageError("cohort predict: no inputs; hint: name image files (or CSV files for a table)");
  if (o.top_k < 1) throw UsageError(cohort::detail::str("cohort predict: --top-k must be at least 1, got ", o.top_k));
  if (o.batch_size < 1)
    throw UsageError(cohort::detail::str("cohort predict: --batch-size must be at least 1, got ", o.batch_size));
  use_threads_flag(o.threads, "cohort predict");

  Checkpoint checkpoint = read_checkpoint(o.checkpoint);
  TrainConfig config = checkpoint.config;
  if (!o.data_dir.empty()) config.data_dir = std::filesystem::absolute(o.data_dir).string();
  const DataSpec data = stored_or_loaded_spec(checkpoint.data, config, "cohort predict");
  auto model = create_model(config.model, data);
  restore_weights(checkpoint, *model);
  model->eval();

  auto inputs = std::make_shared<PredictionInputs>(inputs_of(o, data));
  const int64_t k = std::min<int64_t>(o.top_k, static_cast<int64_t>(data.classes.size()));
  data::DataLoader loader(inputs, data::DataLoaderOptions().batch_size(o.batch_size).transform(inference_transform(data)).seed(0));
  nlohmann::json predictions = nlohmann::json::array();
  NoGradGuard no_grad;
  for (const data::Batch& batch : loader) {
    auto [p, index] = topk(softmax(model->forward(batch.data), 1), k, 1);
    for (int64_t i = 0; i < p.size(0); ++i) {
      const std::string& name = inputs->names[static_cast<size_t>(batch.indices[static_cast<size_t>(i)])];
      nlohmann::json top = nlohmann::json::array();
      if (!o.json) out << escape_text(name) << ":";
      for (int64_t j = 0; j < k; ++j) {
        const int64_t c = index[i][j].item<int64_t>();
        const double prob = p[i][j].item<double>();
        const std::string& cls = data.classes[static_cast<size_t>(c)];
        top.push_back({{"class", cls}, {"index", c}, {"probability", prob}});
        if (!o.json) out << (j ? ", " : " ") << escape_text(cls) << " " << std::fixed << std::setprecision(1) << 100 * prob << "%";
      }
      if (!o.json) out << "\n";
      predictions.push_back({{"input", name}, {"top", top}});
    }
  }
  if (o.json)
    out << json_text({{"checkpoint", checkpoint.path.string()}, {"predictions", predictions}}, 2)
        << "\n";
  return 0;
}

}  // namespace cohort::app
