// IValue: one value of a few kinds, as libtorch's at::IValue is used by custom autograd functions
// (AutogradContext::saved_data) and libtorch programs:
//   ctx->saved_data["scale"] = 2.5;             // double
//   ctx->saved_data["dim"] = 1;                 // int64
//   double s = ctx->saved_data["scale"].toDouble();
// Holds None (default), double, int64 (any integer type), bool, string, Tensor or a list of int64
// (sizes). to*() of another kind throws cohort::TypeError naming both kinds; there are no implicit
// conversions between kinds (toDouble() of an int throws, as libtorch's does).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

class IValue {
 public:
  IValue() = default;
  IValue(double v) : value_(v) {}                                              // NOLINT
  IValue(bool v) : value_(v) {}                                                // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : value_(static_cast<int64_t>(v)) {}                             // NOLINT
  IValue(float v) : value_(static_cast<double>(v)) {}                          // NOLINT
  IValue(std::string v) : value_(std::move(v)) {}                              // NOLINT
  IValue(const char* v) : value_(std::string(v)) {}                            // NOLINT
  IValue(Tensor v) : value_(std::move(v)) {}                                   // NOLINT
  IValue(std::vector<int64_t> v) : value_(std::move(v)) {}                     // NOLINT
  IValue(IntArrayRef v) : value_(v.vec()) {}                                   // NOLINT

  bool isNone() const { return value_.index() == 0; }
  bool isDouble() const { return std::holds_alternative<double>(value_); }
  bool isInt() const { return std::holds_alternative<int64_t>(value_); }
  bool isBool() const { return std::holds_alternative<bool>(value_); }
  bool isString() const { return std::holds_alternative<std::string>(value_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(value_); }
  bool isIntList() const { return std::holds_alternative<std::vector<int64_t>>(value_); }

  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  // libtorch's kind names: "None", "Double", "Int", "Bool", "String", "Tensor", "IntList".
  const char* tagKind() const;

 private:
  template <class T>
  const T& get(const char* kind) const {
    if (const T* v = std::get_if<T>(&value_)) return *v;
    throw_wrong_kind(kind);
  }
  [[noreturn]] void throw_wrong_kind(const char* wanted) const;

  std::variant<std::monostate, double, int64_t, bool, std::string, Tensor, std::vector<int64_t>> value_;
};

}  // namespace cohort
