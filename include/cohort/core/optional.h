// libtorch's spellings torch::optional and torch::nullopt, which its data API uses
// (`torch::optional<size_t> size() const override` in every custom dataset). They are std::optional.
#pragma once

#include <optional>

namespace cohort {

using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using std::optional;

}  // namespace cohort
