// DataSpec: its JSON form and the inference transform it implies.
#include "app/data_spec.h"
#include "app/json_text.h"

#include <nlohmann/json.hpp>

#include "cohort/core/error.h"
#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"

namespace cohort::app {

namespace tf = data::transforms;

namespace {

nlohmann::json name_to_json(const std::string& name) {
  nlohmann::json j = name;
  try {
    (void)j.dump();  // throws for bytes that are not UTF-8
    return j;
  } catch (const nlohmann::json::type_error&) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(name.data());
    return {{"bytes", std::vector<int>(bytes, bytes + name.size())}};
  }
}

std::string name_from_json(const nlohmann::json& j, const std::string& where) {
  if (j.is_string()) return j.get<std::string>();
  COHORT_CHECK(j.is_object() && j.contains("bytes") && j.at("bytes").is_array(), where,
               "a name must be a string or {\"bytes\": [...]}, got ", escape_text(json_text(j)));
  std::string name;
  for (const auto& b : j.at("bytes")) {
    COHORT_CHECK(b.is_number_integer() && b.get<int64_t>() >= 0 && b.get<int64_t>() <= 255, where,
                 "a name's bytes must be 0 to 255");
    name.push_back(static_cast<char>(b.get<int64_t>()));
  }
  return name;
}

std::vector<std::string> names_from_json(const nlohmann::json& j, const std::string& key, const std::string& where) {
  COHORT_CHECK(j.at(key).is_array(), where, "'", key, "' must be an array");
  std::vector<std::string> out;
  for (const auto& item : j.at(key)) out.push_back(name_from_json(item, where));
  return out;
}

int64_t positive_at(const nlohmann::json& j, const std::string& key, const std::string& where) {
  COHORT_CHECK(j.at(key).is_number_integer() && j.at(key).get<int64_t>() >= 1, where, "'", key,
               "' must be a positive integer");
  return j.at(key).get<int64_t>();
}

}  // namespace

const char* sample_unit(DataKind kind) {
  switch (kind) {
    case DataKind::kImages: return "images";
    case DataKind::kTable: return "rows";
    case DataKind::kText: return "characters";
  }
  return "?";
}

const char* data_kind_name(DataKind kind) {
  switch (kind) {
    case DataKind::kImages: return "images";
    case DataKind::kTable: return "table";
    case DataKind::kText: return "text";
  }
  return "?";
}

nlohmann::json to_json(const DataSpec& spec) {
  nlohmann::json classes = nlohmann::json::array(), features = nlohmann::json::array();
  for (const auto& c : spec.classes) classes.push_back(name_to_json(c));
  for (const auto& f : spec.features) features.push_back(name_to_json(f));
  return {{"kind", data_kind_name(spec.kind)}, {"classes", classes},   {"channels", spec.channels},
          {"image_size", spec.image_size},     {"mean", spec.mean},    {"std", spec.std},
          {"features", features}};
}

DataSpec data_spec_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    COHORT_CHECK(j.is_object(), where, "the data description must be an object");
    DataSpec s;
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "images") s.kind = DataKind::kImages;
    else if (kind == "table") s.kind = DataKind::kTable;
    else if (kind == "text") s.kind = DataKind::kText;
    else throw Error(where + "unknown data kind '" + escape_text(kind) + "' (images, table or text)");
    s.classes = names_from_json(j, "classes", where);
    COHORT_CHECK(!s.classes.empty(), where, "'classes' is empty");
    s.channels = positive_at(j, "channels", where);
    s.image_size = positive_at(j, "image_size", where);
    s.mean = j.at("mean").get<std::vector<double>>();
    s.std = j.at("std").get<std::vector<double>>();
    s.features = names_from_json(j, "features", where);
    const size_t per = s.kind == DataKind::kText ? 0 : static_cast<size_t>(s.channels);
    COHORT_CHECK(s.mean.size() == per && s.std.size() == per, where, "'mean' and 'std' must hold ", per,
                 " values, got ", s.mean.size(), " and ", s.std.size());
    for (double v : s.std) COHORT_CHECK(v > 0, where, "'std' values must be positive, got ", v);
    COHORT_CHECK(s.kind != DataKind::kTable || s.features.size() == per, where, "a table's 'features' must name its ",
                 per, " columns, got ", s.features.size());
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + escape_text(e.what()));
  }
}

data::Transform inference_transform(const DataSpec& spec) {
  switch (spec.kind) {
    case DataKind::kImages: {
      const int64_t size = spec.image_size;
      auto fit = [size](const Tensor& image, Generator& gen) {
        if (image.size(0) == size && image.size(1) == size) return image;
        return tf::Resize({size, size})(image, gen);
      };
      return tf::Compose({fit, tf::ToTensor(), tf::Normalize(spec.mean, spec.std)});
    }
    case DataKind::kTable: {
      const Tensor mean = tensor(spec.mean).to(kFloat32), std = tensor(spec.std).to(kFloat32);
      return [mean, std](const Tensor& x, Generator&) { return ((x - mean) / std).view({-1, 1, 1}); };
    }
    case DataKind::kText: return [](const Tensor& x, Generator&) { return x; };
  }
  return {};
}

Tensor example_input(const DataSpec& spec, int64_t n) {
  if (spec.kind == DataKind::kText) return zeros({n, spec.image_size}, kInt64);
  return zeros({n, spec.channels, spec.image_size, spec.image_size});
}

}  // namespace cohort::app
