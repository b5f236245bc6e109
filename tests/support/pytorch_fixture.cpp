// Loading PyTorch fixtures and comparing against them.
#include "support/pytorch_fixture.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "support/gradcheck.h"
#include "support/paths.h"

namespace cohort::testing {

using json = nlohmann::json;

const json& load_fixture(const std::string& file) {
  static std::mutex m;
  static std::map<std::string, json> cache;
  std::lock_guard<std::mutex> l(m);
  auto it = cache.find(file);
  if (it != cache.end()) return it->second;
  const std::string path = cohort::testing::fixtures_dir() + "/" + file;
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open the fixture " + path);
  return cache.emplace(file, json::parse(f)).first->second;
}

DType dtype_named(const std::string& name) {
  for (DType t : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kBFloat16, kFloat16})
    if (name == dtype_name(t)) return t;
  throw std::runtime_error("unknown dtype " + name);
}

// "nan", "inf", "-inf": the values JSON cannot spell.
static double non_finite(const std::string& s) {
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::runtime_error("a fixture value must be a number, nan, inf or -inf, got \"" + s + "\"");
}

Tensor decode_tensor(const json& entry) {
  DType dtype = entry.contains("dtype") ? dtype_named(entry.at("dtype")) : kFloat64;
  // bfloat16 and float16 values are written exactly, so they go through float64 unchanged.
  if (is_reduced_floating_point(dtype)) {
    json wide = entry;
    wide["dtype"] = "float64";
    return decode_tensor(wide).to(dtype);
  }
  Tensor t = empty(entry.at("shape").get<Shape>(), TensorOptions(dtype));
  const json& data = entry.at("data");
  dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_ptr<T>();
    for (size_t i = 0; i < data.size(); ++i)
      p[i] = data[i].is_boolean() ? static_cast<T>(data[i].get<bool>())
             : data[i].is_string()  ? static_cast<T>(non_finite(data[i].get<std::string>()))
                                    : static_cast<T>(data[i].get<double>());
  });
  return t;
}

::testing::AssertionResult matches_pytorch(const std::string& what, const Tensor& got, const json& want, double tol) {
  NoGradGuard no_grad;
  if (!got.defined()) return ::testing::AssertionFailure() << what << ": undefined";
  if (want.contains("dtype") && dtype_name(got.dtype()) != want.at("dtype").get<std::string>())
    return ::testing::AssertionFailure() << what << ": dtype " << got.dtype() << ", expected " << want.at("dtype");
  Tensor w = decode_tensor(want).to(kFloat64);
  if (got.sizes() != w.sizes())
    return ::testing::AssertionFailure() << what << ": shape " << got.sizes() << ", expected " << w.sizes();
  Tensor g = got.detach().to(kFloat64).contiguous();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double a = g.data_ptr<double>()[i], e = w.data_ptr<double>()[i];
    const bool ok = std::isnan(e) ? std::isnan(a) : std::isinf(e) ? a == e : std::abs(a - e) <= tol * (1 + std::abs(e));
    if (!ok)
      return ::testing::AssertionFailure() << what << ", element " << index_string(w.sizes(), i) << ": expected " << e
                                           << " (PyTorch), got " << a;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace cohort::testing
