// The harness of the libtorch-port programs (tests/compat/*.cpp): the backend switch and the checks.
// Each program must build and pass both against libtorch and against cohort; tests/compat/run.sh
// compiles it twice, and the only difference is the switch below. Do not adapt a program to cohort:
// when libtorch's spelling does not compile against cohort, cohort is what needs fixing.
//
// Every program includes compat.h first: run.sh precompiles it against libtorch, and a precompiled
// header is only used when nothing comes before it.
//
// Inputs are deterministic (no random streams, which differ between the libraries); expected values
// are computed by hand or by a second computation of the same quantity.
#pragma once

#ifdef COMPAT_COHORT
#include <cohort/torch.h>
#else
#include <ATen/autocast_mode.h>  // at::autocast, which <torch/torch.h> does not bring
#include <torch/torch.h>
#endif

#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

namespace compat {

inline int g_checks = 0;
inline int g_failed = 0;

inline void check(bool ok, const std::string& name) {
  ++g_checks;
  if (!ok) {
    ++g_failed;
    std::cerr << "FAILED: " << name << "\n";
  }
}

// Runs one group of checks; an exception fails the group and names it.
inline void section(const char* name, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    ++g_failed;
    std::cerr << "FAILED: section '" << name << "' threw: " << e.what() << "\n";
  }
}

inline bool has_sizes(const torch::Tensor& t, const std::vector<int64_t>& sizes) { return t.sizes() == sizes; }

// Same shape and the same values up to `tol`, compared in float64.
inline bool close(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-6) {
  return a.sizes() == b.sizes() &&
         torch::allclose(a.to(torch::kFloat64), b.to(torch::kFloat64), /*rtol=*/tol, /*atol=*/tol);
}

inline bool near(double a, double b, double tol = 1e-6) { return std::abs(a - b) <= tol * (1.0 + std::abs(b)); }

// Deterministic weights (the random streams differ between the libraries): each parameter filled with
// 0.3 * sin(0.37 * k + offset), the offset counting parameters in order.
inline void fill_weights(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  double offset = 0;
  for (auto& item : m.named_parameters()) {
    auto p = item.value();
    p.copy_(torch::arange(p.numel(), torch::kFloat32).mul(0.37).add(offset).sin().mul(0.3).view_as(p));
    offset += 1;
  }
}

// Prints the program's verdict and returns its exit status.
inline int finish(const char* program) {
  if (g_failed) {
    std::cerr << program << ": " << g_failed << " of " << g_checks << " checks failed\n";
    return 1;
  }
  std::cout << program << ": all " << g_checks << " checks passed\n";
  return 0;
}

}  // namespace compat
