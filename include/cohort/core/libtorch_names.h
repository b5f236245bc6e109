// Names that libtorch programs use and cohort spells otherwise, so that such a program ports by
// changing its include and `namespace torch = cohort;`:
//   TORCH_CHECK(x.dim() == 2, "expected a matrix, got ", x.sizes());   // throws cohort::Error
//   TORCH_CHECK(ok);                        // "Expected ok to be true, but got false."
//   AT_ASSERT(invariant);  TORCH_INTERNAL_ASSERT(invariant, "why");     // a bug, not a user error
//   TORCH_WARN("deprecated: ", what);      // a line on stderr
//   torch::str("n=", 3)                     // "n=3"
//   torch::optional<int64_t> o = torch::nullopt;
//   torch::cuda::is_available()             // false: cohort runs on CPU devices (cpu:0, cpu:1, ...)
// Macros are what libtorch's API is here; cohort's own code uses COHORT_CHECK (core/error.h).
#pragma once

#include <iostream>
#include <string>

#include "cohort/core/error.h"
#include "cohort/core/optional.h"  // torch::optional, torch::nullopt

namespace cohort {

// The arguments streamed into one string.
template <class... Args>
std::string str(const Args&... args) {
  return detail::str(args...);
}

// CUDA does not exist in cohort. Programs that choose their device at run time ask these and get
// the CPU; a Device of type kCUDA is refused where it is made (core/device.h).
namespace cuda {
inline bool is_available() { return false; }
inline int64_t device_count() { return 0; }
inline bool cudnn_is_available() { return false; }
// Seeding CUDA generators that do not exist does nothing, as in libtorch without CUDA.
inline void manual_seed(uint64_t /*seed*/) {}
inline void manual_seed_all(uint64_t /*seed*/) {}
inline void synchronize(int64_t /*device_index*/ = -1) {}
}  // namespace cuda

namespace detail {
// TORCH_CHECK's message: the streamed arguments, or libtorch's default when there are none.
template <class... Args>
std::string check_message(const char* condition, const Args&... args) {
  std::string message = str(args...);
  if (message.empty()) return std::string("Expected ") + condition + " to be true, but got false.";
  return message;
}
}  // namespace detail

}  // namespace cohort

// The trailing "" lets the message be omitted without a C++20 __VA_OPT__.
#define TORCH_CHECK(...) COHORT_TORCH_CHECK_AS_(::cohort::Error, __VA_ARGS__, "")
#define TORCH_CHECK_INDEX(...) COHORT_TORCH_CHECK_AS_(::cohort::IndexError, __VA_ARGS__, "")
#define TORCH_CHECK_TYPE(...) COHORT_TORCH_CHECK_AS_(::cohort::TypeError, __VA_ARGS__, "")
#define TORCH_CHECK_VALUE(...) COHORT_TORCH_CHECK_AS_(::cohort::Error, __VA_ARGS__, "")
#define COHORT_TORCH_CHECK_AS_(ErrorType, cond, ...)                                     \
  do {                                                                                 \
    if (!(cond)) throw ErrorType(::cohort::detail::check_message(#cond, __VA_ARGS__)); \
  } while (0)

#define TORCH_INTERNAL_ASSERT(...) COHORT_TORCH_ASSERT_(__VA_ARGS__, "")
#define AT_ASSERT(...) COHORT_TORCH_ASSERT_(__VA_ARGS__, "")
#define COHORT_TORCH_ASSERT_(cond, ...)                                                                 \
  do {                                                                                                  \
    if (!(cond))                                                                                        \
      throw ::cohort::Error(::cohort::detail::str("internal assertion failed: ", #cond, " at ", __FILE__, \
                                                  ":", __LINE__, ". ", __VA_ARGS__));                   \
  } while (0)

#define AT_ERROR(...) throw ::cohort::Error(::cohort::detail::str(__VA_ARGS__))
#define TORCH_WARN(...) (std::cerr << "Warning: " << ::cohort::detail::str(__VA_ARGS__) << '\n')
#define TORCH_WARN_ONCE(...)                            \
  do {                                                  \
    static const bool cohort_warned_once_ = [&] {       \
      TORCH_WARN(__VA_ARGS__);                          \
      return true;                                      \
    }();                                                \
    (void)cohort_warned_once_;                          \
  } while (0)
