// What a trained model knows of its data: the kind of input, the class names, the input's shape and
// normalisation. Checkpoints carry it, so `cohort predict`, `export` and `generate` prepare new
// inputs exactly as training did without the training data being present (a model copied to
// another machine works there).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "cohort/data/dataset.h"

namespace cohort::app {

enum class DataKind { kImages, kTable, kText };

struct DataSpec {
  DataKind kind = DataKind::kImages;
  std::vector<std::string> classes;       // class names; for text the vocabulary's characters (bytes)
  int64_t channels = 1, image_size = 28;  // a table: channels = its features, image_size 1; text: seq_len
  std::vector<double> mean, std;          // per image channel (after ToTensor) or per table feature
  std::vector<std::string> features;      // a table's feature columns, in the model's input order
};

const char* data_kind_name(DataKind kind);  // "images", "table", "text"
const char* sample_unit(DataKind kind);     // what a sample is called: "images", "rows", "characters"

// Names that are not UTF-8 (a folder named in Latin-1, a vocabulary byte of a multi-byte character)
// are stored as their bytes, so the round trip is exact.
nlohmann::json to_json(const DataSpec& spec);
// Throws cohort::Error starting with `where` for a value of the wrong type or out of range.
DataSpec data_spec_from_json(const nlohmann::json& j, const std::string& where);

// The transform from a dataset's raw example (uint8 [H, W, C] image, float32 table row, int64
// character ids) to the model's input: an image of another size resized to the model's (bilinear
// with antialias, torchvision's Resize), then ToTensor and Normalize; a table row standardised into
// [F, 1, 1]; text as it is.
data::Transform inference_transform(const DataSpec& spec);

// A batch of n inputs of the model's shape (zeros), for tracing the model.
Tensor example_input(const DataSpec& spec, int64_t n);

}  // namespace cohort::app
