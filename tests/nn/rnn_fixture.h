// Shared by the recurrent-layer fixture tests (rnn_test.cpp, packed_sequence_test.cpp): a case's
// float64 state dict and initial states, and the check of results and gradients against PyTorch's.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <cohort/cohort.h>
#include <nlohmann/json.hpp>

#include "support/pytorch_fixture.h"

namespace cohort::testing {

// Loads the case's "state_dict" into module (made float64 first).
inline void load_case_state(nn::Module& module, const nlohmann::json& c) {
  module.to(kFloat64);
  nn::StateDict sd;
  for (const auto& [key, value] : c.at("state_dict").items()) sd.insert(key, decode_tensor(value));
  module.load_state_dict(sd);
}

// The case's initial states h0 (and c0) that it has, requiring grad; their names are appended to wrt_names.
inline std::vector<Tensor> initial_states(const nlohmann::json& c, std::vector<std::string>& wrt_names) {
  std::vector<Tensor> hx;
  for (const char* s : {"h0", "c0"})
    if (c.at("initial").contains(s)) {
      hx.push_back(decode_tensor(c.at("initial").at(s)).requires_grad_());
      wrt_names.push_back(s);
    }
  return hx;
}

// Each result against c["results"][its name]; then the gradients of sum(result * c["upstream"][name])
// with respect to x, hx and module's parameters against c["grads"]. wrt_names names x and hx.
inline void expect_results_and_grads(const std::string& name, const nlohmann::json& c, const std::vector<Tensor>& results,
                                     const std::vector<std::string>& result_names, const Tensor& x,
                                     const std::vector<Tensor>& hx, nn::Module& module,
                                     std::vector<std::string> wrt_names) {
  Tensor loss;
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(matches_pytorch(name + " " + result_names[i], results[i], c.at("results").at(result_names[i])));
    Tensor term = (results[i] * decode_tensor(c.at("upstream").at(result_names[i]))).sum();
    loss = loss.defined() ? loss + term : term;
  }
  std::vector<Tensor> wrt{x};
  wrt.insert(wrt.end(), hx.begin(), hx.end());
  for (const auto& item : module.named_parameters()) {
    wrt.push_back(item.value());
    wrt_names.push_back(item.key());
  }
  auto grads = autograd::grad({loss}, wrt);
  for (size_t i = 0; i < wrt.size(); ++i)
    EXPECT_TRUE(matches_pytorch(name + " grad " + wrt_names[i], grads[i], c.at("grads").at(wrt_names[i])));
}

}  // namespace cohort::testing
