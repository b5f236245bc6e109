// The message of the cohort::Error that f throws, or "<no error>": error messages are part of the API
// and the tests check them with HasSubstr.
#pragma once

#include <functional>
#include <string>

#include "cohort/core/error.h"

namespace cohort::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace cohort::testing
